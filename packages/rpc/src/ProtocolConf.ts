/**
 * The configuration every node of a cluster reads: RPC timeouts and limits, the shared secret, and the worker
 * timeout, which is the heartbeat contract between a master and its workers.
 *
 * @since 0.1.0
 */
import { type Conf, Key, Problem, Registry, ValueType } from "@kindling/conf"
import * as Either from "effect/Either"
import type * as RpcEnv from "./RpcEnv.js"

const networkTimeout = Key.make("kindling.network.timeout", ValueType.duration("s"), {
  default: "120s",
  description: "The default of the RPC timeouts, and how long a shuffle or block fetch connection may carry nothing " +
    "its fetches are owed before they resume on a new one (Spark's spark.shuffle.io.connectionTimeout)."
})

/**
 * @since 0.1.0
 * @category keys
 */
export const keys = {
  workerTimeout: Key.make("kindling.worker.timeout", ValueType.duration("s"), {
    default: "60s",
    description: "The master removes a worker with no heartbeat for this long; workers send one every timeout/4."
  }),
  authenticate: Key.make("kindling.authenticate", ValueType.boolean, {
    default: "false",
    description: "Every connection must prove it knows kindling.authenticate.secret before anything else."
  }),
  authenticateSecret: Key.make("kindling.authenticate.secret", ValueType.string, {
    secret: true,
    description: "The secret shared by every process of the cluster; required when kindling.authenticate is on."
  }),
  networkCrypto: Key.make("kindling.network.crypto.enabled", ValueType.boolean, {
    default: "false",
    description: "Encrypts every connection between nodes (RPC and data): AES-256-GCM under keys agreed for each " +
      "connection with an ephemeral X25519 exchange and derived with the cluster's secret, which it needs " +
      "(kindling.authenticate). Every node of a cluster and every client must agree; workers hand it to the " +
      "drivers and executors they start."
  }),
  networkTimeout,
  askTimeout: Key.make("kindling.rpc.askTimeout", ValueType.duration("s"), {
    fallback: networkTimeout,
    description: "How long an RPC ask waits for its reply."
  }),
  lookupTimeout: Key.make("kindling.rpc.lookupTimeout", ValueType.duration("s"), {
    default: "2s",
    description: "How long dialling another node may take, connecting and handshake together; past it the node " +
      "counts as unreachable. Short, unlike Spark's 120 s: a host that is down or cut off drops the connection " +
      "attempts, and a client or node would otherwise wait on it for minutes (a live node on a LAN answers in " +
      "milliseconds, and a lost SYN is sent again after 1 s)."
  }),
  rpcMessageMaxSize: Key.make("kindling.rpc.message.maxSize", ValueType.int({ min: 1, max: 2047 }), {
    default: "128",
    description: "The largest RPC message, in MiB."
  }),
  maxConnections: Key.make("kindling.rpc.maxConnections", ValueType.int({ min: 8 }), {
    default: "4096",
    description: "The most connections a node keeps open; at the limit, a connection that has never carried a " +
      "message makes room for a new one, and connections in use are never closed for it. Keep it under the " +
      "process's file limit (ulimit -n)."
  }),
  maxHandshakes: Key.make("kindling.rpc.maxHandshakes", ValueType.int({ min: 1 }), {
    default: "64",
    description: "The most incoming connections a node lets be in their handshake at once. A new connection is " +
      "never refused for it: one still in its handshake is closed to make room, a silent one (a cluster member " +
      "says hello as soon as it connects) from the address holding the most, oldest first — so connections that " +
      "open and say nothing cannot lock cluster members out."
  }),
  maxHandshakesPerAddress: Key.make("kindling.rpc.maxHandshakesPerAddress", ValueType.int({ min: 1 }), {
    default: "32",
    description: "The most incoming connections from one source address that may be in their handshake having " +
      "said nothing; past it that address's oldest silent one is closed for its new one, so a flood from one " +
      "address churns its own connections and not those of others."
  }),
  handshakeTimeout: Key.make("kindling.rpc.handshakeTimeout", ValueType.duration("s"), {
    default: "5s",
    description: "How long an incoming connection may take to complete its handshake before it is closed. A " +
      "cluster member completes it in one round trip; a dialler gives up after kindling.rpc.lookupTimeout anyway."
  }),
  shuffleServiceEnabled: Key.make("kindling.shuffle.service.enabled", ValueType.boolean, {
    default: "false",
    description: "Worker: serve the map outputs of its executors, so that they outlive them. App: have the workers' " +
      "shuffle services serve its map outputs, so that an executor lost or given back by dynamic allocation costs " +
      "no recomputation (both must be on; an executor on a worker without one keeps its outputs to itself)."
  }),
  traceDir: Key.make("kindling.rpc.traceDir", ValueType.string, {
    description: "For debugging a node or a client in another language: masters, workers and the submit, status " +
      "and kill commands append every frame they send or receive to <dir>/<pid>.jsonl, one JSON line each: " +
      "`at` (ms), `direction` (in, out), `remote` (host:port) and `payload` (the frame's MessagePack, base64)."
  })
}

