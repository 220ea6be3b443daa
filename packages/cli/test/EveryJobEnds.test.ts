// Every job ends — with its answer or a typed error — and the app goes on: the app of issue #22 (a record of one
// side of a cogroup that throws, beside the other side's running stage, used to hang the driver for ever), run by
// `kindling submit` in every mode.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import { app, cluster, run, temporaryDirectory } from "./fixtures/cluster.js"

// Three jobs: a cogroup whose left side throws on record 41 on every attempt; the same whose record throws on its
// task's first attempt only; then a plain count. Each job's outcome is printed, its failure caught.
const cogroup = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make(() =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const right = kc.parallelize([0, 1, 2, 3, 4], 3).map((k) => [k, k * 100] as [number, number])
    for (const always of [true, false]) {
      const left = kc.parallelize(Array.from({ length: 60 }, (_, i) => i), 6)
        .map((x, env) => {
          if (x === 41 && (env.always || env.task.attemptNumber === 0)) throw new Error("bad record")
          return [x % 5, x] as [number, number]
        }, { always, task: kc.taskContext })
      const outcome = yield* Effect.either(left.cogroup(right).count())
      yield* Console.log(outcome._tag === "Right" ? \`count \${outcome.right}\` : \`\${outcome.left._tag}: \${outcome.left.message.split("\\n")[0]}\`)
    }
    yield* Console.log(\`next \${yield* kc.range(0, 10).count()}\`)
  }))
`

const submit = (master: string, dir: string, ...extra: Array<string>) =>
  run(["submit", "--master", master, ...extra, app(dir, "cogroup.ts", cogroup)])

// The job that always throws failed with Spark's message; the next job ran; the app exited 0.
const ended = (
  result: { readonly code: number | null; readonly stdout: string; readonly stderr: string },
  retries: boolean
) => {
  assert.strictEqual(result.code, 0, result.stderr)
  const [always, once, next] = result.stdout.trim().split("\n")
  assert.match(
    always!,
    /^JobFailed: Job aborted due to stage failure: Task \d+ in stage \d+\.\d+ failed \d+ times?, .*bad record/
  )
  // A record that throws once: retried, the right answer; without retries (plain local), the job fails as well.
  if (retries) assert.strictEqual(once, "count 5")
  else assert.match(once!, /^JobFailed: .*bad record/)
  assert.strictEqual(next, "next 10")
}

describe("every job ends", () => {
  it.scopedLive(
    "in local[2]: the failing job fails typed, the next runs, the app exits 0",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        ended(yield* submit("local[2]", dir), false)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive("in local[2,4]: a failure once is retried to the right answer", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      ended(yield* submit("local[2,4]", dir), true)
    }), Deadlines.scaled(60_000))

  it.scopedLive("on local-cluster[2,1,1024]", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      ended(yield* submit("local-cluster[2,1,1024]", dir), true)
    }), Deadlines.scaled(90_000))

  it.scopedLive("in client mode on a cluster", () =>
    Effect.gen(function*() {
      const { dir, master } = yield* cluster(2)
      ended(yield* submit(master.url, dir, "--conf", "kindling.driver.host=127.0.0.1"), true)
    }), Deadlines.scaled(90_000))
})
