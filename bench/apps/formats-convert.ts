// The formats bench's dataset as Parquet: its CSV read with the fields given and written back as Parquet, a
// file per input file.
import { App, Kindling } from "@kindling/app"
import { Effect } from "effect"

export default App.make(([csv, parquet]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const rows = yield* kc.read.csv(csv!, {
      header: true,
      fields: "id LONG, country STRING, amount DOUBLE, quantity INT, day DATE",
      minPartitions: 8
    })
    yield* rows.coalesce(8).write.parquet(parquet!, { mode: "overwrite" })
  })
)
