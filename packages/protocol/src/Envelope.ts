/**
 * What one frame carries. A connection starts with a handshake (`hello`, then optionally `challenge` and
 * `proof`, then `welcome`, or `reject` from either side). After `welcome`, a control connection carries `send`,
 * `ask`, `reply` and `failure` in both directions (message bodies are the schema-encoded messages, with their
 * `_tag`); a data connection carries the data plane's `fetch`, `credit` and `cancel` from the dialler and
 * `chunk`, `end` and `fetchFailed` from the listener.
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
 * What a connection is for. A control connection carries messages and makes the two nodes peers; a data
 * connection carries only the data plane's streams, so bulk bytes never queue in front of a message.
 *
 * @since 0.1.0
 * @category handshake
 */
export const Purpose = Schema.Literal("control", "data").annotations({
  identifier: "Purpose",
  description: "what a connection is for: \"control\" (messages) or \"data\" (the data plane's streams)"
})
/**
 * @since 0.1.0
 * @category handshake
 */
export type Purpose = typeof Purpose.Type

/**
 * The dialling node opens with its version and address; `nonce` is present when it has a shared secret.
 * `purpose` is absent on a control connection, which is what a node that predates the data plane sends.
 *
 * @since 0.1.0
 * @category handshake
 */
export const Hello = Schema.TaggedStruct("hello", {
  version: Schema.Int,
  address: NodeAddress,
  nonce: Schema.NullOr(Bytes),
  purpose: Schema.optionalWith(Purpose, { exact: true })
}).annotations({ identifier: "Hello", description: "dialler → listener: version, address, client nonce, purpose" })

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
 * Keeps a quiet control connection open: a node sends one when it has sent nothing for a quarter of its idle
 * timeout (`kindling.network.timeout`), and closes a connection on which it has received nothing for the whole
 * timeout while it waits for no reply. It needs no answer.
 *
 * @since 0.1.0
 * @category messages
 */
export const Ping = Schema.TaggedStruct("ping", {}).annotations({
  identifier: "Ping",
  description: "keeps a quiet connection open; no answer"
})

const StreamId = Schema.NonNegativeInt.annotations({
  description: "chosen by the fetcher, unique per connection"
})
const Offset = Schema.NonNegativeInt.annotations({ description: "a byte position in the block" })

/**
 * Asks for the bytes of a block from `offset` on, granting `window` bytes of credit to start with (0 is
 * allowed: the server then sends nothing but `end` or `fetchFailed` until a `credit`). `checksums: false` says
 * the fetcher checks the block's bytes itself (a shuffle block's frames carry their own CRC-32, checked from the
 * map task's write to the reduce task's read): its chunks then come without a `crc`, which would only check
 * again, at a third of the data plane's CPU, what is checked end to end. Absent, it is true.
 *
 * @since 0.1.0
 * @category data plane
 */
export const Fetch = Schema.TaggedStruct("fetch", {
  id: StreamId,
  block: Schema.String,
  offset: Offset,
  window: Schema.NonNegativeInt,
  checksums: Schema.optionalWith(
    Schema.Boolean.annotations({ description: "false: chunks without crc, the fetcher checks the bytes itself" }),
    { exact: true }
  )
}).annotations({ identifier: "Fetch", description: "fetcher → server: open a stream of a block's bytes" })

/**
 * The next bytes of a stream, starting at `offset`, with their CRC-32 (IEEE 802.3, as zlib's `crc32`) unless the
 * fetch asked for none. A chunk never carries more than the credit the fetcher has granted and the server has not
 * used yet.
 *
 * @since 0.1.0
 * @category data plane
 */
export const Chunk = Schema.TaggedStruct("chunk", {
  id: StreamId,
  offset: Offset,
  crc: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(0, 0xffffffff)).annotations({
      description: "CRC-32 of data; absent when the fetch asked for no checksums"
    }),
    { exact: true }
  ),
  data: Bytes
}).annotations({ identifier: "Chunk", description: "server → fetcher: bytes of the stream at offset" })

/**
 * More credit: the server may send `bytes` more bytes of the stream.
 *
 * @since 0.1.0
 * @category data plane
 */
export const Credit = Schema.TaggedStruct("credit", {
  id: StreamId,
  bytes: Schema.Int.pipe(Schema.positive())
}).annotations({ identifier: "Credit", description: "fetcher → server: the server may send this many more bytes" })

/**
 * Every byte of the block has been sent; `size` is the block's size, which the fetcher checks against the
 * offset it has reached.
 *
 * @since 0.1.0
 * @category data plane
 */
export const End = Schema.TaggedStruct("end", {
  id: StreamId,
  size: Schema.NonNegativeInt
}).annotations({ identifier: "End", description: "server → fetcher: the stream is complete" })

/**
 * The fetcher no longer wants the stream; the server stops sending it (chunks already on the way are ignored).
 *
 * @since 0.1.0
 * @category data plane
 */
export const Cancel = Schema.TaggedStruct("cancel", {
  id: StreamId
}).annotations({ identifier: "Cancel", description: "fetcher → server: stop the stream" })

/**
 * The server cannot serve the stream: a schema-encoded `BlockNotFound` or `TransferRefused`.
 *
 * @since 0.1.0
 * @category data plane
 */
export const FetchFailed = Schema.TaggedStruct("fetchFailed", {
  id: StreamId,
  error: Body
}).annotations({ identifier: "FetchFailed", description: "server → fetcher: the stream failed with a typed error" })

/**
 * The envelopes of a data connection.
 *
 * @since 0.1.0
 * @category data plane
 */
export const DataEnvelope = Schema.Union(Fetch, Chunk, Credit, End, Cancel, FetchFailed)
/**
 * @since 0.1.0
 * @category data plane
 */
export type DataEnvelope = typeof DataEnvelope.Type

/**
 * @since 0.1.0
 * @category models
 */
export const Envelope = Schema.Union(
  Hello,
  Challenge,
  Proof,
  Welcome,
  Reject,
  Send,
  Ask,
  Reply,
  Failure,
  Ping,
  Fetch,
  Chunk,
  Credit,
  End,
  Cancel,
  FetchFailed
).annotations({
  identifier: "Envelope",
  description: "one frame's content"
})
/**
 * @since 0.1.0
 * @category models
 */
export type Envelope = typeof Envelope.Type
