/**
 * Spark's RPC model over Kindling's wire: named endpoints on a node, one-way `send`, `ask` with a timeout and a
 * typed reply, connect and disconnect notifications, one connection per pair of nodes used in both directions,
 * a frame-size limit on both sides, the protocol version and an optional shared-secret handshake.
 *
 * @since 0.1.0
 */
import type { Codec, Errors, RpcAddress } from "@kindling/protocol"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as DataPlane from "./DataPlane.js"
import * as internal from "./internal/rpcEnv.js"
import type { ListenFailed, Transport } from "./Transport.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The host to listen on and advertise; omit with `port` for a client-only node that accepts no connections. */
  readonly host?: string
  /** The port to listen on; 0 picks a free one. */
  readonly port?: number
  /** The host other nodes should dial, when it differs from the listening host (e.g. listening on 0.0.0.0). */
  readonly advertisedHost?: string
  /** A shared secret; when set, every connection must pass the HMAC-SHA256 challenge-response first. */
  readonly secret?: string
  /** The largest frame sent or accepted, in bytes (default 128 MiB). */
  readonly maxFrameSize?: number
  /** The default ask timeout (default 120 s, Spark's `spark.rpc.askTimeout`). */
  readonly askTimeout?: Duration.DurationInput
  /**
   * How long an incoming connection may take to complete its handshake (default 10 s,
   * `kindling.rpc.handshakeTimeout`); then it is closed.
   */
  readonly handshakeTimeout?: Duration.DurationInput
  /**
   * How long dialling a node may take, connecting and handshake together (default 2 s,
   * `kindling.rpc.lookupTimeout`): past it the node counts as unreachable, and asks and sends to it fail with
   * `ConnectFailed`.
   */
  readonly lookupTimeout?: Duration.DurationInput
  /**
   * A control connection on which nothing has arrived for this long, while this node waits for no reply on it,
   * is closed, as is one on which a frame has been arriving for this long without completing (default 120 s,
   * `kindling.network.timeout`). Nodes send a `ping` on a connection they have been quiet on for a quarter of it.
   */
  readonly idleTimeout?: Duration.DurationInput
  /**
   * The most connections this node keeps open (default 4096). When a new one would pass it, a connection still
   * in its handshake or one that has never carried a message makes room, oldest first; connections that carry
   * messages (registered workers, apps) are never the ones to go. Without such room, the new one is refused.
   */
  readonly maxConnections?: number
  /**
   * The most incoming connections in their handshake at once (default 64). A new connection is never refused for
   * it: one in its handshake makes room, a silent one (a cluster member says hello as soon as it connects) from the
   * address holding the most, oldest first.
   */
  readonly maxHandshakes?: number
  /**
   * The most incoming connections from one source address that are in their handshake and have said nothing
   * (default 32): past it, that address's oldest silent one makes room for its new one, so a flood from one
   * address churns its own connections, not other addresses'.
   */
  readonly maxHandshakesPerAddress?: number
  /** Chunking, windows, bounds and retries of the data plane. */
  readonly dataPlane?: DataPlane.Options
}

/**
 * What a handler knows about a message besides its content.
 *
 * @since 0.1.0
 * @category models
 */
export interface MessageContext {
  /** The listening address the sending node advertised, or undefined for a client-only node. */
  readonly sender: RpcAddress.RpcAddress | undefined
  /** The node at the other end of the connection the message came on (the local node for local sends). */
  readonly peer: RpcAddress.RpcAddress
  /** The connection it came on: what ties a peer's liveness to the connection it registered over. */
  readonly connection: ConnectionId
}

/**
 * Names one connection for as long as the node runs (0 for messages a node sends itself). A peer's address is
 * what the peer claims; its connection is what the node knows.
 *
 * @since 0.1.0
 * @category models
 */
export type ConnectionId = number

/**
 * What answering `M` produces: the request's reply type for an ask, nothing for a one-way message.
 *
 * @since 0.1.0
 * @category models
 */
export type ReplyOf<M> = M extends Schema.WithResult<infer A, infer _I, infer _E, infer _EI, infer _R> ? A : void

/**
 * The declared errors of an ask.
 *
 * @since 0.1.0
 * @category models
 */
export type FailureOf<M> = M extends Schema.WithResult<infer _A, infer _I, infer E, infer _EI, infer _R> ? E : never

/**
 * @since 0.1.0
 * @category models
 */
export type Handler<M, R> = (message: M, context: MessageContext) => Effect.Effect<ReplyOf<M>, FailureOf<M>, R>

/**
 * One handler per message of the endpoint's inbound union, so adding a message makes the compiler list every
 * endpoint that must handle it.
 *
 * @since 0.1.0
 * @category models
 */
