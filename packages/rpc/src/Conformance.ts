/**
 * A conformance kit for the wire protocol: scripted conversations played against a running master or worker
 * over real connections, each a check that passes or fails with the reason. They cover the handshake (with and
 * without a shared secret), every ask the role's endpoint accepts with a valid and an invalid body, framing
 * (split frames, frames over the limit, garbage, 64-bit integers) and peers that drop their connection half-way.
 * Built on the documented protocol, it is meant for third-party nodes as much as for Kindling's own; `kindling
 * conformance` runs it from the command line.
 *
 * Play it against a node set aside for it: the master's checks submit a driver that can never be placed and kill
 * it, kill every driver and forget completed drivers and apps. The master must be ALIVE.
 *
 * @since 0.1.0
 */
import {
  AppClientMessages,
  Codec,
  Descriptions,
  EndpointNames,
  type Endpoints,
  Envelope,
  Errors,
  Ids,
  QueryMessages,
  RpcAddress,
  SubmissionMessages,
  WorkerMessages
} from "@kindling/protocol"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { concat } from "./internal/bytes.js"
import {
  CheckFailed,
  connect,
  fail,
  frame,
  frameOf,
  int64,
  map,
  packed,
  type Received,
  type Session,
  show,
  uint64
} from "./internal/conformance.js"
import * as Handshake from "./internal/handshake.js"
import type { ReplyOf } from "./RpcEnv.js"
import type { Transport } from "./Transport.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Role = "master" | "worker"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly host: string
  readonly port: number
  readonly role: Role
  /** The cluster's shared secret. Without one, the node is expected to accept connections that prove nothing. */
  readonly secret?: string | undefined
  /** How long to wait for each answer (default 5 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** The node's frame limit, in bytes (default 128 MiB). */
  readonly maxFrameSize?: number | undefined
}

/**
 * One check's outcome; `detail` says what went wrong.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly name: string
  readonly passed: boolean
  readonly detail: string
}

interface Target {
  readonly host: string
  readonly port: number
  readonly key: CryptoKey | undefined
  readonly timeout: Duration.Duration
  readonly maxFrameSize: number
  readonly endpoint: string
  /** A query of the role, asked to show that a connection or the node still serves. */
  readonly probe: Request
  readonly nextId: () => number
}

type Request = Codec.Message & Schema.WithResult.All

/**
 * A named conversation with the node.
 *
 * @since 0.1.0
 * @category models
 */
export interface Check {
  readonly name: string
  /** @internal */
  readonly run: (target: Target) => Effect.Effect<void, CheckFailed, Transport | Scope.Scope>
}

// ---- conversations ------------------------------------------------------------------------------------------

const hello = (nonce: Uint8Array | null, version = Envelope.protocolVersion) => ({
  _tag: "hello",
  version,
  address: null,
  nonce
})

const expectKind = (session: Session, kind: string) =>
  Effect.flatMap(session.next(`a ${kind}`), ({ value }) => {
    if (value._tag === kind) return Effect.succeed(value)
    return value._tag === "reject"
      ? fail(`expected a ${kind}, but the node refused the connection: ${show(value.error)}`)
      : fail(`expected a ${kind}, got ${show(value)}`)
  })

const bytesOf = (value: unknown, field: string) =>
  value instanceof Uint8Array ? Effect.succeed(value) : fail(`${field} is not bytes: ${show(value)}`)

/** Plays the handshake as the docs describe it; answers the node's `welcome`. */
const handshake = (target: Target, session: Session) =>
  Effect.gen(function*() {
    const clientNonce = target.key === undefined ? null : Handshake.makeNonce()
    yield* session.write(frameOf(hello(clientNonce)))
    if (target.key !== undefined && clientNonce !== null) {
      const key = target.key
      const challenge = yield* expectKind(session, "challenge")
      const serverNonce = yield* bytesOf(challenge.nonce, "challenge.nonce")
      const theirs = yield* bytesOf(challenge.proof, "challenge.proof")
      const expected = yield* Effect.promise(() => Handshake.serverProof(key, clientNonce, serverNonce))
      if (!Handshake.sameBytes(expected, theirs)) return yield* fail("the node's proof does not match the secret")
      const proof = yield* Effect.promise(() => Handshake.clientProof(key, clientNonce, serverNonce))
      yield* session.write(frameOf({ _tag: "proof", proof }))
    }
    const welcome = yield* expectKind(session, "welcome")
    if (welcome.version !== Envelope.protocolVersion) {
      return yield* fail(`welcome has version ${show(welcome.version)}, expected ${Envelope.protocolVersion}`)
    }
    if (welcome.address !== null && Either.isLeft(Schema.decodeUnknownEither(RpcAddress.RpcAddress)(welcome.address))) {
      return yield* fail(`welcome.address is neither nil nor { host, port }: ${show(welcome.address)}`)
    }
    return welcome
  })

