// The web UIs in a real browser (Debian's chromium driven by playwright-core): a master and two workers, an app
// with a shuffle, a supervised driver. Clicking through from the master page reaches a worker, an executor's
// log and the app's UI (its job, two stages, the DAG, the task table, its executors' logs); the app UI follows a
// new job without a reload; the master page's kill button stops the driver. Screenshots of each page go to
// test-output/browser/.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import {
  app,
  eventually,
  forever,
  root,
  run,
  start,
  startMaster,
  startWorker,
  submitArgs,
  temporaryDirectory
} from "./fixtures/cluster.js"
import { executorsRegistered, uiApp, uiUrl } from "./fixtures/ui.js"

// The Debian package's browser (`.ci/run` installs it); never a downloaded one.
const executablePath = process.env["KINDLING_CHROMIUM"] ?? "/usr/bin/chromium"
const screenshots = Path.join(root, "test-output", "browser")

const browser = Effect.acquireRelease(
  Effect.promise(() => chromium.launch({ executablePath, args: ["--no-sandbox"] })),
  (opened: Browser) => Effect.promise(() => opened.close())
)

const step = <A>(page: Page, what: (page: Page) => Promise<A>) => Effect.promise(() => what(page))
const shoot = (page: Page, name: string) =>
  step(page, (p) => p.screenshot({ path: Path.join(screenshots, `${name}.png`), fullPage: true }))

describe("the web UIs in a browser", () => {
  it.scopedLive(
    "master → worker → executor log; master → app UI → job DAG → stage tasks; live updates; kill",
    () =>
      Effect.gen(function*() {
        assert.isTrue(Fs.existsSync(executablePath), `no browser at ${executablePath} (apt-get install chromium)`)
        Fs.mkdirSync(screenshots, { recursive: true })
        const dir = yield* temporaryDirectory
        const master = yield* startMaster()
        const masterUi = yield* uiUrl(master.node, "master")
        yield* startWorker(master.url, `${dir}/worker-0`)
        yield* startWorker(master.url, `${dir}/worker-1`)
        const submitted = yield* run(
          submitArgs(master.url, "--supervise", app(dir, "forever.mjs", forever), `${dir}/pids`)
        )
        const driverId = submitted.stdout.trim()
        const done = `${dir}/done`
        const client = yield* start(["submit", "--master", master.url, ...uiApp.conf, uiApp.path(dir), done])
        const appUi = yield* uiUrl(client, "app")
        yield* client.waitFor(/shuffled: 13 keys/, 60_000)
        // Both workers run one of its executors (the driver takes a core of one): both registered.
        yield* executorsRegistered(appUi, 2)
        yield* eventually(
          master.url,
          (state) => state.activeDrivers.find((d) => d.id === driverId && d.state === "RUNNING")
        )

        const page = yield* Effect.flatMap(
          browser,
          (opened) => Effect.promise(() => opened.newPage({ viewport: { width: 1400, height: 900 } }))
        )
        page.on("dialog", (dialog) => void dialog.accept())

        // The master page: both workers, the app, the driver.
        yield* step(page, (p) => p.goto(masterUi))
        assert.strictEqual(yield* step(page, (p) => p.locator("#workers tbody tr").count()), 2)
        assert.include(yield* step(page, (p) => p.locator("#running-apps").innerText()), "ui-app.ts")
        assert.include(yield* step(page, (p) => p.locator("#running-drivers").innerText()), driverId)
        yield* shoot(page, "master")

        // A worker running an executor, and that executor's stderr.
        const workerLinks = yield* step(page, (p) => p.locator("#workers tbody tr td:first-child a").all())
        let found = false
        for (const workerLink of workerLinks) {
          yield* step(page, (p) => p.goto(masterUi))
          yield* step(page, () => workerLink.click())
          if ((yield* step(page, (p) => p.locator("#running-executors tbody tr").count())) === 0) continue
          found = true
          yield* shoot(page, "worker")
          yield* step(
            page,
            (p) => p.locator("#running-executors").getByRole("link", { name: "stderr" }).first().click()
          )
          assert.include(
            yield* step(page, (p) => p.locator("pre.log").innerText()),
            "Successfully registered with driver"
          )
          yield* shoot(page, "executor-log")
          break
        }
        assert.isTrue(found, "no worker page lists a running executor")

        // The app's UI, reached from the master page: its job, the DAG with two stage boxes, the tasks.
        yield* step(page, (p) => p.goto(masterUi))
        yield* step(page, (p) => p.locator("#running-apps").getByRole("link", { name: "ui-app.ts" }).click())
        assert.strictEqual(new URL(page.url()).origin, new URL(appUi).origin)
        assert.strictEqual(yield* step(page, (p) => p.locator("#completed-jobs tbody tr").count()), 1)
        yield* step(page, (p) => p.locator("#completed-jobs tbody tr a").first().click())
        assert.strictEqual(yield* step(page, (p) => p.locator("svg.dag g.cluster").count()), 2)
        assert.strictEqual(yield* step(page, (p) => p.locator("#job-stages tbody tr").count()), 2)
        yield* shoot(page, "app-job")
        yield* step(page, (p) => p.locator("#job-stages tbody tr").last().getByRole("link").click())
        assert.strictEqual(yield* step(page, (p) => p.locator("#tasks tbody tr").count()), 4)
        assert.include(yield* step(page, (p) => p.locator("#summary-metrics").innerText()), "Shuffle Write Size")
        yield* shoot(page, "app-stage")

        // The jobs page follows a new job without being reloaded.
        yield* step(page, (p) => p.goto(`${appUi}/jobs/`))
        yield* step(page, (p) => p.locator("header .live:not([hidden])").waitFor({ timeout: 10_000 }))
        yield* step(page, (p) => p.evaluate(() => ((window as unknown as { marker: boolean }).marker = true)))
        Fs.writeFileSync(`${done}.more`, "")
        yield* client.waitFor(/counted: 100/, 30_000)
        yield* step(page, (p) =>
          p.waitForFunction(
            () => document.querySelectorAll("#completed-jobs tbody tr").length === 2,
            undefined,
            {
              timeout: 10_000
            }
          ))
        assert.isTrue(
          yield* step(page, (p) => p.evaluate(() => (window as unknown as { marker?: boolean }).marker === true))
        )
        yield* shoot(page, "app-jobs")
        for (const tab of ["Stages", "Storage", "Environment", "Executors"]) {
          yield* step(page, (p) => p.locator("header nav").getByRole("link", { name: tab }).click())
          yield* shoot(page, `app-${tab.toLowerCase()}`)
        }
        // The Executors tab links each executor's logs on its worker.
        yield* step(page, (p) => p.locator("#executors").getByRole("link", { name: "stderr" }).first().click())
        assert.include(
          yield* step(page, (p) => p.locator("pre.log").innerText()),
          "Successfully registered with driver"
        )

        // The kill button (confirmed in its dialog) stops the driver.
        yield* step(page, (p) => p.goto(masterUi))
        yield* step(page, (p) => p.locator("#running-drivers tr", { hasText: driverId }).locator("button.kill").click())
        yield* eventually(
          master.url,
          (state) => state.completedDrivers.find((d) => d.id === driverId && d.state === "KILLED")
        )
        yield* step(page, (p) => p.goto(masterUi))
        assert.include(yield* step(page, (p) => p.locator("#completed-drivers").innerText()), "KILLED")
        yield* shoot(page, "master-after-kill")

        Fs.writeFileSync(done, "")
        assert.strictEqual(yield* client.exited.pipe(Effect.timeout("30 seconds")), 0, client.output())
      }),
    Deadlines.scaled(180_000)
  )
})
