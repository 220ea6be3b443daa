/**
 * One connection of a node, control or data, in whichever direction: its handshake phase, who the peer is, the
 * asks waiting on it, and what the node watches it by (deadlines, silence, frames stuck half-way).
 */
import { Codec, type Envelope, type Errors, type RpcAddress } from "@kindling/protocol"
import type * as Deferred from "effect/Deferred"
import type { Connection } from "../Transport.js"
import type * as DataPlane from "./dataPlane.js"

export type Phase = "awaitHello" | "verifying" | "awaitProof" | "awaitChallenge" | "awaitWelcome" | "open" | "closed"

export interface Peer {
  /** This connection's number, for as long as the node runs. */
  readonly id: number
  readonly connection: Connection
  readonly direction: "in" | "out"
  readonly decoder: Codec.FrameDecoder
  readonly asks: Set<number>
  /** The ids of the peer's recent asks on this connection, oldest first: an id seen again is a replay. */
  readonly answered: RecentIds
  /** Who the peer is: the address it advertised or was dialled at, else its socket's address. */
  identity: RpcAddress.RpcAddress
  /** A listener learns it from the dialler's hello. */
  purpose: Envelope.Purpose
  /** The data plane's handle on an open data connection. */
  link: DataPlane.Link | undefined
  /**
   * On an open control connection to a node of this process (see `Connection.valueSink`): what hands it envelopes
   * whose bodies are the messages and outcomes themselves, not their encodings. Undefined: frames.
   */
  handOver: ((envelope: Envelope.Envelope) => void) | undefined
  phase: Phase
  wasOpen: boolean
  /** What the peer (or this node) refused the connection with, reported to everything waiting on it. */
  refusal: Errors.RpcError | undefined
  clientNonce: Uint8Array | undefined
  serverNonce: Uint8Array | undefined
  ready: Deferred.Deferred<Peer, Errors.RpcError> | undefined
  handshakeDeadline: number
  /** When a frame last arrived, and when this node last wrote: for idle connections and keepalive pings. */
  lastReceived: number
  lastSent: number
  /** When the frame now arriving began, while one is incomplete: a frame dribbled forever is cut off. */
  frameStartedAt: number | undefined
  /** Messages it brought to endpoints: a connection that carries none may make room for a new one. */
  delivered: number
  /** Malformed frames seen on it; only the first few are logged. */
  malformed: number
  /** Whether anything has arrived on it yet. */
  heard: boolean
}

// Handshake frames are small (an address, a nonce, a proof, an error); before a connection is authenticated
// nothing larger is read, so an unknown peer cannot make a node hold megabytes for it.
const handshakeFrameLimit = 8 * 1024

// Ask ids are unique per connection; remembering the recent ones lets a node carry out each ask at most once
// even if a frame is delivered twice. The bound keeps a long-lived connection's memory flat.
const recentAskIds = 4096

export class RecentIds {
  private readonly ids = new Set<number>()
  private readonly order: Array<number> = []

  /** Notes `id`; false if it was already there. */
  add(id: number): boolean {
    if (this.ids.has(id)) return false
    this.ids.add(id)
    this.order.push(id)
    if (this.order.length > recentAskIds) this.ids.delete(this.order.shift()!)
    return true
  }
}

/** A connection just accepted (`in`) or dialled (`out`), at the start of its handshake. */
export const makePeer = (options: {
  readonly id: number
  readonly connection: Connection
  readonly direction: Peer["direction"]
  readonly identity: RpcAddress.RpcAddress
  readonly purpose: Envelope.Purpose
  readonly now: number
  readonly handshakeTimeoutMillis: number
  readonly maxFrameSize: number
}): Peer => ({
  id: options.id,
  connection: options.connection,
  direction: options.direction,
  identity: options.identity,
  purpose: options.purpose,
  link: undefined,
  handOver: undefined,
  // A node it dialled itself is trusted with full frames; an incoming one first proves itself.
  decoder: new Codec.FrameDecoder(options.direction === "in" ? handshakeFrameLimit : options.maxFrameSize),
  asks: new Set(),
  answered: new RecentIds(),
  phase: options.direction === "in" ? "awaitHello" : "awaitChallenge",
  wasOpen: false,
  refusal: undefined,
  clientNonce: undefined,
  serverNonce: undefined,
  ready: undefined,
  handshakeDeadline: options.now + options.handshakeTimeoutMillis,
  lastReceived: options.now,
  lastSent: options.now,
  frameStartedAt: undefined,
  delivered: 0,
  malformed: 0,
  heard: false
})

/**
 * The control connection that goes when a new one needs room: one still in its handshake, else one that never
 * brought a message and waits for nothing, the quietest first.
 */
export const evictionCandidate = (live: Iterable<Peer>): Peer | undefined => {
  let best: Peer | undefined
  for (const peer of live) {
    if (peer.purpose === "data") continue
    const unused = peer.phase !== "open" || (peer.delivered === 0 && peer.asks.size === 0)
    if (!unused) continue
    if (best === undefined || peer.lastReceived < best.lastReceived) best = peer
  }
  return best
}

/** How many connections in their handshake a node lets be, in all and from one source address. */
export interface HandshakeLimits {
  readonly total: number
  readonly perAddress: number
}

/**
 * How long a connection just accepted is spared: a cluster member says hello as soon as it connects, but a node
 * reads it only once it gets to the connection's data, which on a loaded node may be some turns of its event loop
 * after it accepted a burst of others.
 */
export const handshakeGraceMillis = 500

/**
 * The connection in its handshake that goes to make room for one just accepted from `host`, if any must. A node
 * caps the connections in their handshake, so that peers that have proved nothing cannot hold its memory or its
 * descriptors — but turning newcomers away at the cap let anyone who opened connections and said nothing lock every
 * cluster member out. So a newcomer always gets in, and the one that goes is the least likely to be a member: a
 * silent one past its grace, from the newcomer's address when that address already holds its share of silent
 * ones, else from the address holding the most; the oldest of them. Only when none is silent does the handshake
 * that has gone longest without a word go. Connections within their grace are never chosen: while a burst
 * arrives the cap is exceeded for a moment (the node's `maxConnections` still bounds everything).
 */
export const handshakeToEvict = (
  handshaking: Iterable<Peer>,
  host: string,
  limits: HandshakeLimits,
  now: number
): Peer | undefined => {
  let inbound = 0
  let quietest: Peer | undefined
  const silent = new Map<string, Array<Peer>>()
  for (const peer of handshaking) {
    if (peer.direction !== "in") continue
    inbound++
    // Nothing has arrived on a silent connection since it was accepted: `lastReceived` is when that was.
    if (now - peer.lastReceived < handshakeGraceMillis) continue
    if (peer.heard) {
      if (quietest === undefined || peer.lastReceived < quietest.lastReceived) quietest = peer
      continue
    }
    const from = peer.connection.remote.host
    const list = silent.get(from)
    if (list === undefined) silent.set(from, [peer])
    else list.push(peer)
  }
  const oldestOf = (peers: ReadonlyArray<Peer>) => peers.reduce((a, b) => (b.id < a.id ? b : a))
  const own = silent.get(host)
  if (own !== undefined && own.length >= limits.perAddress) return oldestOf(own)
  if (inbound < limits.total) return undefined
  let most: ReadonlyArray<Peer> | undefined
  for (const peers of silent.values()) {
    if (most === undefined || peers.length > most.length) most = peers
  }
  return most === undefined ? quietest : oldestOf(most)
}
