// Prints the state of the ALIVE master among those given: `tsx examples/master-state.ts kindling://h:7077`.
// The same few lines are the README's SDK example.
import { MasterClient, RpcEnv } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import { Effect } from "effect"

const url = process.argv[2] ?? "kindling://127.0.0.1:7077"

const status = Effect.gen(function*() {
  const masters = yield* MasterClient.make(url)
  return yield* masters.masterState // from whichever master is ALIVE
}).pipe(
  Effect.provide(RpcEnv.layer({})), // a client-only node: it dials out and accepts nothing
  Effect.provide(NodeTransport.layer)
)

Effect.runPromise(status).then(
  (state) => console.log(`${state.status}: ${state.workers.length} workers, ${state.activeApps.length} apps`),
  (error) => {
    console.error(error instanceof Error ? error.message : String(error))
    process.exitCode = 1
  }
)
