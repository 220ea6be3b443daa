/**
 * The byte-stream transport under an RpcEnv. The RpcEnv does framing, handshake and dispatch; a transport only
 * moves bytes between two ends. `layerMemory` is an in-process network for tests and simulation; one made with
 * `handOverValues` (local mode's) also lets the RpcEnvs on it hand each other messages as values, without frames.
 * TCP lives in `@kindling/protocol/node`.
 *
 * @since 0.1.0
 */
import { Codec } from "@kindling/protocol"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/**
 * One end of an open byte stream. `write` queues bytes in order and never blocks; after `close` (or after the
 * other end closed) writes are dropped. A writer that must bound its memory (the data plane) watches
 * `bufferedBytes` and waits for `onDrain` instead of writing more; the message plane never needs to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly remote: { readonly host: string; readonly port: number }
  readonly write: (bytes: Uint8Array) => void
  readonly close: () => void
  /** Bytes written but not yet handed on (to the operating system, or to the other end in memory); 0 once closed. */
  readonly bufferedBytes: () => number
  /**
   * Calls `listener` once, on a later tick, when `bufferedBytes()` is next 0 or the connection has closed
   * (at once if that is already so).
   */
  readonly onDrain: (listener: () => void) => void
  /**
   * In-process transports only: what hands the other end a value instead of bytes — delivered to its handler's
   * `onValue`, in order with what `write` sends, and dropped like bytes once either end has closed. Undefined when
   * the other end takes no values (or the transport carries bytes only); ask once both ends have their handlers.
   * The value is handed over as it is, not copied: the two ends must treat it as immutable.
   */
  readonly valueSink?: (() => ((value: unknown) => void) | undefined) | undefined
}

/**
 * What the RpcEnv does with the bytes of one connection. `onClose` is called exactly once.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectionHandler {
  readonly onData: (bytes: Uint8Array) => void
  readonly onClose: (reason: string) => void
  /** What the other end handed over as a value (see `Connection.valueSink`); without it, the end takes bytes only. */
  readonly onValue?: ((value: unknown) => void) | undefined
}

/**
 * A listener could not be opened (port in use, bad host).
 *
 * @since 0.1.0
 * @category errors
 */
export class ListenFailed
  extends Data.TaggedError("ListenFailed")<{ readonly host: string; readonly port: number; readonly reason: string }>
{
  override get message(): string {
    return `Cannot listen on ${this.host}:${this.port}: ${this.reason}`
  }
}

/**
 * A connection could not be opened (nobody listening, unreachable host).
 *
 * @since 0.1.0
 * @category errors
 */
