/**
 * A ZooKeeper session as Effects, on `node-zookeeper-client` (pure JavaScript, no native addon): the few
 * operations the master's election and persistence need, each bounded in time. The client queues requests while
 * it is disconnected and would wait for the connection forever; here a request that gets no answer within the
 * session timeout fails, as the session cannot be trusted beyond it anyway.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ACL, type Client, createClient, CreateMode, Exception, Id, Permission } from "node-zookeeper-client"
import { type AclEntry, digestIdentity } from "./StoreTrust.js"

/**
 * A ZooKeeper request failed, timed out, or the ensemble could not be reached.
 *
 * @since 0.1.0
 * @category errors
 */
export class ZooKeeperError extends Data.TaggedError("ZooKeeperError")<{
  readonly operation: string
  readonly path: string
  readonly reason: string
  /** ZooKeeper's error code (`NO_NODE` is -101, `NODE_EXISTS` -110, `BAD_VERSION` -103), when it gave one. */
  readonly code?: number
}> {
  override get message(): string {
    return `ZooKeeper ${this.operation} ${this.path} failed: ${this.reason}`
  }
}

/**
 * @since 0.1.0
 * @category constants
 */
export const codes = { noNode: Exception.NO_NODE, nodeExists: Exception.NODE_EXISTS } as const

/**
 * One operation of an atomic transaction.
 *
 * @since 0.1.0
 * @category models
 */
export type Operation =
  /** Fails the transaction unless the node exists. */
  | { readonly _tag: "Check"; readonly path: string }
  | { readonly _tag: "Create"; readonly path: string; readonly data: Uint8Array }
  | { readonly _tag: "SetData"; readonly path: string; readonly data: Uint8Array }
  | { readonly _tag: "Remove"; readonly path: string }

/**
 * @since 0.1.0
 * @category models
 */
