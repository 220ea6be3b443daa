import { assert, describe, it } from "@effect/vitest"
import {
  Endpoints,
  Errors,
  Ids,
  MasterUrl,
  QueryMessages,
  RpcAddress,
  type States,
  SubmissionMessages
} from "@kindling/protocol"
import { Deadlines } from "@kindling/protocol/testing"
import { MasterClient, RpcEnv, Transport } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import { Effect, Option, Ref } from "effect"
import { driverDescription, host, startNode, startStoppableNode } from "./fixtures/nodes.js"

// A fake master endpoint: in any state but ALIVE every submission ask fails with MasterNotAlive, as a real one.
const fakeMaster = (rpc: RpcEnv.RpcEnv, state: States.RecoveryState) =>
  Effect.gen(function*() {
    const asked = yield* Ref.make(0)
    const self = Endpoints.ref(rpc.address!, Endpoints.master)
    const alive = <A>(answer: () => A) =>
      Ref.update(asked, (n) => n + 1).pipe(
        Effect.zipRight(state === "ALIVE" ? Effect.sync(answer) : Effect.fail(new Errors.MasterNotAlive({ state })))
      )
    const known = Ids.DriverId.make("driver-20260101000000-0000")
    const requireKnown = (driverId: Ids.DriverId) =>
      driverId === known ? Effect.void : Effect.fail(new Errors.DriverNotFound({ driverId }))
    yield* rpc.register("Master", {
      inbound: SubmissionMessages.SubmissionRequest,
      handlers: {
        RequestSubmitDriver: () =>
          alive(() =>
            new SubmissionMessages.SubmitDriverResponse({
              master: self,
              success: true,
              driverId: Option.some(known),
              message: `Driver successfully submitted as ${known}`
            })
          ),
        RequestKillDriver: ({ driverId }) =>
          alive(() => undefined).pipe(
            Effect.zipRight(requireKnown(driverId)),
            Effect.as(
              new SubmissionMessages.KillDriverResponse({ master: self, driverId, success: true, message: "killed" })
            )
          ),
        RequestDriverStatus: ({ driverId }) =>
          alive(() => undefined).pipe(
            Effect.zipRight(requireKnown(driverId)),
            Effect.as(
              new SubmissionMessages.DriverStatusResponse({
                found: true,
                state: Option.some("RUNNING"),
                workerId: Option.none(),
                workerHostPort: Option.none(),
                exception: Option.none()
              })
            )
          ),
        RequestKillAllDrivers: () => Effect.fail(new Errors.MasterNotAlive({ state })),
        RequestClearCompletedDriversAndApps: () => Effect.succeed(true),
        RequestReadyz: () => Effect.succeed(state !== "STANDBY"),
        RequestUploadArtifact: ({ name }) =>
          Effect.fail(new Errors.ArtifactRejected({ name, reason: "this fake stores nothing" }))
      }
    })
    return { address: rpc.address!, asked: Ref.get(asked), known }
  })

// A master host whose process hangs: it accepts connections and never says a word.
const silentMaster = Effect.gen(function*() {
  const transport = yield* Transport.Transport
  const bound = yield* transport.listen(host, 0, () => ({ onData: () => {}, onClose: () => {} }))
  return RpcAddress.make(host, bound.port)
})

const clientOf = (masters: ReadonlyArray<RpcAddress.RpcAddress>) =>
  Effect.gen(function*() {
    const { rpc } = yield* startNode()
    return yield* MasterClient.make(MasterUrl.format(masters), { timeout: "2 seconds" }).pipe(
      Effect.provideService(RpcEnv.RpcEnv, rpc)
    )
  })

