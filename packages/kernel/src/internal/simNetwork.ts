// The simulated network: connections kept in order as TCP keeps them, each frame delayed by a drawn latency,
// sometimes duplicated or breaking its connection, partitions between nodes, and listeners by address.
import { Transport } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import type { Fault, NetworkOptions } from "../Simulation.js"
import type { Event } from "./simAgenda.js"
import type { NodeState } from "./simNodeState.js"

// One side of a connection: what its owner writes goes to `peer`.
export interface End {
  readonly node: NodeState
  readonly connection: Transport.Connection
  handler: Transport.ConnectionHandler | undefined
  peer: End
  closed: boolean
  /** Deliveries to this end keep their order: none earlier than the last one. */
  lastDelivery: number
  written: number
  /** Bytes this end wrote that are still on the way. */
  inFlight: number
  readonly drained: Array<() => void>
}

/** What the network needs of its world. */
export interface NetworkWorld {
  readonly now: () => number
  readonly schedule: (time: number, run: () => void) => Event
  readonly random: () => number
  readonly network: () => NetworkOptions
  readonly note: (line: string) => void
  readonly fault: (kind: Fault["kind"], ...names: ReadonlyArray<string>) => void
  /** Runs `action` on the node now, or when it resumes; never on a killed node. */
  readonly onNode: (node: NodeState, action: () => void) => void
}

export interface Network {
  readonly latency: () => number
  readonly transportFor: (node: NodeState) => Transport.Transport["Type"]
  readonly closeEnd: (end: End, reason: string) => void
  readonly breakConnection: (end: End, reason: string) => void
  /** The listeners by `host:port`. */
  readonly listeners: Map<string, {
    readonly node: NodeState
    readonly accept: (connection: Transport.Connection) => Transport.ConnectionHandler
  }>
  readonly partition: (a: string, b: string) => void
  readonly heal: (a: string, b: string) => void
  readonly healAll: () => boolean
  readonly severed: (a: NodeState, b: NodeState) => boolean
}

export const make = (world: NetworkWorld): Network => {
  const { fault, note, onNode, random, schedule } = world
  const listeners: Network["listeners"] = new Map()
  const partitions = new Set<string>()
  let nextPort = 40000
  const latency = () => {
    const [min, max] = world.network().latencyMillis
    return min + Math.floor(random() * (max - min + 1))
  }
  const pairKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`)
  const severed = (a: NodeState, b: NodeState) => a !== b && partitions.has(pairKey(a.name, b.name))

  const closeEnd = (end: End, reason: string) => {
    if (end.closed) return
    end.closed = true
    end.node.ends.delete(end)
    checkDrained(end)
    onNode(end.node, () => end.handler?.onClose(reason))
  }

  const breakConnection = (end: End, reason: string) => {
    closeEnd(end, reason)
    closeEnd(end.peer, reason)
  }

  // Calls the writer's drain listeners once nothing it wrote is on the way (or it closed).
  const checkDrained = (from: End) => {
    if ((from.inFlight > 0 && !from.closed) || from.drained.length === 0) return
    const listeners = from.drained.splice(0)
    schedule(world.now(), () => onNode(from.node, () => listeners.forEach((listener) => listener())))
  }

  const deliver = (from: End, bytes: Uint8Array, at: number) => {
    const to = from.peer
    to.lastDelivery = Math.max(at, to.lastDelivery)
    from.inFlight += bytes.length
    schedule(to.lastDelivery, () => {
      from.inFlight -= bytes.length
      checkDrained(from)
      if (to.closed) return
      onNode(to.node, () => {
        if (!to.closed) to.handler?.onData(bytes)
      })
    })
  }

  const write = (from: End, bytes: Uint8Array) => {
    const to = from.peer
    if (from.closed || to.closed) return
    from.written++
    if (severed(from.node, to.node)) return breakConnection(from, "network partition")
    if (random() < world.network().breakRate) {
      note(`${world.now()} network breaks ${from.node.name} ↔ ${to.node.name}`)
      fault("break", from.node.name, to.node.name)
      return breakConnection(from, "connection reset")
    }
    const copy = bytes.slice()
    const at = world.now() + latency()
    deliver(from, copy, at)
    if (from.written > 2 && random() < world.network().duplicateRate) deliver(from, copy, at)
  }

  const makeEnd = (node: NodeState, remote: { readonly host: string; readonly port: number }): End => {
    const end: End = {
      node,
      handler: undefined,
      peer: undefined as unknown as End,
      closed: false,
      lastDelivery: 0,
      written: 0,
      inFlight: 0,
      drained: [],
      connection: {
        remote,
        bufferedBytes: () => (end.closed ? 0 : end.inFlight),
        onDrain: (listener) => {
          end.drained.push(listener)
          checkDrained(end)
        },
        write: (bytes) => write(end, bytes),
        close: () => {
          if (end.closed) return
          closeEnd(end, "closed locally")
          const peer = end.peer
          // The peer sees the close after whatever was sent before it.
          schedule(Math.max(world.now() + latency(), peer.lastDelivery), () => closeEnd(peer, "closed by peer"))
        }
      }
    }
    node.ends.add(end)
    return end
  }

  const transportFor = (node: NodeState): Transport.Transport["Type"] =>
    Transport.Transport.of({
      listen: (host, port, accept) =>
        Effect.acquireRelease(
          Effect.suspend(() => {
            const bound = port === 0 ? nextPort++ : port
            const key = `${host}:${bound}`
            if (listeners.has(key)) {
              return Effect.fail(new Transport.ListenFailed({ host, port: bound, reason: "address already in use" }))
            }
            listeners.set(key, { node, accept })
            node.listeners.add(key)
            return Effect.succeed({ key, listener: { host, port: bound } })
          }),
          ({ key }) =>
            Effect.sync(() => {
              listeners.delete(key)
              node.listeners.delete(key)
            })
        ).pipe(Effect.map(({ listener }) => listener)),
      connect: (host, port, handler) =>
        Effect.async<Transport.Connection, Transport.ConnectFailed>((resume) => {
          const target = listeners.get(`${host}:${port}`)
          const reachable = target !== undefined && target.node.status !== "killed" && !severed(node, target.node)
          const event = schedule(world.now() + (reachable ? latency() : world.network().connectTimeoutMillis), () => {
            const still = listeners.get(`${host}:${port}`)
            if (still === undefined || still.node.status === "killed" || severed(node, still.node)) {
              const reason = still === undefined ? "connection refused" : "connection timed out"
              return resume(
                Effect.fail(new Transport.ConnectFailed({ host, port, reason, refused: still === undefined }))
              )
            }
            const local = makeEnd(node, { host, port })
            const remote = makeEnd(still.node, { host: node.name, port: nextPort++ })
            local.peer = remote
            remote.peer = local
            local.handler = handler(local.connection)
            onNode(still.node, () => {
              if (!remote.closed) remote.handler = still.accept(remote.connection)
            })
            resume(Effect.succeed(local.connection))
          })
          return Effect.sync(() => {
            event.cancelled = true
          })
        })
    })

  return {
    latency,
    transportFor,
    closeEnd,
    breakConnection,
    listeners,
    partition: (a, b) => {
      partitions.add(pairKey(a, b))
    },
    heal: (a, b) => {
      partitions.delete(pairKey(a, b))
    },
    healAll: () => {
      const any = partitions.size > 0
      partitions.clear()
      return any
    },
    severed
  }
}