const dial = (target: Target) => connect(target.host, target.port, target.timeout)

/** A connection whose handshake is complete. */
const open = (target: Target) => Effect.tap(dial(target), (session) => handshake(target, session))

/** The node refuses the connection with `error` and closes it. */
const expectRefusal = (session: Session, error: string) =>
  Effect.gen(function*() {
    const { value } = yield* session.next(`a reject with ${error}`)
    const tag = (value.error as { readonly _tag?: unknown } | undefined)?._tag
    if (value._tag !== "reject" || tag !== error) {
      return yield* fail(`expected a reject with ${error}, got ${show(value)}`)
    }
    yield* session.closedByNode(`after its reject`)
    return value.error as Record<string, unknown>
  })

type Answer =
  | { readonly _tag: "reply"; readonly body: unknown }
  | { readonly _tag: "failure"; readonly error: Record<string, unknown> }

/** The node's answer to the ask `id`; integers of 2^32 and more must be MessagePack integers in it. */
const answerTo = (session: Session, id: number) =>
  Effect.flatMap(session.next(`an answer to ask ${id}`), ({ value, wholeFloats }: Received) => {
    if ((value._tag === "reply" || value._tag === "failure") && value.id === id) {
      if (wholeFloats.length > 0) {
        return fail(`the answer has whole numbers written as floats, not integers: ${wholeFloats.join(", ")}`)
      }
      return Effect.succeed<Answer>(
        value._tag === "reply"
          ? { _tag: "reply", body: value.body }
          : { _tag: "failure", error: value.error as Record<string, unknown> }
      )
    }
    return value._tag === "reject"
      ? fail(`the node refused the connection: ${show(value.error)}`)
      : fail(`expected the answer to ask ${id}, got ${show(value)}`)
  })

const askFrame = (target: Target, to: string, body: unknown) => {
  const id = target.nextId()
  return { id, bytes: frameOf({ _tag: "ask", id, from: null, to, body }) }
}

const ask = (target: Target, session: Session, to: string, body: unknown) => {
  const { bytes, id } = askFrame(target, to, body)
  return Effect.zipRight(session.write(bytes), answerTo(session, id))
}

const bodyOf = (message: Codec.Message) =>
  Either.match(Codec.encodeMessage(message), {
    onLeft: (error) => fail(`cannot encode ${message._tag}: ${error.reason}`),
    onRight: Effect.succeed
  })

const askMessage = (target: Target, session: Session, message: Codec.Message) =>
  Effect.flatMap(bodyOf(message), (body) => ask(target, session, target.endpoint, body))

interface ResultSchemas {
  readonly success: Schema.Schema<any, any, never>
  readonly failure: Schema.Schema<any, any, never>
}

const schemasOf = (request: Request): ResultSchemas =>
  (request as unknown as { readonly [Schema.symbolWithResult]: ResultSchemas })[Schema.symbolWithResult]

/** The reply the request's schema describes. */
const replyOf = <M extends Request>(request: M, answer: Answer) => {
  if (answer._tag === "failure") return fail(`${request._tag} failed with ${show(answer.error)}`)
  return Either.match(Codec.decodeWith(schemasOf(request).success, answer.body), {
    onLeft: (error) => fail(`the reply to ${request._tag} does not decode: ${error.reason}`),
    onRight: (reply) => Effect.succeed(reply as ReplyOf<M>)
  })
}

