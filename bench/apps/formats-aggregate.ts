// The formats bench's Kindling side: reads the sales dataset (CSV or Parquet), and per country counts the rows and
// sums amount and quantity; prints `result <seconds of the job> <rows>` and the totals, one `total …` per country.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

const fields = "id LONG, country STRING, amount DOUBLE, quantity INT, day DATE"

export default App.make(([format, path]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const started = performance.now()
    const rows = format === "csv"
      ? yield* kc.read.csv(path!, { header: true, fields, columns: ["country", "amount", "quantity"] })
      : yield* kc.read.parquet(path!, { columns: ["country", "amount", "quantity"] })
    const totals = yield* rows
      .map((
        row
      ): [string, [number, number, number]] => [row.country as string, [
        1,
        row.amount as number,
        row.quantity as number
      ]])
      .reduceByKey(([n, a, q], [m, b, r]): [number, number, number] => [n + m, a + b, q + r])
      .collect()
    const seconds = (performance.now() - started) / 1000
    const count = totals.reduce((sum, [, [n]]) => sum + n, 0)
    yield* Console.log(`result ${seconds} ${count}`)
    for (const [country, [n, amount, quantity]] of totals.sort(([a], [b]) => (a < b ? -1 : 1))) {
      yield* Console.log(`total ${country} ${n} ${amount.toFixed(2)} ${quantity}`)
    }
  })
)
