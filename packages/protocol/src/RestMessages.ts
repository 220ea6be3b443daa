/**
 * Spark's REST submission protocol, which a master serves on its REST port (6066) under `/v1/submissions`: the
 * JSON messages, with Spark's names, and the rules of its wire. A message names its class in `action`; its
 * properties are written in alphabetical order, absent ones left out, pretty-printed as Spark's server prints
 * them; properties a reader does not know are ignored. Spark's tools (`spark-submit --status/--kill`) and
 * scripts written for Spark's REST API talk to a Kindling master through these, and a tool can use them to talk
 * to either.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { DriverState } from "./States.js"

/**
 * The protocol version, the first segment of every path.
 *
 * @since 0.1.0
 * @category constants
 */
export const protocolVersion = "v1"

/**
 * The HTTP status of an answer to a path with another protocol version (Spark's `SC_UNKNOWN_PROTOCOL_VERSION`).
 *
 * @since 0.1.0
 * @category constants
 */
export const unknownProtocolVersionStatus = 468

// Spark's parser maps `null` to an absent property, and its writer leaves absent properties out.
const optional = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { exact: true, nullable: true })

const Strings = Schema.Record({ key: Schema.String, value: Schema.String })

// The Spark properties whose values Spark's server checks before anything else, and what they must look like
// (Scala's `toBoolean`, Java's `toDouble`, and Spark's size strings).
const propertyChecks: ReadonlyArray<readonly [key: string, kind: string, test: (value: string) => boolean]> = [
  ["spark.driver.supervise", "boolean", (value) => /^(true|false)$/i.test(value)],
  ["spark.driver.cores", "numeric", (value) => isNumeric(value)],
  ["spark.cores.max", "numeric", (value) => isNumeric(value)],
  ["spark.driver.memory", "memory", (value) => /^\d+([kmgtp]?b|[kmgtp])?$/i.test(value.trim())],
  ["spark.executor.memory", "memory", (value) => /^\d+([kmgtp]?b|[kmgtp])?$/i.test(value.trim())]
]

const isNumeric = (value: string) =>
  /^[+-]?(NaN|Infinity)$/.test(value.trim()) || (value.trim() !== "" && !Number.isNaN(Number(value.trim())))

const checkProperties = (properties: Readonly<Record<string, string>>): string | undefined => {
  for (const [key, kind, test] of propertyChecks) {
    const value = properties[key]
    if (value !== undefined && !test(value)) return `Property '${key}' expected ${kind} value: actual was '${value}'.`
  }
  return undefined
}

/**
 * Launch a driver (`POST /v1/submissions/create`). `appResource` is the app, `appArgs` its arguments and
 * `sparkProperties` its configuration; `mainClass` names a JVM main class and means nothing to a Kindling app.
 * Besides the fields, the properties Spark's server checks must be well-formed: `spark.driver.supervise` a
 * boolean, `spark.driver.cores` and `spark.cores.max` numbers, `spark.driver.memory` and `spark.executor.memory`
 * sizes.
 *
 * @since 0.1.0
 * @category requests
 */
export class CreateSubmissionRequest extends Schema.Class<CreateSubmissionRequest>("CreateSubmissionRequest")(
  Schema.Struct({
    action: Schema.tag("CreateSubmissionRequest"),
    appArgs: optional(Schema.Array(Schema.String)),
    appResource: Schema.String,
    clientSparkVersion: Schema.String,
    environmentVariables: optional(Strings),
    mainClass: optional(Schema.String),
    message: optional(Schema.String),
    sparkProperties: Strings
  }).pipe(Schema.filter((request) => checkProperties(request.sparkProperties))),
  { description: "Launch a driver: the app, its arguments, its configuration and its environment" }
) {}

/**
 * The answer to a create: `success` and `message` are the master's, `submissionId` the driver's id;
 * `unknownFields` lists the request's properties the server did not know.
 *
 * @since 0.1.0
 * @category responses
 */
export class CreateSubmissionResponse extends Schema.Class<CreateSubmissionResponse>("CreateSubmissionResponse")({
  action: Schema.tag("CreateSubmissionResponse"),
  message: optional(Schema.String),
  serverSparkVersion: Schema.String,
  submissionId: optional(Schema.String),
  success: Schema.Boolean,
  unknownFields: optional(Schema.Array(Schema.String))
}, { description: "Whether the driver was submitted, and its id" }) {}

/**
 * The answer to `POST /v1/submissions/kill/<id>`.
 *
 * @since 0.1.0
 * @category responses
 */
export class KillSubmissionResponse extends Schema.Class<KillSubmissionResponse>("KillSubmissionResponse")({
  action: Schema.tag("KillSubmissionResponse"),
  message: optional(Schema.String),
  serverSparkVersion: Schema.String,
  submissionId: Schema.String,
  success: Schema.Boolean
}, { description: "Whether the kill was carried out or sent to the driver's worker" }) {}

/**
 * The answer to `POST /v1/submissions/killall`.
 *
 * @since 0.1.0
 * @category responses
 */
export class KillAllSubmissionResponse extends Schema.Class<KillAllSubmissionResponse>("KillAllSubmissionResponse")({
  action: Schema.tag("KillAllSubmissionResponse"),
  message: optional(Schema.String),
  serverSparkVersion: Schema.String,
  success: Schema.Boolean
}, { description: "Whether every active driver was killed or sent a kill" }) {}

/**
 * The answer to `GET /v1/submissions/status/<id>`: `success` says whether the master knows the driver; `message`
 * carries the exception it ended with ("Exception from the cluster:\n…").
 *
 * @since 0.1.0
 * @category responses
 */