export interface Session {
  /** The session id, in hex, as ZooKeeper's own tools print it. */
  readonly id: string
  /** The timeout the server granted, which may differ from the one asked for (it is bounded by its tick time). */
  readonly timeoutMillis: number
  /** Completes when the session can no longer be trusted: its connection dropped, or it expired. */
  readonly lost: Effect.Effect<void>
  /** Creates the node and its missing parents, as persistent nodes; an existing node is fine. */
  readonly ensurePath: (path: string) => Effect.Effect<void, ZooKeeperError>
  /** Creates an ephemeral sequential node under `prefix` and answers its full path. */
  readonly createEphemeralSequential: (prefix: string, data: Uint8Array) => Effect.Effect<string, ZooKeeperError>
  readonly children: (path: string) => Effect.Effect<ReadonlyArray<string>, ZooKeeperError>
  readonly exists: (path: string) => Effect.Effect<boolean, ZooKeeperError>
  /**
   * Watches a node: answers an Effect that completes once it is deleted (at once if it does not exist now). The
   * watch is ZooKeeper's own, so the deletion is heard even if it happens between the check and the wait.
   */
  readonly watchDeletion: (path: string) => Effect.Effect<Effect.Effect<void>, ZooKeeperError>
  readonly getData: (path: string) => Effect.Effect<Uint8Array, ZooKeeperError>
  readonly remove: (path: string) => Effect.Effect<void, ZooKeeperError>
  /** Runs the operations atomically: all of them or none. */
  readonly commit: (operations: ReadonlyArray<Operation>) => Effect.Effect<void, ZooKeeperError>
  /** Who may do what to a node, and whether it is ephemeral (goes with the session that created it). */
  readonly inspect: (path: string) => Effect.Effect<NodeFacts, ZooKeeperError>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface NodeFacts {
  readonly acl: ReadonlyArray<AclEntry>
  readonly ephemeral: boolean
}

// The ACL of the nodes a session with `digest` credentials (`user:password`) creates: every permission for that
// identity, none for anyone else — ZooKeeper's digest scheme, which names an identity by the SHA-1 of its
// credentials, so that the password itself is never stored. (Not exported: the client library's types stay out of
// this package's declarations.)
const digestAcl = (digest: string): ReadonlyArray<ACL> => [
  new ACL(Permission.ALL, new Id("digest", digestIdentity(digest)))
]

// node-zookeeper-client parses its socket's bytes in the socket's 'data' handler and throws from there on bytes it
// cannot make sense of — seen when a server frozen for longer than a session (SIGSTOP, a cut link) answers again —
// and an error thrown there ends the process. Here it drops that connection instead, as the client does on other
// surprises, and the session counts as lost: the master then starts over with a new one.
const survivesGarbage = (client: Client, onLost: () => void) => {
  const manager = (client as unknown as { readonly connectionManager: ConnectionManagerInternals }).connectionManager
  const parse = manager.onSocketData
  manager.onSocketData = (buffer) => {
    try {
      parse.call(manager, buffer)
    } catch {
      manager.socket?.destroy()
      onLost()
    }
  }
}

// The part of node-zookeeper-client's ConnectionManager `survivesGarbage` reaches into: the socket handler is
// bound from this property each time the client opens a socket.
interface ConnectionManagerInternals {
  onSocketData: (buffer: Buffer) => void
  readonly socket?: { readonly destroy: () => void }
}

const describe = (error: unknown): { readonly reason: string; readonly code?: number } =>
  error instanceof Exception
    ? { reason: error.getName(), code: error.getCode() }
    : { reason: error instanceof Error ? error.message : String(error) }

/**
 * Opens a session with the ensemble at `url` (`host:port[,host:port…]`, optionally with a chroot path); it is
 * closed when the scope closes, which removes its ephemeral nodes at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect = (options: {
  readonly url: string
  readonly sessionTimeoutMillis: number
  /** How long to wait for the first connection. */
  readonly connectTimeoutMillis: number
  /**
   * `user:password`: the session authenticates with them (digest scheme), and the nodes it creates are for that
   * identity alone. Without, they are open to anyone who reaches the ensemble.
   */
  readonly digest?: string
}): Effect.Effect<Session, ZooKeeperError, Scope.Scope> =>
  Effect.gen(function*() {
    const { url } = options
    const client: Client = yield* Effect.try({
      // A short spin delay: a standby retries the next server of the ensemble quickly.
      try: () => createClient(url, { sessionTimeout: options.sessionTimeoutMillis, spinDelay: 200, retries: 0 }),
      catch: (error) => new ZooKeeperError({ operation: "connect to", path: url, ...describe(error) })
    })
    const connected = yield* Deferred.make<void>()
    const lost = yield* Deferred.make<void>()
    survivesGarbage(client, () => Deferred.unsafeDone(lost, Effect.void))
    client.once("connected", () => Deferred.unsafeDone(connected, Effect.void))
    client.on("disconnected", () => Deferred.unsafeDone(lost, Effect.void))
    client.on("expired", () => Deferred.unsafeDone(lost, Effect.void))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        client.removeAllListeners()
        client.close()
      })
    )
    // Sent on every connection, before any request.
    if (options.digest !== undefined) client.addAuthInfo("digest", Buffer.from(options.digest))
    // The library's default when none is given is the open ACL.
    const acls = options.digest === undefined ? undefined : [...digestAcl(options.digest)]
    client.connect()
    yield* Deferred.await(connected).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(options.connectTimeoutMillis),
        onTimeout: () =>
          new ZooKeeperError({
            operation: "connect to",
            path: url,
            reason: `no server answered within ${options.connectTimeoutMillis} ms`
          })
      })
    )
    const timeoutMillis = client.getSessionTimeout()

    // One request: its callback's error becomes a ZooKeeperError; no answer within the session timeout is one too.
    const request = <A>(
      operation: string,
      path: string,
      send: (done: (error: unknown, value: A) => void) => void
    ): Effect.Effect<A, ZooKeeperError> =>
      Effect.async<A, ZooKeeperError>((resume) => {
        send((error, value) =>
          resume(
            error === null || error === undefined
              ? Effect.succeed(value)
              : Effect.fail(new ZooKeeperError({ operation, path, ...describe(error) }))
          )
        )
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMillis),
          onTimeout: () => new ZooKeeperError({ operation, path, reason: `no answer within ${timeoutMillis} ms` })
        })
      )

    const watchDeletion = (path: string) =>
      Effect.gen(function*() {
        const deleted = yield* Deferred.make<void>()
        const present = yield* request<boolean>("watch", path, (done) =>
          client.exists(
            path,
            // Any event on the node ends the wait (deleted, or the watch dropped with the connection): the
            // caller looks again.
            () => Deferred.unsafeDone(deleted, Effect.void),
            (error, stat) => done(error, stat !== null && stat !== undefined)
          ))
        return present ? Deferred.await(deleted) : Effect.void
      })

    const commit = (operations: ReadonlyArray<Operation>) =>
      request<void>("commit", operations.map((o) => o.path).join(", "), (done) => {
        const transaction = client.transaction()
        for (const operation of operations) {
          switch (operation._tag) {
            case "Check":
              transaction.check(operation.path)
              break
            case "Create":
              if (acls === undefined) {
                transaction.create(operation.path, Buffer.from(operation.data), CreateMode.PERSISTENT)
              } else transaction.create(operation.path, Buffer.from(operation.data), acls, CreateMode.PERSISTENT)
              break
            case "SetData":
              transaction.setData(operation.path, Buffer.from(operation.data))
              break
            case "Remove":
              transaction.remove(operation.path)
              break
          }
        }
        // A failed transaction answers the error of its first failing operation.
        transaction.commit((error) => done(error, undefined))
      })

    return {
      id: client.getSessionId().toString("hex"),
      timeoutMillis,
      lost: Deferred.await(lost),
      ensurePath: (path) =>
        request("create", path, (done) =>
          acls === undefined
            ? client.mkdirp(path, (error) => done(error, undefined))
            : client.mkdirp(path, acls, (error) => done(error, undefined))),
      createEphemeralSequential: (prefix, data) =>
        request("create", prefix, (done) =>
          acls === undefined
            ? client.create(prefix, Buffer.from(data), CreateMode.EPHEMERAL_SEQUENTIAL, done)
            : client.create(prefix, Buffer.from(data), acls, CreateMode.EPHEMERAL_SEQUENTIAL, done)),
      inspect: (path) =>
        request<NodeFacts>("inspect", path, (done) =>
          client.getACL(path, (error, acl, stat) =>
            done(error, {
              acl: (acl ?? []).map((entry) => ({
                scheme: entry.id.scheme,
                id: entry.id.id,
                // The library's own name for it (its published types say `perms`, which is undefined at run time).
                permissions: (entry as unknown as { readonly permission: number }).permission
              })),
              // The id of the session that owns an ephemeral node; zero for a persistent one.
              ephemeral: stat !== undefined && stat !== null && stat.ephemeralOwner.some((byte) => byte !== 0)
            }))),
      children: (path) =>
        request("list", path, (done) => client.getChildren(path, (error, names) => done(error, names))),
      exists: (path) =>
        request("check", path, (done) =>
          client.exists(path, (error, stat) => done(error, stat !== null && stat !== undefined))),
      watchDeletion,
      getData: (path) =>
        request("read", path, (done) =>
          client.getData(path, (error, data) => done(error, new Uint8Array(data ?? [])))),
      remove: (path) => request("remove", path, (done) => client.remove(path, (error) => done(error, undefined))),
      commit
    }
  })