/** A failure with the error `tag`, one of the request's errors or the RpcEnv's, that decodes as such. */
const failureOf = (request: Request, answer: Answer, tag: string) => {
  if (answer._tag === "reply") return fail(`expected ${tag}, got the reply ${show(answer.body)}`)
  if (answer.error._tag !== tag) return fail(`expected ${tag}, got ${show(answer.error)}`)
  const schema = Schema.Union(schemasOf(request).failure, Errors.RpcError)
  return Either.match(Codec.decodeWith(schema, answer.error), {
    onLeft: (error) => fail(`the ${tag} does not decode: ${error.reason}`),
    onRight: () => Effect.succeed(answer.error)
  })
}

/** The connection (or the node) still serves: the role's query is answered. */
const probe = (target: Target, session: Session, after: string) =>
  askMessage(target, session, target.probe).pipe(
    Effect.flatMap((answer) => replyOf(target.probe, answer)),
    Effect.mapError((error) => new CheckFailed({ message: `${after}: ${error.message}` }))
  )

const pause = (millis: number) => Effect.sleep(Duration.millis(millis))

const check = (
  name: string,
  run: (target: Target) => Effect.Effect<void, CheckFailed, Transport | Scope.Scope>
): Check => ({ name, run })

// A check on a connection whose handshake is done.
const opened = (
  name: string,
  run: (target: Target, session: Session) => Effect.Effect<void, CheckFailed, Transport | Scope.Scope>
): Check => check(name, (target) => Effect.flatMap(open(target), (session) => run(target, session)))

// ---- the asks of each role ----------------------------------------------------------------------------------

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

const unknownApp = Ids.AppId.make("app-00000000000000-conformance")
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

const requestExecutorsOfUnknownApp = new AppClientMessages.RequestExecutors({ appId: unknownApp, requestedTotal: 1 })

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

const masterScripts: Scripts<Endpoints.Inbound["Master"]> = {
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
  BoundPortsRequest: answered(
    new QueryMessages.BoundPortsRequest(),
    "answered with the ports it bound",
    (reply) => reply.rpcEndpointPort > 0 ? undefined : `rpcEndpointPort is ${reply.rpcEndpointPort}`
  )
}

const workerScripts: Scripts<Endpoints.Inbound["Worker"]> = {
  RequestWorkerState: answered(
    new QueryMessages.RequestWorkerState(),
    "answered with the worker's state",
    (reply) => reply.cores >= reply.coresUsed ? undefined : `uses ${reply.coresUsed} of ${reply.cores} cores`
  )
}

const askChecks = (scripts: Readonly<Record<string, AskScript>>): ReadonlyArray<Check> =>
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

// ---- checks every role passes ---------------------------------------------------------------------------------

// A hello whose nonce does not match the node's secret, or lack of one.
const refusedHello = (name: string, nonce: Uint8Array | null) =>
  check(name, (target) =>
    Effect.gen(function*() {
      const session = yield* dial(target)
      yield* session.write(frameOf(hello(nonce)))
      yield* expectRefusal(session, "AuthenticationFailed")
    }))

const handshakeChecks = (secret: boolean): ReadonlyArray<Check> => [
  secret
    ? check("handshake: the node proves the shared secret in its challenge and welcomes our proof", open)
    : check("handshake: a hello without a nonce is answered with welcome, version 1", open),
  ...(secret
    ? [
      refusedHello("handshake: a hello without a nonce is rejected with AuthenticationFailed, then closed", null),
      check(
        "handshake: a wrong proof is rejected with AuthenticationFailed, then closed",
        (target) =>
          Effect.gen(function*() {
            const session = yield* dial(target)
            yield* session.write(frameOf(hello(Handshake.makeNonce())))
            yield* expectKind(session, "challenge")
            yield* session.write(frameOf({ _tag: "proof", proof: Handshake.makeNonce() }))
            yield* expectRefusal(session, "AuthenticationFailed")
          })
      )
    ]
    : [
      refusedHello(
        "handshake: a hello with a nonce (a secret the node does not have) is rejected with AuthenticationFailed",
        Handshake.makeNonce()
      )
    ]),
  check(
    "handshake: another protocol version is rejected with ProtocolVersionMismatch, then closed",
    (target) =>
      Effect.gen(function*() {
        const session = yield* dial(target)
        const version = Envelope.protocolVersion + 1
        yield* session.write(frameOf(hello(target.key === undefined ? null : Handshake.makeNonce(), version)))
        const error = yield* expectRefusal(session, "ProtocolVersionMismatch")
        if (error.remote !== version || error.local !== Envelope.protocolVersion) {
          return yield* fail(`expected remote ${version} and local ${Envelope.protocolVersion}, got ${show(error)}`)
        }
      })
  ),
  check(
    "handshake: an ask before the handshake is rejected with AuthenticationFailed, never answered",
    (target) =>
      Effect.gen(function*() {
        const session = yield* dial(target)
        const body = yield* bodyOf(target.probe)
        yield* session.write(askFrame(target, target.endpoint, body).bytes)
        yield* expectRefusal(session, "AuthenticationFailed")
      })
  )
]

