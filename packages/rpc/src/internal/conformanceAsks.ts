// The asks of each role: a script per message its endpoint accepts — the valid ask and what a conforming node
// answers, and an invalid body the node must refuse with MalformedFrame naming the wrong field — and the checks
// of the master's asks that need a body of their own.
import {
  AppClientMessages,
  Descriptions,
  type Endpoints,
  Ids,
  QueryMessages,
  SubmissionMessages,
  WorkerMessages
} from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type { Check } from "../Conformance.js"
import type { ReplyOf } from "../RpcEnv.js"
import {
  type Answer,
  ask,
  askMessage,
  bodyOf,
  failureOf,
  opened,
  replyOf,
  type Request
} from "./conformanceConversation.js"
import { type CheckFailed, fail, show } from "./conformanceSession.js"

interface Conversation {
  readonly ask: (request: Request) => Effect.Effect<Answer, CheckFailed>
}

interface AskScript {
  readonly request: Request
  /** What a conforming node answers the valid ask, in a few words. */
  readonly expects: string
  /** Checks the answer; may go on with the conversation on the same connection. */
  readonly answer: (answer: Answer, conversation: Conversation) => Effect.Effect<void, CheckFailed>
  /** The field given a value of the wrong type in the invalid body; without one, the body is not even a map. */
  readonly wrong: readonly [field: string, value: unknown] | undefined
}

type Outcome = Effect.Effect<void, CheckFailed> | string | undefined

const answered = <M extends Request>(
  request: M,
  expects: string,
  check: (reply: ReplyOf<M>, conversation: Conversation) => Outcome,
  wrong?: readonly [string, unknown]
): AskScript => ({
  request,
  expects,
  wrong,
  answer: (answer, conversation) =>
    Effect.flatMap(replyOf(request, answer), (reply) => {
      const outcome = check(reply, conversation)
      return typeof outcome === "string" ? fail(outcome) : outcome ?? Effect.void
    })
})

const refused = (request: Request, tag: string, expects: string, wrong?: readonly [string, unknown]): AskScript => ({
  request,
  expects: `${expects}: fails with ${tag}`,
  wrong,
  answer: (answer) => Effect.asVoid(failureOf(request, answer, tag))
})

// Every ask an endpoint accepts, by tag: a message added to an endpoint does not compile until it has a script.
type AskTags<M> = M extends Schema.WithResult.All & { readonly _tag: string } ? M["_tag"] : never
type Scripts<M> = { readonly [Tag in AskTags<M>]: AskScript }

export const unknownApp = Ids.AppId.make("app-00000000000000-conformance")
const unknownDriver = Ids.DriverId.make("driver-00000000000000-conformance")

/**
 * A driver as `kindling submit` describes one that runs a plain function module: the installation's driver
 * wrapper, given the worker's URL and the fetched app. This one asks for 8 PiB of memory (2^33 MB, which also
 * goes out as a 64-bit integer), so no worker ever takes it and nothing runs.
 */
const unplaceable = (mainModule: string) =>
  new Descriptions.DriverDescription({
    appUrl: "file:///kindling-conformance/never-runs.mjs",
    mem: 2 ** 33,
    cores: 1,
    supervise: false,
    command: new Descriptions.Command({
      mainModule,
      arguments: ["{{WORKER_URL}}", "{{USER_JAR}}"],
      environment: {},
      nodeOptions: []
    }),
    resourceReqs: []
  })

const [, driverWrapper] = Descriptions.mainModules.driver

export const requestExecutorsOfUnknownApp = new AppClientMessages.RequestExecutors({
  appId: unknownApp,
  requestedTotal: 1
})

// Submitted, the driver waits; the master reports it, kills it at once when asked, and then reports it KILLED.
const followSubmission = (reply: SubmissionMessages.SubmitDriverResponse, conversation: Conversation) =>
  Effect.gen(function*() {
    if (!reply.success || Option.isNone(reply.driverId)) {
      return yield* fail(`the submission was not recorded: ${reply.message}`)
    }
    const driverId = reply.driverId.value
    const query = <M extends Request>(request: M) =>
      Effect.flatMap(conversation.ask(request), (a) => replyOf(request, a))
    const expectState = (expected: string) =>
      Effect.flatMap(query(new SubmissionMessages.RequestDriverStatus({ driverId })), (status) => {
        const state = Option.getOrUndefined(status.state)
        return state === expected ? Effect.void : fail(`driver ${driverId} is ${state}, expected ${expected}`)
      })
    yield* expectState("SUBMITTED")
    const state = yield* query(new QueryMessages.RequestMasterState())
    if (!state.activeDrivers.some((driver) => driver.id === driverId)) {
      return yield* fail(`driver ${driverId} is not among the master's active drivers`)
    }
    const killed = yield* query(new SubmissionMessages.RequestKillDriver({ driverId }))
    if (!killed.success) return yield* fail(`the kill of ${driverId} failed: ${killed.message}`)
    yield* expectState("KILLED")
  })

