// Sales per country: Parquet files read from object storage (or any path), a group-by, and the report written
// back as CSV. Only the two columns it uses are read of the Parquet files.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make(([input, output]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    if (input === undefined || output === undefined) {
      return yield* Effect.fail(new Error("usage: parquet-report.ts INPUT OUTPUT"))
    }
    const sales = yield* kc.read.parquet(input, { columns: ["country", "amount"] })
    const byCountry = sales
      .map((sale) => [sale.country as string, sale.amount as number] as const)
      .reduceByKey((a, b) => a + b)
      .map(([country, total]) => ({ country, total: Math.round(total * 100) / 100 }))
      .sortBy((row) => -row.total, true, 1)
    yield* byCountry.write.csv(output, { header: true, mode: "overwrite", fields: "country STRING, total DOUBLE" })
    for (const { country, total } of yield* byCountry.take(3)) yield* Console.log(`${country}\t${total}`)
  })
)
