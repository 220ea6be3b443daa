/**
 * The TCP transport, on `node:net`. Nagle is off (the protocol is request/response), and writes made in one
 * tick are corked into one syscall, which is what lets pipelined asks go fast. Its layer also has the data plane
 * check chunks with zlib's native CRC-32: a process that moves bytes over TCP on Node wants that too.
 *
 * @since 0.1.0
 */
import type { Conf, Problem, Registry } from "@kindling/conf"
import * as Directories from "@kindling/installation/Directories"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import type { Crc32 } from "./DataPlane.js"
import * as NodeDataPlane from "./NodeDataPlane.js"
import * as NodeEncryption from "./NodeEncryption.js"
import * as ProtocolConf from "./ProtocolConf.js"
import {
  ConnectFailed,
  type Connection,
  type ConnectionHandler,
  ListenFailed,
  tap,
  type TappedFrame,
  Transport
} from "./Transport.js"

// A closing side flushes what it wrote (a refusal, say) before the socket goes; a peer that never closes its
// end is cut off after this long.
const lingerMillis = 1000

// After handing over this many bytes a connection sits out one turn of the event loop, so the others get theirs: a
// socket full of bulk data would otherwise be read in runs of up to 2 MiB while an ask's reply waits behind it.
const bytesPerTurn = 256 * 1024

const wire = (socket: Net.Socket, makeHandler: (connection: Connection) => ConnectionHandler): Connection => {
  socket.setNoDelay(true)
  let corked = false
  let lastError: string | undefined
  // A socket emits 'drain' only after a write went over its high-water mark; the callback of every write says
  // when the bytes left the buffer whatever their size. Listeners run on the next turn of the event loop: a
  // writer that waits for the drain then lets the I/O that arrived meanwhile (an ask, say) go first.
  let drainListeners: Array<() => void> = []
  const notify = () => {
    const listeners = drainListeners
    drainListeners = []
    for (const listener of listeners) listener()
  }
  const drained = () => {
    if (drainListeners.length === 0 || (socket.writableLength > 0 && !socket.destroyed)) return
    setImmediate(notify)
  }
  const connection: Connection = {
    remote: { host: socket.remoteAddress ?? "unknown", port: socket.remotePort ?? 0 },
    write: (bytes) => {
      if (socket.destroyed || socket.writableEnded) return
      if (!corked) {
        corked = true
        socket.cork()
        process.nextTick(() => {
          corked = false
          socket.uncork()
        })
      }
      socket.write(bytes, drained)
    },
    close: () => {
      if (socket.destroyed) return
      socket.end()
      setTimeout(() => socket.destroy(), lingerMillis).unref()
    },
    bufferedBytes: () => socket.destroyed ? 0 : socket.writableLength,
    onDrain: (listener) => {
      drainListeners.push(listener)
      if (socket.destroyed || socket.writableLength === 0) setImmediate(notify)
    }
  }
  const handler = makeHandler(connection)
  let handedOver = 0
  const nextTurn = () => {
    if (!socket.destroyed) socket.resume()
  }
  socket.on("data", (chunk: Buffer) => {
    handedOver += chunk.length
    if (handedOver >= bytesPerTurn) {
      handedOver = 0
      socket.pause()
      setImmediate(nextTurn)
    }
    handler.onData(chunk)
  })
  socket.on("error", (error) => {
    lastError = error.message
  })
  socket.once("close", () => {
    handler.onClose(lastError ?? "closed")
    drained()
  })
  return connection
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Transport["Type"]> = Effect.sync(() =>
  Transport.of({
    listen: (host, port, accept) =>
      Effect.acquireRelease(
        Effect.async<{ server: Net.Server; sockets: Set<Net.Socket> }, ListenFailed>((resume) => {
          const sockets = new Set<Net.Socket>()
          const server = Net.createServer((socket) => {
            sockets.add(socket)
            socket.once("close", () => sockets.delete(socket))
            wire(socket, accept)
          })
          server.once("error", (error) => resume(Effect.fail(new ListenFailed({ host, port, reason: error.message }))))
          server.listen(port, host, () => resume(Effect.succeed({ server, sockets })))
        }),
        ({ server, sockets }) =>
          Effect.async<void>((resume) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => resume(Effect.void))
          })
      ).pipe(Effect.map(({ server }) => ({ host, port: (server.address() as Net.AddressInfo).port }))),
    connect: (host, port, handler) =>
      Effect.async<Connection, ConnectFailed>((resume) => {
        const socket = Net.connect({ host, port })
        const onError = (error: NodeJS.ErrnoException) =>
          resume(
            Effect.fail(
              new ConnectFailed({ host, port, reason: error.message, refused: error.code === "ECONNREFUSED" })
            )
          )
        socket.once("error", onError)
        socket.once("connect", () => {
          socket.off("error", onError)
          resume(Effect.succeed(wire(socket, handler)))
        })
        return Effect.sync(() => socket.destroy())
      })
  })
)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transport | Crc32> = Layer.merge(Layer.effect(Transport, make), NodeDataPlane.layer)

// One file per process, so that nodes tracing to one directory never interleave their lines.
const traceTo = (dir: string) => {
  Directories.makeSync(dir)
  const file = Path.join(dir, `${process.pid}.jsonl`)
  return (frame: TappedFrame) => {
    const line = {
      at: Date.now(),
      direction: frame.direction,
      remote: `${frame.remote.host}:${frame.remote.port}`,
      payload: Buffer.from(frame.payload.buffer, frame.payload.byteOffset, frame.payload.byteLength).toString("base64")
    }
    try {
      Fs.appendFileSync(file, `${JSON.stringify(line)}\n`)
    } catch {
      // A trace is an aid: a full disk must not stop the node it describes.
    }
  }
}

/**
 * The TCP transport as the configuration asks for it: encrypted when `kindling.network.crypto.enabled` is on (see
 * `NodeEncryption`), tapped into a trace of the plaintext frames when `kindling.rpc.traceDir` is set. Fails as
 * `rpcOptions` does when the settings contradict each other (encryption without a secret).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFrom = (
  conf: Conf.Conf<Registry.KeyOf<typeof ProtocolConf.group>>
): Layer.Layer<Transport | Crc32, Problem.InvalidConf> =>
  Layer.merge(
    Layer.effect(
      Transport,
      Effect.gen(function*() {
        yield* ProtocolConf.rpcOptions(conf)
        const secret = ProtocolConf.encryptionSecret(conf)
        const dir = conf.get(ProtocolConf.keys.traceDir)
        const runtime = yield* Effect.runtime<never>()
        const warn = (message: string, remote: { readonly host: string; readonly port: number }) =>
          Runtime.runFork(runtime)(
            Effect.logWarning(message).pipe(Effect.annotateLogs("peer", `${remote.host}:${remote.port}`))
          )
        const tcp = yield* make
        const sealed = secret === undefined ? tcp : NodeEncryption.encrypted(tcp, { secret, warn })
        return dir === undefined ? sealed : tap(sealed, traceTo(dir))
      })
    ),
    NodeDataPlane.layer
  )
