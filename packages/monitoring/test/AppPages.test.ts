// The app UI's pages, rendered from a folded status without a server: whatever text an app's events carry is
// shown escaped, and the stage page's tasks are paged as asked.
import { assert, describe, it } from "@effect/vitest"
import type { AppEvents } from "@kindling/app"
import { AppPages, AppStatus } from "@kindling/monitoring"
import { FastCheck as fc } from "effect"

type Event = AppEvents.AppEvent

const html = (response: { readonly body: unknown }) =>
  new TextDecoder().decode((response.body as { readonly body: Uint8Array }).body)

// One job of one stage on one executor, its texts — names, description, error, host, dataset — the given ones.
const history = (text: (what: string) => string, tasks: number): Array<Event> => {
  const dataset = { id: 0, name: text("dataset"), operation: "map", parentIds: [], numPartitions: tasks }
  const events: Array<Event> = [
    { _tag: "ExecutorAdded", executorId: "1", host: text("host"), cores: 2, time: 0 },
    {
      _tag: "JobStart",
      jobId: 0,
      stageIds: [0],
      stages: [{ stageId: 0, name: text("stage"), numTasks: tasks, parentIds: [], datasets: [dataset] }],
      pool: "default",
      description: text("description"),
      time: 1
    },
    { _tag: "StageSubmitted", stageId: 0, stageAttempt: 0, name: text("stage"), tasks, parentIds: [], time: 1 }
  ]
  for (let i = 0; i < tasks; i++) {
    events.push(
      {
        _tag: "TaskStart",
        stageId: 0,
        stageAttempt: 0,
        taskId: i,
        index: i,
        executorId: "1",
        locality: "ANY",
        time: 2
      },
      {
        _tag: "TaskEnd",
        stageId: 0,
        stageAttempt: 0,
        taskId: i,
        succeeded: i % 2 === 0,
        ...(i % 2 === 0 ? {} : { reason: text("error") }),
        metrics: { duration: i },
        time: 3 + i
      }
    )
  }
  events.push({
    _tag: "BlockUpdated",
    executorId: "1",
    blockId: "rdd_0_0",
    storageLevel: "MEMORY_ONLY",
    memSize: 10,
    diskSize: 0,
    time: 5
  })
  return events
}

const folded = (events: ReadonlyArray<Event>) => {
  const status = AppStatus.make()
  for (const event of events) AppStatus.apply(status, event)
  return status
}

describe("AppPages", () => {
  it("any text of an app's events is shown escaped on every page, never as markup", () => {
    const hostile = fc.string({ unit: fc.constantFrom("<", ">", "&", "\"", "'", "a", " ", "/", "=") })
    fc.assert(
      fc.property(hostile, (noise) => {
        const text = (what: string) => `${noise}<x-inject data-what="${what}">${noise}`
        const status = folded(history(text, 3))
        const app = { name: text("app"), master: "local", user: text("user"), startTime: 0 }
        const job = status.jobs.get(0)!
        const stage = status.stages.get(AppStatus.stageKey(0, 0))!
        const pages = {
          jobs: AppPages.jobsPage(status, app, "app-1", 10, true),
          job: AppPages.jobPage(status, app, job, 10),
          stages: AppPages.stagesPage(status, app, 10),
          stage: AppPages.stagePage(status, app, stage, {}, 10),
          executors: AppPages.executorsPage(status, app),
          storage: AppPages.storagePage(status, app),
          dataset: AppPages.datasetPage(status, app, status.storage.get(0)!)
        }
        for (const [name, page] of Object.entries(pages)) {
          const body = html(page)
          assert.notInclude(body, "<x-inject", name)
          assert.include(body, "&lt;x-inject", name)
        }
        // Each text is where it belongs, escaped.
        assert.include(html(pages.stage), "&lt;x-inject data-what=&quot;error&quot;&gt;")
        assert.include(html(pages.executors), "&lt;x-inject data-what=&quot;host&quot;&gt;")
        assert.include(html(pages.jobs), "&lt;x-inject data-what=&quot;description&quot;&gt;")
        assert.include(html(pages.storage), "&lt;x-inject data-what=&quot;dataset&quot;&gt;")
      }),
      { numRuns: 30 }
    )
  })

  it("the stage page shows the page of tasks asked for, of the pages its size makes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 25 }), fc.nat(5), (tasks, size, at) => {
        const status = folded(history((what) => what, tasks))
        const stage = status.stages.get(AppStatus.stageKey(0, 0))!
        const pages = Math.ceil(tasks / size)
        const page = 1 + (at % pages)
        const body = html(AppPages.stagePage(status, { name: "a", master: "m", user: "u", startTime: 0 }, stage, {
          page,
          pageSize: size
        }, 100))
        assert.include(body, `Page ${page} of ${pages} (${tasks} tasks)`)
        const table = body.slice(body.indexOf("<table id=\"tasks\">"))
        const rows = table.slice(table.indexOf("<tbody>"), table.indexOf("</tbody>")).split("<tr").length - 1
        assert.strictEqual(rows, Math.min(size, tasks - (page - 1) * size))
        assert.include(
          body,
          `${Math.ceil(tasks / 2)} succeeded, 0 running, ${Math.floor(tasks / 2)} failed of ${tasks}`
        )
      }),
      { numRuns: 40 }
    )
  })
})
