// The smallest app, for cold-start timing: one job of one task.
import { App, Kindling } from "@kindling/app"
import { Effect } from "effect"

export default App.make(() => Effect.flatMap(Kindling, (kc) => kc.parallelize([1], 1).count()))
