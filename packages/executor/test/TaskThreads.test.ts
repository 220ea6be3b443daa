import { assert, describe, it } from "@effect/vitest"
import { ObjectStore } from "@kindling/data"
import { TaskThreads } from "@kindling/executor"
import { Records } from "@kindling/protocol"
import { Effect, Exit } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { info } from "./fixtures/taskInfo.js"

// Tasks of self-contained functions (source text): each reads its one item and runs `body` over it.
const task = (item: unknown, body: string) =>
  Records.encode({
    plan: { _tag: "Slice", items: [item] },
    result: { _tag: "Foreach", fn: { _tag: "SourceFunction", source: body, env: null } }
  })
const collect = (items: ReadonlyArray<unknown>) =>
  Records.encode({ plan: { _tag: "Slice", items }, result: { _tag: "Collect" } })

const withPool = <A>(
  size: number,
  f: (pool: TaskThreads.TaskThreads, localDir: string) => Effect.Effect<A>,
  app?: (localDir: string) => string
) =>
  Effect.scoped(Effect.gen(function*() {
    const localDir = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-threads-test-"))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    const pool = yield* TaskThreads.make({ size, appUrl: app?.(localDir) })
    return yield* f(pool, localDir)
  }))

// An app module that says when it is imported (it writes the file `imported` beside itself), exports a function
// and registers a class, as an app's artifact does: `Point`, registered here too, so that its instances travel.
class Point {
  constructor(readonly x: number) {}
}
Records.registerClass(Point, "Point")
const records = new URL("../../protocol/src/Records.ts", import.meta.url).href
const appModule = (localDir: string) => {
  const file = Path.join(localDir, "app.mjs")
  Fs.writeFileSync(
    file,
    `import { writeFileSync } from "node:fs"
import { registerClass } from ${JSON.stringify(records)}
registerClass(class Point {}, "Point")
writeFileSync(new URL("./imported", import.meta.url), "")
export const double = (x) => x * 2
`
  )
  return pathToFileURL(file).href
}
const imported = (localDir: string) => Fs.existsSync(Path.join(localDir, "imported"))

// Starts a task and resolves with how it ended: its outcome's tag (and value), or the runner's error.
const run = (
  pool: TaskThreads.TaskThreads,
  localDir: string,
  taskId: number,
  bytes: Uint8Array,
  ends: Map<number, string>
) =>
  pool.start(
    bytes,
    info(taskId),
    { localDir, spillThreshold: 1 << 20, objectStore: ObjectStore.settingsOf({}), shuffleInputs: [], cached: [] },
    (ran) => {
      if (Exit.isFailure(ran)) {
        ends.set(taskId, `failed`)
        return
      }
      const outcome = Records.decode(ran.value.outcome) as { readonly _tag: string; readonly value?: Uint8Array }
      ends.set(
        taskId,
        outcome._tag === "TaskResult"
          ? `${outcome._tag} ${JSON.stringify(Records.decode(outcome.value!))}`
          : outcome._tag
      )
    }
  )

const until = (done: () => boolean) =>
  Effect.gen(function*() {
    // Real threads on a busy machine: no deadline but the test's own.
    while (!done()) yield* Effect.sleep("5 millis")
  })

