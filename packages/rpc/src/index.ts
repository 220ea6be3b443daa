/**
 * @kindling/rpc: the runtime that carries Kindling's protocol — the RpcEnv every node speaks through, the
 * transports under it, the data plane for blocks and artifacts, the outbox, the master client, and the RPC
 * settings every node reads. Like `@kindling/protocol` it imports no `node:` module; the TCP transport and the
 * file-backed pieces are `@kindling/rpc/node`, the conformance kit for third-party nodes `@kindling/rpc/testing`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as DataPlane from "./DataPlane.js"
/** @since 0.1.0 */
export * as FetchRetries from "./FetchRetries.js"
/** @since 0.1.0 */
export * as MasterClient from "./MasterClient.js"
/** @since 0.1.0 */
export * as Outbox from "./Outbox.js"
/** @since 0.1.0 */
export * as ProtocolConf from "./ProtocolConf.js"
/** @since 0.1.0 */
export * as RpcEnv from "./RpcEnv.js"
/** @since 0.1.0 */
export * as Transport from "./Transport.js"
