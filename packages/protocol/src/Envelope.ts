/**
 * What one frame carries. A connection starts with a handshake (`hello`, then optionally `challenge` and
 * `proof`, then `welcome`, or `reject` from either side); only after `welcome` do `send`, `ask`, `reply` and
 * `failure` flow, in both directions. Message bodies are the schema-encoded messages, with their `_tag`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Bytes } from "./ClusterMessages.js"
import { RpcAddress } from "./RpcAddress.js"

/**
 * The version of this wire protocol. Nodes of different versions refuse each other in the handshake.
 *
 * @since 0.1.0
 * @category constants
 */
export const protocolVersion = 1

/**
 * The default maximum frame size, 128 MiB (Spark's `spark.rpc.message.maxSize`).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxFrameSize = 128 * 1024 * 1024

const NodeAddress = Schema.NullOr(RpcAddress).annotations({
  description: "the sender's listening address, or null for a client-only node"
})
const RequestId = Schema.NonNegativeInt.annotations({ description: "chosen by the asker, unique per connection" })
// Any MessagePack value; a missing one is malformed (MessagePack has no `undefined`).
const Present = Schema.Unknown.pipe(
  Schema.filter((u): u is unknown => u !== undefined, { message: () => "is missing" })
)
const Body = Present.annotations({
  description: "a schema-encoded message: a map with its _tag",
  jsonSchema: { type: "object", required: ["_tag"], properties: { _tag: { type: "string" } } }
})

/**
 * The dialling node opens with its version and address; `nonce` is present when it has a shared secret.
 *
 * @since 0.1.0
 * @category handshake
 */
export const Hello = Schema.TaggedStruct("hello", {
  version: Schema.Int,
  address: NodeAddress,
  nonce: Schema.NullOr(Bytes)
}).annotations({ identifier: "Hello", description: "dialler → listener: version, address, client nonce" })

/**
 * The listener's nonce and its proof of the secret: HMAC-SHA256(secret, "kindling-server" ‖ client nonce ‖
 * server nonce).
 *
 * @since 0.1.0
 * @category handshake
 */
export const Challenge = Schema.TaggedStruct("challenge", {
  nonce: Bytes,
  proof: Bytes
}).annotations({ identifier: "Challenge", description: "listener → dialler: server nonce and server proof" })

/**
 * The dialler's proof: HMAC-SHA256(secret, "kindling-client" ‖ server nonce ‖ client nonce).
 *
 * @since 0.1.0
 * @category handshake
 */
export const Proof = Schema.TaggedStruct("proof", {
  proof: Bytes
}).annotations({ identifier: "Proof", description: "dialler → listener: client proof" })

/**
 * The handshake is complete; messages may flow.
 *
 * @since 0.1.0
 * @category handshake
 */
export const Welcome = Schema.TaggedStruct("welcome", {
  version: Schema.Int,
  address: NodeAddress
}).annotations({ identifier: "Welcome", description: "listener → dialler: handshake complete" })

/**
 * The sender refuses the connection (a schema-encoded error, e.g. `AuthenticationFailed`) and closes it.
 *
 * @since 0.1.0
 * @category handshake
 */
export const Reject = Schema.TaggedStruct("reject", {
  error: Body
}).annotations({ identifier: "Reject", description: "either side: the connection is refused, then closed" })

/**
 * A one-way message to the endpoint named `to`.
 *
 * @since 0.1.0
 * @category messages
 */
export const Send = Schema.TaggedStruct("send", {
  from: NodeAddress,
  to: Schema.String,
  body: Body
}).annotations({ identifier: "Send", description: "a one-way message to endpoint `to`" })

/**
 * A request to the endpoint named `to`; answered by a `reply` or `failure` with the same `id`.
 *
 * @since 0.1.0
 * @category messages
 */
export const Ask = Schema.TaggedStruct("ask", {
  id: RequestId,
  from: NodeAddress,
  to: Schema.String,
  body: Body
}).annotations({ identifier: "Ask", description: "a request to endpoint `to`, answered with the same id" })

/**
 * The successful answer to an ask, encoded with the request's reply schema.
 *
 * @since 0.1.0
 * @category messages
 */
export const Reply = Schema.TaggedStruct("reply", {
  id: RequestId,
  body: Present.annotations({
    description: "the reply, encoded with the request's reply schema",
    jsonSchema: {}
  })
}).annotations({ identifier: "Reply", description: "the answer to the ask with this id" })

/**
 * The failed answer to an ask: one of the request's declared errors, or an RpcEnv error.
 *
 * @since 0.1.0
 * @category messages
 */
export const Failure = Schema.TaggedStruct("failure", {
  id: RequestId,
  error: Body
}).annotations({ identifier: "Failure", description: "the ask with this id failed with a typed error" })

/**
 * @since 0.1.0
 * @category models
 */
export const Envelope = Schema.Union(Hello, Challenge, Proof, Welcome, Reject, Send, Ask, Reply, Failure).annotations({
  identifier: "Envelope",
  description: "one frame's content"
})
/**
 * @since 0.1.0
 * @category models
 */
export type Envelope = typeof Envelope.Type
/**
 * @since 0.1.0
 * @category models
 */
export type EnvelopeEncoded = typeof Envelope.Encoded
