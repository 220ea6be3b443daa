// Joins two datasets by key: customers and their orders, generated here. `kindling submit --master local[2]
// examples/join.ts 100000` makes that many orders over 1,000 customers (a few without any), then prints the five
// customers who spent most (an inner join, summed by customer) and how many customers ordered nothing (a left
// outer join).
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make(([count = "100000"]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const customers = kc.range(0, 1000, 1, 4).map((id): [number, string] => [id, `customer-${id}`])
    // Order i is customer (i * 7919) mod 990's: customers 990 to 999 never order.
    const orders = kc.range(0, Number(count), 1, 8)
      .map((i): [number, number] => [(i * 7919) % 990, (i % 100) + 1])
    const spent = customers.join(orders)
      .map(([, [name, amount]]): [string, number] => [name, amount])
      .reduceByKey((a, b) => a + b)
    const biggest = yield* spent.map(([name, total]): [number, string] => [total, name]).top(5)
    for (const [total, name] of biggest) yield* Console.log(`${name} spent ${total}`)
    const idle = yield* customers.leftOuterJoin(orders).filter(([, [, order]]) => order === undefined).count()
    yield* Console.log(`${idle} customers ordered nothing`)
  })
)