// Something the node must not answer, then the probe: the probe's answer must be the next frame.
const ignored = (name: string, bytes: (target: Target) => Effect.Effect<Uint8Array, CheckFailed>) =>
  opened(name, (target, session) =>
    Effect.gen(function*() {
      yield* session.write(yield* bytes(target))
      yield* probe(target, session, "afterwards")
    }))

const probeBody = (target: Target) => bodyOf(target.probe)

const envelopeChecks: ReadonlyArray<Check> = [
  opened(
    "envelope: an ask to an unknown endpoint fails with EndpointNotFound naming it",
    (target, session) =>
      Effect.gen(function*() {
        const answer = yield* ask(target, session, "NoSuchEndpoint", yield* probeBody(target))
        const error = yield* failureOf(target.probe, answer, "EndpointNotFound")
        if (!String(error.endpoint).includes("NoSuchEndpoint")) {
          return yield* fail(`the error does not name the endpoint: ${show(error)}`)
        }
      })
  ),
  opened(
    "envelope: an ask whose body is no message of the endpoint fails with MalformedFrame",
    (target, session) =>
      Effect.gen(function*() {
        const answer = yield* ask(target, session, target.endpoint, { _tag: "NoSuchMessage" })
        yield* failureOf(target.probe, answer, "MalformedFrame")
      })
  ),
  opened("envelope: an ask that is not a valid envelope (to is a number) but has an id fails with MalformedFrame", (
    target,
    session
  ) =>
    Effect.gen(function*() {
      const id = target.nextId()
      yield* session.write(frameOf({ _tag: "ask", id, from: null, to: 42, body: yield* probeBody(target) }))
      yield* failureOf(target.probe, yield* answerTo(session, id), "MalformedFrame")
    })),
  ignored(
    "envelope: a send to an unknown endpoint is dropped; the connection goes on",
    (target) =>
      Effect.map(probeBody(target), (body) => frameOf({ _tag: "send", from: null, to: "NoSuchEndpoint", body }))
  ),
  ignored(
    "envelope: a send whose body does not decode is dropped; the connection goes on",
    (target) =>
      Effect.succeed(frameOf({ _tag: "send", from: null, to: target.endpoint, body: { _tag: "NoSuchMessage" } }))
  ),
  ignored("envelope: a ping gets no answer; the connection goes on", () => Effect.succeed(frameOf({ _tag: "ping" }))),
  ignored(
    "envelope: an envelope of an unknown kind is dropped; the connection goes on",
    () => Effect.succeed(frameOf({ _tag: "conformance" }))
  )
]

