import { assert, describe, it } from "@effect/vitest"
import { Core } from "@kindling/kernel"
import { Endpoints, Errors, Ids, RpcAddress, SubmissionMessages, WorkerMessages } from "@kindling/protocol"
import type { RpcEnv } from "@kindling/rpc"
import { Exit, Option } from "effect"
import { submitDriver } from "./fixtures/submission.js"

const address = RpcAddress.make("10.0.0.1", 7077)
const master = Endpoints.ref(address, Endpoints.master)
const worker = Endpoints.ref(address, Endpoints.worker)
const heartbeat = new WorkerMessages.Heartbeat({ workerId: Ids.WorkerId.make("worker-1"), worker })
const submit = submitDriver
const response = new SubmissionMessages.SubmitDriverResponse({
  master,
  success: true,
  driverId: Option.some(Ids.DriverId.make("driver-1")),
  message: "ok"
})

describe("the core contract", () => {
  // The lines marked @ts-expect-error are what the types exist to refuse: the build fails if any compiles.
  it("a message goes only to an endpoint that accepts it, and a reply must be its request's", () => {
    const out: Core.Out<never, never> = { now: 0, commands: [] }
    Core.send(out, master, heartbeat)
    // @ts-expect-error a worker's heartbeat is not for a worker's endpoint
    Core.send(out, worker, heartbeat)
    const ask: Core.Ask<SubmissionMessages.RequestSubmitDriver> = { id: 1, request: submit }
    Core.reply(out, ask, Exit.succeed(response))
    Core.reply(out, ask, Exit.fail(new Errors.MasterNotAlive({ state: "STANDBY" })))
    // @ts-expect-error a submission is not answered with a boolean
    Core.reply(out, ask, Exit.succeed(true))
    // @ts-expect-error AppNotFound is not one of a submission's errors
    Core.reply(out, ask, Exit.fail(new Errors.AppNotFound({ appId: Ids.AppId.make("app-1") })))
    assert.deepStrictEqual(out.commands.map((c) => c._tag), ["Send", "Send", "Reply", "Reply", "Reply", "Reply"])
  })

  it("so does the RpcEnv's send and ask", () => {
    const typed = (rpc: RpcEnv.RpcEnv) => {
      void rpc.send(master, heartbeat)
      // @ts-expect-error a worker's heartbeat is not for a worker's endpoint
      void rpc.send(worker, heartbeat)
      void rpc.ask(master, submit)
      // @ts-expect-error a submission is for a master
      void rpc.ask(worker, submit)
    }
    assert.isFunction(typed)
  })

  it("a handler table has one handler per message, each given its own message and Ask", () => {
    const seen: Array<string> = []
    const receive = Core.dispatch<SubmissionMessages.SubmissionRequest, Core.Out<never, never>>({
      RequestSubmitDriver: (out, message, ask) => {
        seen.push(message.driverDescription.appUrl)
        Core.reply(out, ask, Exit.succeed(response))
      },
      RequestKillDriver: () => {},
      RequestDriverStatus: () => {},
      RequestKillAllDrivers: () => {},
      RequestClearCompletedDriversAndApps: () => {},
      RequestUploadArtifact: () => {},
      RequestReadyz: (out, _, ask) => Core.reply(out, ask, Exit.succeed(true))
    })
    const out: Core.Out<never, never> = { now: 0, commands: [] }
    receive(out, submit, { id: 7, request: submit })
    assert.deepStrictEqual(seen, ["file:///app.js"])
    assert.deepStrictEqual(out.commands, [{
      _tag: "Reply",
      ask: { id: 7, request: submit },
      exit: Exit.succeed(response)
    }])
    assert.isTrue(Core.isRequest(submit))
    assert.isFalse(Core.isRequest(heartbeat))
  })
})