export type Handlers<A extends Codec.Message, R> = {
  readonly [Tag in A["_tag"]]: Handler<Extract<A, { readonly _tag: Tag }>, R>
}

/**
 * The services the handlers of an endpoint need.
 *
 * @since 0.1.0
 * @category models
 */
export type HandlersContext<H> = {
  readonly [Tag in keyof H]: H[Tag] extends (...args: ReadonlyArray<any>) => Effect.Effect<any, any, infer R> ? R
    : never
}[keyof H]

/**
 * @since 0.1.0
 * @category models
 */
export interface Endpoint<A extends Codec.Message, H extends Handlers<A, any> = Handlers<A, any>, RH = never> {
  /** The messages the endpoint accepts; anything else is answered with `MalformedFrame`. */
  readonly inbound: Schema.Schema<A, any, never>
  readonly handlers: H
  readonly onConnected?: (peer: RpcAddress.RpcAddress, connection: ConnectionId) => Effect.Effect<void, never, RH>
  readonly onDisconnected?: (peer: RpcAddress.RpcAddress, connection: ConnectionId) => Effect.Effect<void, never, RH>
  /**
   * "sequential" (the default, as Spark's endpoints): one message at a time, in arrival order.
   * "unbounded": every message in its own fiber.
   */
  readonly concurrency?: "sequential" | "unbounded"
}

/**
 * @since 0.1.0
 * @category errors
 */
export const EndpointAlreadyRegistered: typeof internal.EndpointAlreadyRegistered = internal.EndpointAlreadyRegistered
/**
 * @since 0.1.0
 * @category errors
 */
export type EndpointAlreadyRegistered = internal.EndpointAlreadyRegistered

/**
 * @since 0.1.0
 * @category models
 */
export interface RpcEnv {
  /** Where this node listens, or undefined for a client-only node. */
  readonly address: RpcAddress.RpcAddress | undefined
  readonly maxFrameSize: number
  /** Registers an endpoint for the lifetime of the scope. */
  readonly register: <A extends Codec.Message, H extends Handlers<A, any>, RH = never>(
    name: string,
    endpoint: Endpoint<A, H, RH>
  ) => Effect.Effect<void, EndpointAlreadyRegistered, Scope.Scope | HandlersContext<H> | RH>
  /**
   * A one-way message; `to` must accept it. With `via`, it goes on that connection while it is open (a node that
   * ties a peer's liveness to the connection it registered on also talks to it there), else as usual.
   */
  readonly send: <M extends Codec.Message>(
    to: RpcAddress.Ref<M>,
    message: M,
    options?: { readonly via?: ConnectionId | undefined }
  ) => Effect.Effect<void, Errors.RpcError>
  /**
   * `send` at once, outside any fiber: the message is delivered (to this node) or written (on the connection it
   * would take, when that is open) before this returns, with the outcome; undefined, and nothing sent, when that
   * connection is still to be dialled — which only `send` does.
   */
  readonly sendNow: <M extends Codec.Message>(
    to: RpcAddress.Ref<M>,
    message: M,
    options?: { readonly via?: ConnectionId | undefined }
  ) => Either.Either<void, Errors.RpcError> | undefined
  /** A request answered with its reply type or one of its declared errors; `to` must accept it. */
  readonly ask: <M extends Codec.Message & Schema.WithResult.All>(
    to: RpcAddress.Ref<M>,
    message: M,
    options?: { readonly timeout?: Duration.DurationInput }
  ) => Effect.Effect<ReplyOf<M>, FailureOf<M> | Errors.RpcError>
  /** The nodes this one has an open, authenticated connection with. */
  readonly peers: Effect.Effect<ReadonlyArray<RpcAddress.RpcAddress>>
  /**
   * Whether `address` refuses connections: its host answers that nothing listens there, so the node that listened
   * is gone (or has stopped listening). False when a connection opens (it is closed at once) or when nothing
   * answers within the lookup timeout: a host that is down or cut off says nothing.
   */
  readonly refusesConnections: (address: RpcAddress.RpcAddress) => Effect.Effect<boolean>
  /** Streamed transfers of blocks, on data connections beside the message plane's. */
  readonly data: DataPlane.DataPlane
}

/**
 * @since 0.1.0
 * @category tags
 */
export const RpcEnv: Context.Tag<RpcEnv, RpcEnv> = Context.GenericTag<RpcEnv>("@kindling/protocol/RpcEnv")

/**
 * Starts an RpcEnv on the given transport; it stops (listener, connections, endpoints) when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<RpcEnv, ListenFailed, Transport | Scope.Scope> = internal.make

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<RpcEnv, ListenFailed, Transport> =>
  Layer.scoped(RpcEnv, make(options))