/**
 * @since 0.1.0
 * @category keys
 */
export const group = Registry.group({
  title: "Protocol",
  description: "Read by every node: RPC timeouts and limits, authentication, and the heartbeat contract between the " +
    "master and its workers.",
  keys
})

/**
 * The RpcEnv settings every node takes from the configuration: the shared secret, the frame limit, the ask and
 * idle timeouts (the data plane's too), and the connection limits.
 *
 * @since 0.1.0
 * @category constructors
 */
export const rpcOptions = (
  conf: Conf.Conf<Registry.KeyOf<typeof group>>
): Either.Either<RpcEnv.Options, Problem.InvalidConf> => {
  const secret = conf.get(keys.authenticateSecret)
  const missing = (key: string, reason: string) =>
    Either.left(new Problem.InvalidConf({ problems: [{ _tag: "MissingValue", key, reason }] }))
  if (conf.get(keys.authenticate) && secret === undefined) {
    return missing(keys.authenticateSecret.name, `${keys.authenticate.name} is true`)
  }
  // The keys of an encrypted connection come from the secret: without it, encryption would authenticate nobody.
  if (conf.get(keys.networkCrypto) && !conf.get(keys.authenticate)) {
    return Either.left(
      new Problem.InvalidConf({
        problems: [{
          _tag: "InvalidValue",
          source: conf.entries.find((entry) => entry.key === keys.networkCrypto.name)?.source ?? "default",
          key: keys.networkCrypto.name,
          reason: `it needs ${keys.authenticate.name}=true and its secret, from which the connections' keys are derived`
        }]
      })
    )
  }
  return Either.right({
    maxFrameSize: conf.get(keys.rpcMessageMaxSize) * 1024 * 1024,
    askTimeout: conf.get(keys.askTimeout),
    lookupTimeout: conf.get(keys.lookupTimeout),
    idleTimeout: conf.get(keys.networkTimeout),
    dataPlane: { idleTimeout: conf.get(keys.networkTimeout) },
    maxConnections: conf.get(keys.maxConnections),
    maxHandshakes: conf.get(keys.maxHandshakes),
    maxHandshakesPerAddress: conf.get(keys.maxHandshakesPerAddress),
    handshakeTimeout: conf.get(keys.handshakeTimeout),
    ...(conf.get(keys.authenticate) && secret !== undefined ? { secret } : {})
  })
}

/**
 * The secret to encrypt connections with, when `kindling.network.crypto.enabled` is on (`rpcOptions` checks that
 * authentication, and so a secret, comes with it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const encryptionSecret = (conf: Conf.Conf<Registry.KeyOf<typeof group>>): string | undefined =>
  conf.get(keys.networkCrypto) && conf.get(keys.authenticate) ? conf.get(keys.authenticateSecret) : undefined