const framingChecks: ReadonlyArray<Check> = [
  opened(
    "framing: a frame split over many writes (the header byte by byte) is read",
    (target, session) =>
      Effect.gen(function*() {
        const { bytes, id } = askFrame(target, target.endpoint, yield* probeBody(target))
        const half = Math.ceil((bytes.length + 6) / 2)
        const pieces = [0, 1, 2, 3, 4, 5].map((i) => bytes.subarray(i, i + 1))
        pieces.push(bytes.subarray(6, half), bytes.subarray(half))
        for (const piece of pieces) {
          yield* session.write(piece)
          yield* pause(5)
        }
        yield* replyOf(target.probe, yield* answerTo(session, id))
      })
  ),
  opened(
    "framing: two asks in one write are both answered, each by its id",
    (target, session) =>
      Effect.gen(function*() {
        const body = yield* probeBody(target)
        const first = askFrame(target, target.endpoint, body)
        const second = askFrame(target, target.endpoint, body)
        yield* session.write(concat([first.bytes, second.bytes]))
        const ids = new Set<unknown>()
        for (let i = 0; i < 2; i++) ids.add((yield* session.next("an answer")).value.id)
        if (!ids.has(first.id) || !ids.has(second.id)) {
          return yield* fail(`expected answers to asks ${first.id} and ${second.id}, got ${show([...ids])}`)
        }
      })
  ),
  ignored(
    "framing: a frame of bytes that are not MessagePack is dropped; the connection goes on",
    () => Effect.succeed(frame(Uint8Array.of(0xc1, 0xdc, 0xff, 0xff, 0x00)))
  ),
  ignored(
    "framing: a MessagePack value that is not a map is dropped; the connection goes on",
    () => Effect.succeed(frameOf([1, "ask", null]))
  ),
  ignored("framing: an empty frame is dropped; the connection goes on", () => Effect.succeed(frame(new Uint8Array(0)))),
  opened(
    "framing: a frame longer than the node's limit is rejected with FrameTooLarge, then closed",
    (target, session) =>
      Effect.gen(function*() {
        // The header alone says it: no node reads on into a frame it will not take.
        const header = new Uint8Array(4)
        new DataView(header.buffer).setUint32(0, Math.min(target.maxFrameSize + 1, 0xffffffff))
        yield* session.write(header)
        yield* expectRefusal(session, "FrameTooLarge")
      })
  )
]

// An ask written by hand, so that its id can be any MessagePack integer.
const rawAsk = (to: string, id: Uint8Array, body: Uint8Array) =>
  frame(map([["_tag", packed("ask")], ["id", id], ["from", packed(null)], ["to", packed(to)], ["body", body]]))

const wideIdCheck = (form: "uint64" | "int64", id: bigint) =>
  opened(
    `integers: an ask id of ${id} (≥ 2^32) written as ${form} is answered with that id`,
    (target, session) =>
      Effect.gen(function*() {
        const encoded = form === "uint64" ? uint64(id) : int64(id)
        yield* session.write(rawAsk(target.endpoint, encoded, packed(yield* probeBody(target))))
        yield* replyOf(target.probe, yield* answerTo(session, Number(id)))
      })
  )

// RequestExecutors for an unknown app, with its one integer written by hand.
const requestExecutors = (requestedTotal: Uint8Array) =>
  map([["_tag", packed("RequestExecutors")], ["appId", packed(unknownApp)], ["requestedTotal", requestedTotal]])

const integerChecks = (role: Role): ReadonlyArray<Check> => [
  wideIdCheck("uint64", 2n ** 32n + 7n),
  wideIdCheck("int64", 2n ** 40n + 3n),
  ...(role === "master"
    ? [
      opened(
        "integers: a body's integer of 2^32 + 1 written as uint64 is read as a number",
        (target, session) =>
          Effect.gen(function*() {
            const id = target.nextId()
            yield* session.write(rawAsk(target.endpoint, packed(id), requestExecutors(uint64(2n ** 32n + 1n))))
            // An unknown app, not a malformed body: the number was read.
            yield* failureOf(requestExecutorsOfUnknownApp, yield* answerTo(session, id), "AppNotFound")
          })
      ),
      opened(
        "integers: a body's integer beyond 2^53 fails with MalformedFrame naming the field",
        (target, session) =>
          Effect.gen(function*() {
            const id = target.nextId()
            yield* session.write(rawAsk(target.endpoint, packed(id), requestExecutors(uint64(2n ** 64n - 1n))))
            const error = yield* failureOf(requestExecutorsOfUnknownApp, yield* answerTo(session, id), "MalformedFrame")
            if (!String(error.reason).includes("requestedTotal")) {
              return yield* fail(`the reason does not name requestedTotal: ${show(error.reason)}`)
            }
          })
      )
    ]
    : [])
]