export const masterScripts: Scripts<Endpoints.Inbound["Master"]> = {
  ExecutorStateChanged: answered(
    new WorkerMessages.ExecutorStateChanged({
      appId: unknownApp,
      execId: 0,
      state: "RUNNING",
      message: Option.none(),
      exitStatus: Option.none()
    }),
    "a report on an unknown executor is answered true",
    (reply) => reply ? undefined : "answered false",
    ["execId", "zero"]
  ),
  DriverStateChanged: answered(
    new WorkerMessages.DriverStateChanged({ driverId: unknownDriver, state: "FINISHED", exception: Option.none() }),
    "a report on an unknown driver is answered true",
    (reply) => reply ? undefined : "answered false",
    ["state", "NOT_A_STATE"]
  ),
  RequestSubmitDriver: answered(
    new SubmissionMessages.RequestSubmitDriver({ driverDescription: unplaceable(driverWrapper) }),
    "a driver is recorded, reported SUBMITTED and among the active drivers, killed, then reported KILLED",
    followSubmission,
    ["driverDescription", "a description"]
  ),
  RequestKillDriver: refused(
    new SubmissionMessages.RequestKillDriver({ driverId: unknownDriver }),
    "DriverNotFound",
    "an unknown driver",
    ["driverId", 42]
  ),
  RequestDriverStatus: refused(
    new SubmissionMessages.RequestDriverStatus({ driverId: unknownDriver }),
    "DriverNotFound",
    "an unknown driver",
    ["driverId", 42]
  ),
  RequestKillAllDrivers: answered(
    new SubmissionMessages.RequestKillAllDrivers(),
    "answered with success",
    (reply) => reply.success ? undefined : `answered ${reply.message}`
  ),
  RequestClearCompletedDriversAndApps: answered(
    new SubmissionMessages.RequestClearCompletedDriversAndApps(),
    "answered true",
    (reply) => reply ? undefined : "answered false"
  ),
  RequestReadyz: answered(
    new SubmissionMessages.RequestReadyz(),
    "an ALIVE master answers true",
    (reply) => reply ? undefined : "answered false: the master is not ready (STANDBY)"
  ),
  RequestUploadArtifact: refused(
    new SubmissionMessages.RequestUploadArtifact({ name: "conformance.mjs", sha256: "0".repeat(64), size: 1 }),
    "ArtifactRejected",
    "from a client that does not listen, so the master cannot fetch it",
    ["size", -1]
  ),
  RequestExecutors: refused(
    requestExecutorsOfUnknownApp,
    "AppNotFound",
    "an unknown app",
    ["requestedTotal", "all"]
  ),
  KillExecutors: refused(
    new AppClientMessages.KillExecutors({ appId: unknownApp, executorIds: ["0"] }),
    "AppNotFound",
    "an unknown app",
    ["executorIds", "0"]
  ),
  RequestMasterState: answered(
    new QueryMessages.RequestMasterState(),
    "answered with the master's state, ALIVE",
    (reply) => reply.status === "ALIVE" ? undefined : `the master is ${reply.status}`
  ),
  DecommissionWorkersOnHosts: answered(
    new QueryMessages.DecommissionWorkersOnHosts({ hostnames: ["conformance.invalid"] }),
    "a host with no worker matches 0 workers",
    (reply) => reply === 0 ? undefined : `answered ${reply}`,
    ["hostnames", "conformance.invalid"]
  ),
  DecommissionWorkers: answered(
    new QueryMessages.DecommissionWorkers({ workerIds: [Ids.WorkerId.make("worker-conformance-invalid")] }),
    "an unknown worker id matches 0 workers",
    (reply) => reply === 0 ? undefined : `answered ${reply}`,
    ["workerIds", "worker-conformance-invalid"]
  ),
  BoundPortsRequest: answered(
    new QueryMessages.BoundPortsRequest(),
    "answered with the ports it bound",
    (reply) => reply.rpcEndpointPort > 0 ? undefined : `rpcEndpointPort is ${reply.rpcEndpointPort}`
  )
}

export const workerScripts: Scripts<Endpoints.Inbound["Worker"]> = {
  RequestWorkerState: answered(
    new QueryMessages.RequestWorkerState(),
    "answered with the worker's state",
    (reply) => reply.cores >= reply.coresUsed ? undefined : `uses ${reply.coresUsed} of ${reply.cores} cores`
  )
}

export const askChecks = (scripts: Readonly<Record<string, AskScript>>): ReadonlyArray<Check> =>
  Object.entries(scripts).flatMap(([tag, script]): ReadonlyArray<Check> => [
    opened(
      `${tag}: ${script.expects}`,
      (target, session) =>
        Effect.gen(function*() {
          const conversation: Conversation = { ask: (request) => askMessage(target, session, request) }
          yield* script.answer(yield* conversation.ask(script.request), conversation)
        })
    ),
    opened(
      script.wrong === undefined
        ? `${tag}: a body that is not a map fails with MalformedFrame`
        : `${tag}: a body with ${script.wrong[0]} = ${show(script.wrong[1])} fails with MalformedFrame naming it`,
      (target, session) =>
        Effect.gen(function*() {
          const wrong = script.wrong
          const body = wrong === undefined
            ? tag
            : { ...(yield* bodyOf(script.request)) as Record<string, unknown>, [wrong[0]]: wrong[1] }
          const error = yield* failureOf(
            script.request,
            yield* ask(target, session, target.endpoint, body),
            "MalformedFrame"
          )
          if (wrong !== undefined && !String(error.reason).includes(wrong[0])) {
            return yield* fail(`the reason does not name ${wrong[0]}: ${show(error.reason)}`)
          }
        })
    )
  ])

export const masterOnly: ReadonlyArray<Check> = [
  opened(
    "RequestSubmitDriver: a command naming a module outside the installation fails with DriverLaunchFailed",
    (target, session) =>
      Effect.gen(function*() {
        const request = new SubmissionMessages.RequestSubmitDriver({
          driverDescription: unplaceable("./conformance-not-an-entry.mjs")
        })
        yield* failureOf(request, yield* askMessage(target, session, request), "DriverLaunchFailed")
      })
  )
]