export class ConnectFailed extends Data.TaggedError("ConnectFailed")<{
  readonly host: string
  readonly port: number
  readonly reason: string
  /** The host answered that nothing listens on the port (rather than not answering at all). */
  readonly refused?: boolean
}> {
  override get message(): string {
    return `Cannot connect to ${this.host}:${this.port}: ${this.reason}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Listener {
  readonly host: string
  /** The bound port; the one asked for, or the one picked when 0 was asked for. */
  readonly port: number
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Transport extends Context.Tag("@kindling/protocol/Transport")<Transport, {
  /** Accepts connections until the scope closes; closing it also closes the accepted connections. */
  readonly listen: (
    host: string,
    port: number,
    accept: (connection: Connection) => ConnectionHandler
  ) => Effect.Effect<Listener, ListenFailed, Scope.Scope>
  readonly connect: (
    host: string,
    port: number,
    handler: (connection: Connection) => ConnectionHandler
  ) => Effect.Effect<Connection, ConnectFailed>
}>() {}

interface MemoryEnd {
  handler: ConnectionHandler | undefined
  closed: boolean
  /** Bytes this end wrote that the other end has not received yet. */
  buffered: number
  drainListeners: Array<() => void>
}

const drain = (end: MemoryEnd) => {
  const listeners = end.drainListeners
  end.drainListeners = []
  for (const listener of listeners) listener()
}

/**
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /**
   * Whether ends that take values (`ConnectionHandler.onValue`) may be handed them (`Connection.valueSink`): the
   * RpcEnvs of one process then exchange messages without encoding them. Off by default, so that tests on the
   * in-memory network check the real encoding of every message.
   */
  readonly handOverValues?: boolean
}

/**
 * An in-process network: listeners by `host:port`, connections as pairs of ends whose writes are delivered
 * asynchronously (on a later microtask), like a socket's. An end's buffered bytes are those written and not yet
 * delivered; values handed over are not counted (they hold no buffer of the transport's).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemoryWith = (options: MemoryOptions): Effect.Effect<Transport["Type"]> =>
  Effect.sync(() => memoryNetwork(options.handOverValues === true))

/**
 * An in-process network that carries bytes only (`makeMemoryWith` with the defaults).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<Transport["Type"]> = makeMemoryWith({})

const memoryNetwork = (handOverValues: boolean): Transport["Type"] => {
  const listeners = new Map<string, (connection: Connection) => ConnectionHandler>()
  let nextEphemeralPort = 40000

  const pair = (aRemote: Connection["remote"], bRemote: Connection["remote"]) => {
    const a: MemoryEnd = { handler: undefined, closed: false, buffered: 0, drainListeners: [] }
    const b: MemoryEnd = { handler: undefined, closed: false, buffered: 0, drainListeners: [] }
    const endOf = (self: MemoryEnd, other: MemoryEnd, remote: Connection["remote"]): Connection => ({
      remote,
      write: (bytes) => {
        if (self.closed || other.closed) return
        const copy = bytes.slice()
        self.buffered += copy.length
        queueMicrotask(() => {
          self.buffered -= copy.length
          if (!other.closed) other.handler?.onData(copy)
          if (self.buffered === 0) drain(self)
        })
      },
      valueSink: () => {
        if (!handOverValues) return undefined
        const intake = other.handler?.onValue
        if (intake === undefined) return undefined
        return (value) => {
          if (self.closed || other.closed) return
          queueMicrotask(() => {
            if (!other.closed) intake(value)
          })
        }
      },
      close: () => {
        if (self.closed) return
        self.closed = true
        queueMicrotask(() => {
          self.handler?.onClose("closed locally")
          drain(self)
          if (!other.closed) {
            other.closed = true
            other.handler?.onClose("closed by peer")
            drain(other)
          }
        })
      },
      bufferedBytes: () => self.closed || other.closed ? 0 : self.buffered,
      onDrain: (listener) => {
        if (self.closed || other.closed || self.buffered === 0) queueMicrotask(listener)
        else self.drainListeners.push(listener)
      }
    })
    return { a, b, aConnection: endOf(a, b, bRemote), bConnection: endOf(b, a, aRemote) }
  }

  return Transport.of({
    listen: (host, port, accept) =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          const bound = port === 0 ? nextEphemeralPort++ : port
          const key = `${host}:${bound}`
          if (listeners.has(key)) {
            return Effect.fail(new ListenFailed({ host, port: bound, reason: "address already in use" }))
          }
          const open = new Set<Connection>()
          listeners.set(key, (connection) => {
            open.add(connection)
            const handler = accept(connection)
            return {
              ...handler,
              onClose: (reason) => {
                open.delete(connection)
                handler.onClose(reason)
              }
            }
          })
          return Effect.succeed({ listener: { host, port: bound }, key, open })
        }),
        ({ key, open }) =>
          Effect.sync(() => {
            listeners.delete(key)
            for (const connection of open) connection.close()
          })
      ).pipe(Effect.map(({ listener }) => listener)),
    connect: (host, port, handler) =>
      Effect.suspend(() => {
        const accept = listeners.get(`${host}:${port}`)
        if (accept === undefined) {
          return Effect.fail(new ConnectFailed({ host, port, reason: "connection refused", refused: true }))
        }
        const local = { host: "memory", port: nextEphemeralPort++ }
        const { a, aConnection, b, bConnection } = pair(local, { host, port })
        b.handler = accept(bConnection)
        a.handler = handler(aConnection)
        return Effect.succeed(aConnection)
      })
  })
}

/**
 * A fresh in-process network. Every RpcEnv built on the same layer instance shares it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Transport> = Layer.effect(Transport, makeMemory)

/**
 * One frame a tapped transport saw go by: its payload (the MessagePack bytes of one envelope, without the length
 * header), which way it went, and the connection's other end.
 *
 * @since 0.1.0
 * @category models
 */
export interface TappedFrame {
  readonly direction: "in" | "out"
  readonly remote: Connection["remote"]
  readonly payload: Uint8Array
}

// A tap reads every frame, whatever its size: it watches, it does not police.
const unlimited = Number.MAX_SAFE_INTEGER

// Feeds one direction of a connection to `onFrame`, a frame at a time. Bytes that are not frames end the tap of
// that direction, not the connection: the node decides what to make of them.
const frameTap = (
  remote: Connection["remote"],
  direction: TappedFrame["direction"],
  onFrame: (f: TappedFrame) => void
) => {
  const decoder = new Codec.FrameDecoder(unlimited)
  return (bytes: Uint8Array) => {
    const frames = decoder.push(bytes)
    if (frames._tag === "Right") { for (const payload of frames.right) onFrame({ direction, remote, payload }) }
  }
}

/**
 * One connection of a transport seen through a layer above it: what its user writes to and closes, and what the
 * layer does with the bytes that arrive (handing them on to the handler the user made for the wrapped connection).
 *
 * @since 0.1.0
 * @category models
 */
export interface Wrapped {
  readonly connection: Connection
  readonly handler: ConnectionHandler
}

/**
 * The same transport with a layer over every connection it opens or accepts: `wrap` gets each raw connection and
 * the factory of its user's handler, and returns the connection the user gets and the handler of the raw bytes. A
 * tap and encryption are such layers. A layer works on bytes, so its connections hand over no values: what goes
 * through it is framed.
 *
 * @since 0.1.0
 * @category combinators
 */
export const wrapConnections = (
  transport: Transport["Type"],
  wrap: (
    connection: Connection,
    makeHandler: (connection: Connection) => ConnectionHandler,
    side: "dialler" | "listener"
  ) => Wrapped
): Transport["Type"] =>
  Transport.of({
    listen: (host, port, accept) =>
      transport.listen(host, port, (connection) => wrap(bytesOnly(connection), accept, "listener").handler),
    connect: (host, port, handler) => {
      let wrapped: Connection | undefined
      return Effect.map(
        transport.connect(host, port, (connection) => {
          const layered = wrap(bytesOnly(connection), handler, "dialler")
          wrapped = layered.connection
          return layered.handler
        }),
        () => wrapped!
      )
    }
  })

// A connection without its value sink: a layer that spreads it into its own connection must not pass values by.
const bytesOnly = (connection: Connection): Connection =>
  connection.valueSink === undefined ? connection : { ...connection, valueSink: undefined }

const tapConnection = (
  connection: Connection,
  handler: (connection: Connection) => ConnectionHandler,
  onFrame: (frame: TappedFrame) => void
): Wrapped => {
  const sent = frameTap(connection.remote, "out", onFrame)
  const received = frameTap(connection.remote, "in", onFrame)
  const tapped: Connection = {
    ...connection,
    write: (bytes) => {
      sent(bytes)
      connection.write(bytes)
    }
  }
  const inner = handler(tapped)
  return {
    connection: tapped,
    handler: {
      onData: (bytes) => {
        received(bytes)
        inner.onData(bytes)
      },
      onClose: inner.onClose
    }
  }
}

/**
 * The same transport, with every frame written or received on its connections also given to `onFrame`: for
 * traces of what a node says on the wire (`kindling.rpc.traceDir`) and for tests that check it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const tap = (transport: Transport["Type"], onFrame: (frame: TappedFrame) => void): Transport["Type"] =>
  wrapConnections(transport, (connection, handler) => tapConnection(connection, handler, onFrame))
