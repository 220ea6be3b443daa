// Counts the lines of a text file (or of every file of a directory), and the long ones:
// `kindling submit --master local[2] examples/line-count.ts README.md`.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make(([input]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    if (input === undefined) return yield* Effect.fail(new Error("usage: line-count.ts INPUT"))
    const lines = kc.textFile(input)
    const long = yield* lines.filter((line, env) => line.length > env.min, { min: 80 }).count()
    yield* Console.log(`${yield* lines.count()} lines, ${long} longer than 80 characters`)
  })
)
