// The conformance kit's conversations with a node: the target it plays against, the handshake as the docs
// describe it, asks and their answers checked against the request's schemas, the probe that shows a connection
// still serves, and the constructors of checks on top of them.
import { Codec, Envelope, Errors, RpcAddress } from "@kindling/protocol"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Check } from "../Conformance.js"
import type { ReplyOf } from "../RpcEnv.js"
import type { Transport } from "../Transport.js"
import { CheckFailed, connect, fail, frameOf, type Received, type Session, show } from "./conformanceSession.js"
import * as Handshake from "./handshake.js"

export interface Target {
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

export type Request = Codec.Message & Schema.WithResult.All

export const hello = (nonce: Uint8Array | null, version = Envelope.protocolVersion) => ({
  _tag: "hello",
  version,
  address: null,
  nonce
})

export const expectKind = (session: Session, kind: string) =>
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

export const dial = (target: Target) => connect(target.host, target.port, target.timeout)

/** A connection whose handshake is complete. */
export const open = (target: Target) => Effect.tap(dial(target), (session) => handshake(target, session))

/** The node refuses the connection with `error` and closes it. */
export const expectRefusal = (session: Session, error: string) =>
  Effect.gen(function*() {
    const { value } = yield* session.next(`a reject with ${error}`)
    const tag = (value.error as { readonly _tag?: unknown } | undefined)?._tag
    if (value._tag !== "reject" || tag !== error) {
      return yield* fail(`expected a reject with ${error}, got ${show(value)}`)
    }
    yield* session.closedByNode(`after its reject`)
    return value.error as Record<string, unknown>
  })

export type Answer =
  | { readonly _tag: "reply"; readonly body: unknown }
  | { readonly _tag: "failure"; readonly error: Record<string, unknown> }

/** The node's answer to the ask `id`; integers of 2^32 and more must be MessagePack integers in it. */
export const answerTo = (session: Session, id: number) =>
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

export const askFrame = (target: Target, to: string, body: unknown) => {
  const id = target.nextId()
  return { id, bytes: frameOf({ _tag: "ask", id, from: null, to, body }) }
}

export const ask = (target: Target, session: Session, to: string, body: unknown) => {
  const { bytes, id } = askFrame(target, to, body)
  return Effect.zipRight(session.write(bytes), answerTo(session, id))
}

export const bodyOf = (message: Codec.Message) =>
  Either.match(Codec.encodeMessage(message), {
    onLeft: (error) => fail(`cannot encode ${message._tag}: ${error.reason}`),
    onRight: Effect.succeed
  })

export const askMessage = (target: Target, session: Session, message: Codec.Message) =>
  Effect.flatMap(bodyOf(message), (body) => ask(target, session, target.endpoint, body))

interface ResultSchemas {
  readonly success: Schema.Schema<any, any, never>
  readonly failure: Schema.Schema<any, any, never>
}

const schemasOf = (request: Request): ResultSchemas =>
  (request as unknown as { readonly [Schema.symbolWithResult]: ResultSchemas })[Schema.symbolWithResult]

/** The reply the request's schema describes. */
export const replyOf = <M extends Request>(request: M, answer: Answer) => {
  if (answer._tag === "failure") return fail(`${request._tag} failed with ${show(answer.error)}`)
  return Either.match(Codec.decodeWith(schemasOf(request).success, answer.body), {
    onLeft: (error) => fail(`the reply to ${request._tag} does not decode: ${error.reason}`),
    onRight: (reply) => Effect.succeed(reply as ReplyOf<M>)
  })
}

/** A failure with the error `tag`, one of the request's errors or the RpcEnv's, that decodes as such. */
export const failureOf = (request: Request, answer: Answer, tag: string) => {
  if (answer._tag === "reply") return fail(`expected ${tag}, got the reply ${show(answer.body)}`)
  if (answer.error._tag !== tag) return fail(`expected ${tag}, got ${show(answer.error)}`)
  const schema = Schema.Union(schemasOf(request).failure, Errors.RpcError)
  return Either.match(Codec.decodeWith(schema, answer.error), {
    onLeft: (error) => fail(`the ${tag} does not decode: ${error.reason}`),
    onRight: () => Effect.succeed(answer.error)
  })
}

/** The connection (or the node) still serves: the role's query is answered. */
export const probe = (target: Target, session: Session, after: string) =>
  askMessage(target, session, target.probe).pipe(
    Effect.flatMap((answer) => replyOf(target.probe, answer)),
    Effect.mapError((error) => new CheckFailed({ message: `${after}: ${error.message}` }))
  )

export const pause = (millis: number) => Effect.sleep(Duration.millis(millis))

export const check = (
  name: string,
  run: (target: Target) => Effect.Effect<void, CheckFailed, Transport | Scope.Scope>
): Check => ({ name, run })

// A check on a connection whose handshake is done.
export const opened = (
  name: string,
  run: (target: Target, session: Session) => Effect.Effect<void, CheckFailed, Transport | Scope.Scope>
): Check => check(name, (target) => Effect.flatMap(open(target), (session) => run(target, session)))

// Something the node must not answer, then the probe: the probe's answer must be the next frame.
export const ignored = (name: string, bytes: (target: Target) => Effect.Effect<Uint8Array, CheckFailed>) =>
  opened(name, (target, session) =>
    Effect.gen(function*() {
      yield* session.write(yield* bytes(target))
      yield* probe(target, session, "afterwards")
    }))

export const probeBody = (target: Target) => bodyOf(target.probe)