export class SubmissionStatusResponse extends Schema.Class<SubmissionStatusResponse>("SubmissionStatusResponse")({
  action: Schema.tag("SubmissionStatusResponse"),
  driverState: optional(DriverState),
  message: optional(Schema.String),
  serverSparkVersion: Schema.String,
  submissionId: Schema.String,
  success: Schema.Boolean,
  workerHostPort: optional(Schema.String),
  workerId: optional(Schema.String)
}, { description: "A driver's state and the worker it runs on" }) {}

/**
 * The answer to `POST /v1/submissions/clear` (forget completed drivers and apps).
 *
 * @since 0.1.0
 * @category responses
 */
export class ClearResponse extends Schema.Class<ClearResponse>("ClearResponse")({
  action: Schema.tag("ClearResponse"),
  message: optional(Schema.String),
  serverSparkVersion: Schema.String,
  success: Schema.Boolean
}, { description: "Whether the completed drivers and apps were forgotten" }) {}

/**
 * The answer to `GET /v1/submissions/readyz` from a master that is ready (one that is not is answered with a 503
 * and an `ErrorResponse`).
 *
 * @since 0.1.0
 * @category responses
 */
export class ReadyzResponse extends Schema.Class<ReadyzResponse>("ReadyzResponse")({
  action: Schema.tag("ReadyzResponse"),
  message: optional(Schema.String),
  serverSparkVersion: Schema.String,
  success: Schema.Boolean
}, { description: "Whether the master is ready (not STANDBY)" }) {}

/**
 * What a request that cannot be carried out gets, with a 4xx or 5xx status; `highestProtocolVersion` is set
 * when the request's protocol version is unknown.
 *
 * @since 0.1.0
 * @category responses
 */
export class ErrorResponse extends Schema.Class<ErrorResponse>("ErrorResponse")({
  action: Schema.tag("ErrorResponse"),
  highestProtocolVersion: optional(Schema.String),
  message: Schema.String,
  serverSparkVersion: Schema.String
}, { description: "Why a request was not carried out" }) {}

/**
 * Every answer of a REST submission server.
 *
 * @since 0.1.0
 * @category unions
 */
export const RestResponse = Schema.Union(
  CreateSubmissionResponse,
  KillSubmissionResponse,
  KillAllSubmissionResponse,
  SubmissionStatusResponse,
  ClearResponse,
  ReadyzResponse,
  ErrorResponse
)
/**
 * @since 0.1.0
 * @category unions
 */
export type RestResponse = typeof RestResponse.Type

/**
 * Every message of the protocol, as `action` names them.
 *
 * @since 0.1.0
 * @category unions
 */
export const RestMessage = Schema.Union(CreateSubmissionRequest, ...RestResponse.members)
/**
 * @since 0.1.0
 * @category unions
 */
export type RestMessage = typeof RestMessage.Type

// Each message's decoder and the properties it has, by its action.
const classes: ReadonlyMap<string, {
  readonly decode: (json: unknown) => Either.Either<RestMessage, ParseResult.ParseError>
  readonly fields: ReadonlySet<string>
}> = new Map(
  RestMessage.members.map((member) => [member.identifier, {
    decode: Schema.decodeUnknownEither(member as Schema.Schema<RestMessage, any>),
    fields: new Set(Object.keys(member.fields))
  }])
)

/**
 * A body that is not a message of the protocol; `reason` is what follows "Malformed request: " in the answer.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedRestMessage extends Data.TaggedError("MalformedRestMessage")<{ readonly reason: string }> {
  override get message() {
    return `Malformed request: ${this.reason}`
  }
}

// Bodies are quoted back to their sender; a huge one is not.
const quote = (text: string) => (text.length > 1000 ? `${text.slice(0, 1000)}… (${text.length} characters)` : text)

const describeIssues = (error: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ")

/**
 * Reads a body as the message its `action` names, as Spark's server does, with the properties the message does
 * not have (`unknownFields`).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (
  text: string
): Either.Either<
  { readonly message: RestMessage; readonly unknownFields: ReadonlyArray<string> },
  MalformedRestMessage
> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(new MalformedRestMessage({ reason: `the body is not JSON: ${(error as Error).message}` }))
  }
  const action = typeof json === "object" && json !== null && !Array.isArray(json)
    ? (json as Record<string, unknown>).action
    : undefined
  if (typeof action !== "string") {
    return Either.left(new MalformedRestMessage({ reason: `Action field not found in JSON:\n${quote(text)}` }))
  }
  const schema = classes.get(action)
  if (schema === undefined) {
    return Either.left(new MalformedRestMessage({ reason: `Unknown message type '${quote(action)}'.` }))
  }
  return schema.decode(json).pipe(
    Either.mapLeft((error) =>
      new MalformedRestMessage({ reason: `Validation of message ${action} failed: ${describeIssues(error)}` })
    ),
    Either.map((message) => ({
      message,
      unknownFields: Object.keys(json as object).filter((field) => !schema.fields.has(field))
    }))
  )
}

// Jackson's default pretty printer, which Spark's server uses: `"key" : value`, two spaces a level, arrays on
// one line.
const render = (value: unknown, indent: string): string => {
  if (Array.isArray(value)) {
    return value.length === 0 ? "[ ]" : `[ ${value.map((item) => render(item, indent)).join(", ")} ]`
  }
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
    if (keys.length === 0) return "{ }"
    const inner = `${indent}  `
    const lines = keys.map((key) => `${inner}${JSON.stringify(key)} : ${render(record[key], inner)}`)
    return `{\n${lines.join(",\n")}\n${indent}}`
  }
  return JSON.stringify(value)
}

/**
 * A message as the wire carries it: its properties (and those of its maps) in alphabetical order, absent ones left
 * out, pretty-printed as Spark's server prints it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const toJson = (message: RestMessage): string => render(Schema.encodeSync(RestMessage)(message), "")
