/**
 * Replies to asks on the wire: a handler's outcome as the `reply` or `failure` envelope its asker receives, and
 * that envelope back as the typed outcome on the asker's side — through the request's own result schemas
 * (`Schema.WithResult`), with the RpcEnv's own errors beside the request's. Handed over in process, the envelope
 * holds the outcome itself.
 */
import { Codec, type Envelope, Errors } from "@kindling/protocol"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"

type ResultSchemas = {
  readonly success: Schema.Schema<any, any, never>
  readonly failure: Schema.Schema<any, any, never>
}

const resultSchemas = (message: Codec.Message): ResultSchemas | undefined =>
  Schema.symbolWithResult in message
    ? (message as unknown as Schema.WithResult.Any)[Schema.symbolWithResult] as unknown as ResultSchemas
    : undefined

// The failure side of a reply may be one of the request's errors or one of the RpcEnv's own.
const failureUnions = new WeakMap<object, Schema.Schema<any, any, never>>()
const failureUnionOf = (schemas: ResultSchemas | undefined): Schema.Schema<any, any, never> => {
  if (schemas === undefined) return Errors.RpcError
  let union = failureUnions.get(schemas.failure)
  if (union === undefined) {
    union = Schema.Union(schemas.failure, Errors.RpcError)
    failureUnions.set(schemas.failure, union)
  }
  return union
}

const isRpcError = Schema.is(Errors.RpcError)

export type ReplyEnvelope = Extract<Envelope.Envelope, { readonly _tag: "reply" | "failure" }>

const describeCause = (cause: Cause.Cause<unknown>): string => {
  const text = Cause.pretty(cause)
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text
}

// A handler's outcome as its asker gets it: the reply, or one of the request's declared errors, or an RpcEnv error
// (a handler's undeclared failure or defect becomes `RemoteHandlerError`).
const outcomeOf = (
  endpoint: string,
  request: Codec.Message,
  schemas: ResultSchemas | undefined,
  exit: Exit.Exit<unknown, unknown>
): Either.Either<unknown, unknown> => {
  if (Exit.isSuccess(exit)) return Either.right(schemas === undefined ? null : exit.value)
  const error = Cause.failureOption(exit.cause)
  if (error._tag === "None") {
    return Either.left(
      new Errors.RemoteHandlerError({ endpoint, request: request._tag, reason: describeCause(exit.cause) })
    )
  }
  const declared = schemas !== undefined && Schema.is(schemas.failure)(error.value)
  return Either.left(
    declared || isRpcError(error.value)
      ? error.value
      : new Errors.RemoteHandlerError({ endpoint, request: request._tag, reason: String(error.value) })
  )
}

// A handler's outcome, as the reply or failure envelope the asker will receive.
export const replyEnvelope = (
  id: number,
  endpoint: string,
  request: Codec.Message,
  exit: Exit.Exit<unknown, unknown>
): ReplyEnvelope => {
  const schemas = resultSchemas(request)
  const failure = (error: unknown): ReplyEnvelope => {
    if (schemas !== undefined && Schema.is(schemas.failure)(error)) {
      const encoded = Codec.encodeWith(schemas.failure, error)
      if (Either.isRight(encoded)) return { _tag: "failure", id, error: encoded.right }
    }
    const typed = isRpcError(error)
      ? error
      : new Errors.RemoteHandlerError({ endpoint, request: request._tag, reason: String(error) })
    return { _tag: "failure", id, error: Either.getOrThrow(Codec.encodeWith(Errors.RpcError, typed)) }
  }
  const outcome = outcomeOf(endpoint, request, schemas, exit)
  if (Either.isLeft(outcome)) return failure(outcome.left)
  if (schemas === undefined) return { _tag: "reply", id, body: null }
  const encoded = Codec.encodeWith(schemas.success, outcome.right)
  return Either.isRight(encoded) ? { _tag: "reply", id, body: encoded.right } : failure(encoded.left)
}

// The same outcome handed over in process: the envelope carries the reply or error itself, not its encoding.
export const handedReply = (
  id: number,
  endpoint: string,
  request: Codec.Message,
  exit: Exit.Exit<unknown, unknown>
): ReplyEnvelope => {
  const outcome = outcomeOf(endpoint, request, resultSchemas(request), exit)
  return Either.isRight(outcome)
    ? { _tag: "reply", id, body: outcome.right }
    : { _tag: "failure", id, error: outcome.left }
}

// The asker's side: the envelope back to the typed outcome; a handed one holds it already.
export const replyEffect = (
  request: Codec.Message,
  envelope: ReplyEnvelope,
  handed: boolean
): Effect.Effect<unknown, unknown> => {
  const schemas = resultSchemas(request)
  if (envelope._tag === "reply") {
    if (schemas === undefined) return Effect.void
    if (handed) return Effect.succeed(envelope.body)
    const decoded = Codec.decodeWith(schemas.success, envelope.body)
    return Either.isRight(decoded) ? Effect.succeed(decoded.right) : Effect.fail(decoded.left)
  }
  if (handed) return Effect.fail(envelope.error)
  const decoded = Codec.decodeWith(failureUnionOf(schemas), envelope.error)
  return Effect.fail(Either.isRight(decoded) ? decoded.right : decoded.left)
}
