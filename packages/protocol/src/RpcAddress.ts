/**
 * Where an RpcEnv listens, and how a remote endpoint is named.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type { Message } from "./Codec.js"
import type { Inbound } from "./Endpoints.js"

/**
 * A node's address: the host and port its RpcEnv accepts connections on.
 *
 * @since 0.1.0
 * @category models
 */
export class RpcAddress extends Schema.Class<RpcAddress>("RpcAddress")({
  host: Schema.String.pipe(Schema.minLength(1)),
  port: Schema.Int.pipe(Schema.between(0, 65535))
}, { description: "A node's address: the host and port its RpcEnv accepts connections on" }) {
  /**
   * @since 0.1.0
   */
  get hostPort(): string {
    return this.host.includes(":") ? `[${this.host}]:${this.port}` : `${this.host}:${this.port}`
  }
  /**
   * The node's URL in Kindling's scheme, `kindling://host:port`.
   *
   * @since 0.1.0
   */
  get url(): string {
    return `kindling://${this.hostPort}`
  }
  /**
   * @since 0.1.0
   */
  override toString(): string {
    return this.hostPort
  }
}

/**
 * A reference to a named endpoint on a node, `kindling://<name>@host:port` when printed.
 *
 * @since 0.1.0
 * @category models
 */
export class RpcEndpointRef extends Schema.Class<RpcEndpointRef>("RpcEndpointRef")({
  address: RpcAddress,
  name: Schema.String.pipe(Schema.minLength(1))
}, { description: "A named endpoint on a node" }) {
  /**
   * @since 0.1.0
   */
  override toString(): string {
    return `kindling://${this.name}@${this.address.hostPort}`
  }
}

declare const accepts: unique symbol

/**
 * A reference to an endpoint that accepts the messages `M`: `send` and `ask` take only those, so a message sent
 * to the wrong endpoint does not compile. On the wire it is a plain `RpcEndpointRef`; the type is the sender's
 * knowledge of what lives at that name (see `Endpoints`).
 *
 * @since 0.1.0
 * @category models
 */
export type Ref<M extends Message> = RpcEndpointRef & {
  // A function of M makes the type contravariant: a ref to an endpoint accepting A | B serves as a ref for A.
  readonly [accepts]: (message: M) => void
}

/**
 * A ref to one of the protocol's endpoints by name: the same as `Ref` of that endpoint's union, written so that
 * a message class may hold a ref to an endpoint whose union contains the message itself (the union is looked up
 * only where the ref is used).
 *
 * @since 0.1.0
 * @category models
 */
export type RefOf<N extends keyof Inbound> = RpcEndpointRef & {
  readonly [accepts]: (message: Inbound[N]) => void
}

/**
 * The schema of a ref field in a message: the wire form of `RpcEndpointRef`, typed as a ref to the named
 * endpoint.
 *
 * @since 0.1.0
 * @category schema
 */
export const RefTo = <N extends keyof Inbound>(): Schema.Schema<RefOf<N>, typeof RpcEndpointRef.Encoded> =>
  RpcEndpointRef as unknown as Schema.Schema<RefOf<N>, typeof RpcEndpointRef.Encoded>

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (host: string, port: number): RpcAddress => new RpcAddress({ host, port })

/**
 * A ref to the endpoint named `name` at `address` that accepts `M`. Prefer `Endpoints.ref`, which takes the
 * message union from the endpoint's kind. `M` comes from where the ref goes (a message field, a typed variable);
 * with nothing to say what the endpoint accepts it is `never`, and nothing can be sent to it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const endpoint = <M extends Message = never>(address: RpcAddress, name: string): Ref<M> =>
  new RpcEndpointRef({ address, name }) as Ref<M>

/**
 * The key under which connections and peers are indexed.
 *
 * @since 0.1.0
 * @category accessors
 */
export const key = (address: { readonly host: string; readonly port: number }): string =>
  `${address.host}:${address.port}`