describe("TaskThreads", () => {
  it.live(
    "runs more tasks than threads, each once, in the order given per thread",
    () =>
      withPool(2, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          for (let id = 0; id < 20; id++) run(pool, localDir, id, collect([id]), ends)
          yield* until(() => ends.size === 20)
          for (let id = 0; id < 20; id++) assert.strictEqual(ends.get(id), `TaskResult [${id}]`)
        })),
    { timeout: 60_000 }
  )

  it.live(
    "a stopped task that a thread holds but has not started never runs, and tells nothing",
    () =>
      withPool(1, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          const marker = Path.join(localDir, "ran")
          // The first task holds the thread for a while; the second is held behind it, then stopped.
          run(
            pool,
            localDir,
            0,
            task(300, "(ms) => { const end = Date.now() + ms; while (Date.now() < end) {} }"),
            ends
          )
          const stop = run(
            pool,
            localDir,
            1,
            task(marker, "(path) => require('node:fs').writeFileSync(path, 'x')"),
            ends
          )
          yield* Effect.sleep("50 millis")
          stop()
          run(pool, localDir, 2, collect(["after"]), ends)
          yield* until(() => ends.has(2))
          assert.deepStrictEqual([...ends].sort(), [[0, "TaskResult null"], [2, "TaskResult [\"after\"]"]])
          assert.isFalse(Fs.existsSync(marker), "the stopped task ran")
        })),
    { timeout: 60_000 }
  )

  it.live(
    "a task that kills its thread fails alone: the task the thread held next runs on its replacement",
    () =>
      withPool(1, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          run(pool, localDir, 0, task(3, "(code) => process.exit(code)"), ends)
          run(pool, localDir, 1, collect(["next"]), ends)
          yield* until(() => ends.size === 2)
          assert.deepStrictEqual([...ends].sort(), [[0, "failed"], [1, "TaskResult [\"next\"]"]])
        })),
    { timeout: 60_000 }
  )

  it.live(
    "a running task that is stopped ends its thread; the task held behind it runs, and says how far it read",
    () =>
      withPool(1, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          const stop = run(pool, localDir, 0, task(0, "() => { for (;;) {} }"), ends)
          run(pool, localDir, 1, collect(["behind"]), ends)
          // The stuck task has read its one record.
          yield* until(() => pool.progress(0)?.recordsRead === 1)
          stop()
          yield* until(() => ends.has(1))
          assert.deepStrictEqual([...ends], [[1, "TaskResult [\"behind\"]"]])
          assert.isUndefined(pool.progress(0))
        })),
    { timeout: 60_000 }
  )

  it.live(
    "tasks stopped again and again behind a running one never run, and never cost the running one",
    () =>
      withPool(1, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          run(
            pool,
            localDir,
            0,
            task(400, "(ms) => { const end = Date.now() + ms; while (Date.now() < end) {} }"),
            ends
          )
          const writes = "(path) => require('node:fs').writeFileSync(path, 'x')"
          for (let id = 1; id <= 5; id++) {
            run(pool, localDir, id, task(Path.join(localDir, `ran-${id}`), writes), ends)()
          }
          run(pool, localDir, 6, collect(["last"]), ends)
          yield* until(() => ends.has(6))
          assert.deepStrictEqual([...ends].sort(), [[0, "TaskResult null"], [6, "TaskResult [\"last\"]"]])
          assert.deepStrictEqual(
            Fs.readdirSync(localDir).filter((name) => name.startsWith("ran-")),
            []
          )
        })),
    { timeout: 60_000 }
  )

  it.live(
    "a thread imports the app module for the first task that calls one of its functions, not before",
    () =>
      withPool(1, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          run(pool, localDir, 0, collect([1, 2]), ends)
          yield* until(() => ends.has(0))
          assert.isFalse(imported(localDir), "imported for a task that needs nothing of it")
          const doubled = Records.encode({
            plan: {
              _tag: "Map",
              fn: { _tag: "NamedFunction", name: "double" },
              child: { _tag: "Slice", items: [1, 2] }
            },
            result: { _tag: "Collect" }
          })
          run(pool, localDir, 1, doubled, ends)
          yield* until(() => ends.has(1))
          assert.deepStrictEqual([...ends], [[0, "TaskResult [1,2]"], [1, "TaskResult [2,4]"]])
          assert.isTrue(imported(localDir))
        }), appModule),
    { timeout: 60_000 }
  )

  it.live(
    "a task carrying records of a class the app module registers waits for the module, and its records arrive whole",
    () =>
      withPool(1, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          run(pool, localDir, 0, collect(["plain"]), ends)
          run(pool, localDir, 1, collect([new Point(3)]), ends)
          yield* until(() => ends.size === 2)
          assert.deepStrictEqual([...ends], [[0, "TaskResult [\"plain\"]"], [1, "TaskResult [{\"x\":3}]"]])
          assert.isTrue(imported(localDir))
        }), appModule),
    { timeout: 60_000 }
  )

  it.live(
    "short tasks' ends come a few at a time, but a task that was not short is told at once, with those before it",
    () =>
      withPool(1, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          const release = Path.join(localDir, "release")
          // A short task, then one of 50 ms, then one that runs until the test releases it: the first two are told
          // while the third still runs.
          run(pool, localDir, 0, collect(["short"]), ends)
          run(pool, localDir, 1, task(50, "(ms) => { const end = Date.now() + ms; while (Date.now() < end) {} }"), ends)
          run(pool, localDir, 2, task(release, "(path) => { while (!require('node:fs').existsSync(path)) {} }"), ends)
          yield* until(() => ends.has(1))
          assert.deepStrictEqual([...ends].sort(), [[0, "TaskResult [\"short\"]"], [1, "TaskResult null"]])
          Fs.writeFileSync(release, "")
          yield* until(() => ends.has(2))
        })),
    { timeout: 60_000 }
  )

  it.live(
    "a thread that dies before it told the ends of short tasks it ran: they run again, and each ends once",
    () =>
      withPool(1, (pool, localDir) =>
        Effect.gen(function*() {
          const ends = new Map<number, string>()
          const told = new Map<number, number>()
          const counted = (taskId: number, bytes: Uint8Array) =>
            run(pool, localDir, taskId, bytes, {
              set: (id: number, end: string) => {
                told.set(id, (told.get(id) ?? 0) + 1)
                return ends.set(id, end)
              }
            } as Map<number, string>)
          // One short task first, so that the thread holds several; then, in one batch, short tasks, one that
          // ends the thread, and one more.
          counted(0, collect([0]))
          yield* until(() => ends.has(0))
          for (let id = 1; id <= 3; id++) counted(id, collect([id]))
          counted(4, task(3, "(code) => process.exit(code)"))
          counted(5, collect([5]))
          yield* until(() => ends.size === 6)
          assert.deepStrictEqual([...ends].sort(), [
            [0, "TaskResult [0]"],
            [1, "TaskResult [1]"],
            [2, "TaskResult [2]"],
            [3, "TaskResult [3]"],
            [4, "failed"],
            [5, "TaskResult [5]"]
          ])
          assert.deepStrictEqual([...told.values()], [1, 1, 1, 1, 1, 1])
        })),
    { timeout: 60_000 }
  )

  it.live(
    "short tasks held behind a long one move to a thread that has nothing left to do",
    () =>
      withPool(2, (pool, localDir) =>
        Effect.gen(function*() {
          yield* Effect.orDie(pool.started)
          const ends = new Map<number, string>()
          const release = Path.join(localDir, "release")
          // A short task first, so that threads hold several; then one that runs until the test releases it, and
          // short ones, some of which land behind it.
          run(pool, localDir, 0, collect([0]), ends)
          yield* until(() => ends.has(0))
          run(pool, localDir, 1, task(release, "(path) => { while (!require('node:fs').existsSync(path)) {} }"), ends)
          for (let id = 2; id <= 8; id++) run(pool, localDir, id, collect([id]), ends)
          yield* until(() => ends.size === 8)
          assert.isFalse(ends.has(1))
          for (let id = 2; id <= 8; id++) assert.strictEqual(ends.get(id), `TaskResult [${id}]`)
          Fs.writeFileSync(release, "")
          yield* until(() => ends.has(1))
        })),
    { timeout: 60_000 }
  )
})