// A peer goes away half-way through something; the node goes on serving a connection opened before and new ones.
const survives = (name: string, leave: (target: Target, session: Session) => Effect.Effect<void, CheckFailed>, {
  handshake: shakes
}: { readonly handshake: boolean }) =>
  check(
    `disconnect: a peer that drops ${name} leaves the node serving other connections and new ones`,
    (target) =>
      Effect.gen(function*() {
        const other = yield* open(target)
        const leaving = yield* (shakes ? open(target) : dial(target))
        yield* leave(target, leaving)
        yield* leaving.drop
        yield* pause(100)
        yield* probe(target, other, "on a connection opened before")
        yield* probe(target, yield* open(target), "on a new connection")
      })
  )

const halfOf = (bytes: Uint8Array) => bytes.subarray(0, Math.ceil(bytes.length / 2))

const disconnectChecks: ReadonlyArray<Check> = [
  survives("in the middle of its handshake", (_, session) => session.write(halfOf(frameOf(hello(null)))), {
    handshake: false
  }),
  survives(
    "in the middle of a frame",
    (target, session) =>
      Effect.flatMap(probeBody(target), (body) => session.write(halfOf(askFrame(target, target.endpoint, body).bytes))),
    { handshake: true }
  ),
  survives(
    "with an ask unanswered",
    (target, session) =>
      Effect.flatMap(probeBody(target), (body) => session.write(askFrame(target, target.endpoint, body).bytes)),
    { handshake: true }
  )
]

const masterOnly: ReadonlyArray<Check> = [
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

/**
 * The checks for a node of `role`; which handshake checks depends on whether a secret is given. The first one
 * is the plain handshake: when it fails, the others are not run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checks = (options: Pick<Options, "role" | "secret">): ReadonlyArray<Check> => [
  ...handshakeChecks(options.secret !== undefined),
  ...envelopeChecks,
  ...framingChecks,
  ...integerChecks(options.role),
  ...askChecks(options.role === "master" ? masterScripts : workerScripts),
  ...(options.role === "master" ? masterOnly : []),
  ...disconnectChecks
]

/**
 * Runs every check against the node, one after the other, and answers their results; `report` sees each result
 * as it comes.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  options: Options,
  report: (result: Result) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<ReadonlyArray<Result>, never, Transport> =>
  Effect.gen(function*() {
    const secret = options.secret
    let id = 0
    const target: Target = {
      host: options.host,
      port: options.port,
      key: secret === undefined ? undefined : yield* Effect.promise(() => Handshake.importSecret(secret)),
      timeout: Duration.decode(options.timeout ?? "5 seconds"),
      maxFrameSize: options.maxFrameSize ?? Envelope.defaultMaxFrameSize,
      endpoint: options.role === "master" ? EndpointNames.master : EndpointNames.worker,
      probe: options.role === "master"
        ? new QueryMessages.RequestMasterState()
        : new QueryMessages.RequestWorkerState(),
      nextId: () => ++id
    }
    const all = checks(options)
    const results: Array<Result> = []
    let blocked: string | undefined
    for (const [index, { name, run }] of all.entries()) {
      const outcome = blocked !== undefined
        ? Either.left(new CheckFailed({ message: `not run: ${blocked}` }))
        : yield* run(target).pipe(
          Effect.scoped,
          // Each step waits at most the timeout; a conversation has a few of them.
          Effect.timeoutFail({
            duration: Duration.times(target.timeout, 4),
            onTimeout: () => new CheckFailed({ message: "the conversation did not end in time" })
          }),
          Effect.either
        )
      const result: Result = Either.isRight(outcome)
        ? { name, passed: true, detail: "" }
        : { name, passed: false, detail: outcome.left.message }
      if (index === 0 && !result.passed) blocked = "the node did not complete the handshake"
      results.push(result)
      yield* report(result)
    }
    return results
  })

/**
 * A result as one line: `pass  <check>` or `FAIL  <check>: <why>`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (result: Result): string =>
  result.passed ? `pass  ${result.name}` : `FAIL  ${result.name}: ${result.detail}`
