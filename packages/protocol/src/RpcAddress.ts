/**
 * Where an RpcEnv listens, and how a remote endpoint is named.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

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

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (host: string, port: number): RpcAddress => new RpcAddress({ host, port })

/**
 * @since 0.1.0
 * @category constructors
 */
export const endpoint = (address: RpcAddress, name: string): RpcEndpointRef => new RpcEndpointRef({ address, name })

/**
 * The key under which connections and peers are indexed.
 *
 * @since 0.1.0
 * @category accessors
 */
export const key = (address: { readonly host: string; readonly port: number }): string =>
  `${address.host}:${address.port}`
