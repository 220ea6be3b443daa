// Records typed by an app's Effect Schema, registered at the top of its module and decoded on the executors as
// they are read: a record the schema rejects fails the job naming the file, the line and the field — or is
// dropped with DROPMALFORMED — in local[2] and local-cluster.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { app, run, temporaryDirectory } from "./fixtures/cluster.js"

const typed = `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Schema } from "effect"

// Ages are whole numbers of years, names are not empty, and a member joined on a day.
const Member = App.registerSchema("Member", Schema.Struct({
  name: Schema.NonEmptyString,
  age: Schema.Int.pipe(Schema.between(0, 150)),
  joined: Schema.DateFromSelf
}))

export default App.make(([input, mode]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const members = yield* kc.read.csv(input!, {
      header: true,
      fields: "name STRING, age INT, joined DATE",
      schema: Member,
      mode: mode as "FAILFAST" | "DROPMALFORMED"
    })
    // Typed as the schema's records: age is a number, joined a Date.
    const oldest = yield* members.map((member) => member.age).reduce((a, b) => Math.max(a, b))
    const years = yield* members.map((member) => member.joined.getUTCFullYear()).collect()
    yield* Console.log(\`oldest \${oldest} joined \${years.sort().join(",")}\`)
  }))
`

describe("records typed by an Effect Schema", () => {
  it.scopedLive(
    "decode on the executors; a record the schema rejects names its file, line and field",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const source = app(dir, "typed.ts", typed)
        const input = Path.join(dir, "members.csv")
        Fs.writeFileSync(input, "name,age,joined\nann,31,2020-01-05\nbob,200,2021-02-03\ncid,45,2019-07-01\n")
        // Dropping in local[2], failing on executor processes.
        const dropping = yield* run(["submit", "--master", "local[2]", source, input, "DROPMALFORMED"])
        assert.strictEqual(dropping.code, 0, dropping.stderr)
        assert.strictEqual(dropping.stdout.trim(), "oldest 45 joined 2019,2020")
        const failing = yield* run(["submit", "--master", "local-cluster[2,1,1024]", source, input, "FAILFAST"])
        assert.notStrictEqual(failing.code, 0)
        assert.include(failing.stderr, `MalformedRecord: Record in ${input} at line 3 does not fit the schema`)
        assert.include(failing.stderr, `["age"]`)
        assert.include(failing.stderr, "Expected a number between 0 and 150, actual 200")
        // A schema the app did not register is refused before any job, naming what to do.
        const unregistered = app(dir, "unregistered.ts", typed.replace(`App.registerSchema("Member", `, "("))
        const refused = yield* run(["submit", "--master", "local[2]", unregistered, input, "FAILFAST"])
        assert.notStrictEqual(refused.code, 0)
        assert.include(refused.stderr, "read.csv: the schema is not registered")
      }),
    { timeout: 180_000 }
  )
})