describe("MasterClient", () => {
  it.scopedLive("fails over past a master that is not alive and one that is unreachable", () =>
    Effect.gen(function*() {
      const gone = yield* startStoppableNode()
      yield* gone.stop
      const standby = yield* fakeMaster((yield* startNode()).rpc, "STANDBY")
      const leader = yield* fakeMaster((yield* startNode()).rpc, "ALIVE")
      const client = yield* clientOf([standby.address, gone.address, leader.address])

      const submitted = yield* client.submitDriver(driverDescription())
      assert.deepStrictEqual(submitted.driverId, Option.some(leader.known))
      assert.deepStrictEqual(submitted.master.address, leader.address)
      assert.isTrue((yield* client.driverStatus(leader.known)).found)
      assert.isTrue((yield* client.killDriver(leader.known)).success)
      assert.strictEqual(yield* leader.asked, 3)
    }).pipe(Effect.provide(NodeTransport.layer)), 20_000)

  it.scopedLive(
    "a master that accepts connections and never answers costs nothing once the leader has",
    () =>
      Effect.gen(function*() {
        const silent = yield* silentMaster
        const leader = yield* fakeMaster((yield* startNode()).rpc, "ALIVE")
        const client = yield* clientOf([silent, leader.address])
        const started = Date.now()
        const submitted = yield* client.submitDriver(driverDescription())
        assert.deepStrictEqual(submitted.master.address, leader.address)
        assert.isBelow(Date.now() - started, 1_000)
      }).pipe(Effect.provide(NodeTransport.layer)),
    Deadlines.scaled(20_000)
  )

  it.scopedLive("an answer from the alive master is final, even an error", () =>
    Effect.gen(function*() {
      const leader = yield* fakeMaster((yield* startNode()).rpc, "ALIVE")
      const standby = yield* fakeMaster((yield* startNode()).rpc, "STANDBY")
      const client = yield* clientOf([standby.address, leader.address])
      const error = yield* Effect.flip(client.driverStatus(Ids.DriverId.make("driver-unknown")))
      assert.instanceOf(error, Errors.DriverNotFound)
    }).pipe(Effect.provide(NodeTransport.layer)), 20_000)

  it.scopedLive("when no master is alive the one about to lead gives the answer", () =>
    Effect.gen(function*() {
      const first = yield* fakeMaster((yield* startNode()).rpc, "STANDBY")
      const second = yield* fakeMaster((yield* startNode()).rpc, "RECOVERING")
      const client = yield* clientOf([first.address, second.address])
      const error = yield* Effect.flip(client.submitDriver(driverDescription()))
      assert.instanceOf(error, Errors.MasterNotAlive)
      assert.strictEqual(error.state, "RECOVERING")
      assert.match(error.message, /^Current state is not alive: RECOVERING/)
    }).pipe(Effect.provide(NodeTransport.layer)), 20_000)

  it.scopedLive("the master state comes from the alive master", () =>
    Effect.gen(function*() {
      const states: Array<States.RecoveryState> = ["STANDBY", "ALIVE"]
      const masters = yield* Effect.forEach(states, (status) =>
        Effect.gen(function*() {
          const { address, rpc } = yield* startNode()
          yield* rpc.register("Master", {
            inbound: QueryMessages.MasterQuery,
            handlers: {
              RequestMasterState: () =>
                Effect.succeed(
                  new QueryMessages.MasterStateResponse({
                    host: address.host,
                    port: address.port,
                    restPort: Option.none(),
                    workers: [],
                    activeApps: [],
                    completedApps: [],
                    activeDrivers: [],
                    completedDrivers: [],
                    status
                  })
                ),
              DecommissionWorkersOnHosts: () => Effect.succeed(0),
              DecommissionWorkers: () => Effect.succeed(0),
              BoundPortsRequest: () => Effect.die("not used")
            }
          })
          return address
        }))
      const client = yield* clientOf([yield* silentMaster, ...masters])
      const started = Date.now()
      const state = yield* client.masterState
      assert.isBelow(Date.now() - started, 1_000)
      assert.strictEqual(state.status, "ALIVE")
      assert.strictEqual(state.port, masters[1]!.port)
    }).pipe(Effect.provide(NodeTransport.layer)), 20_000)
})
