// What the data plane's two sides (serving, `dataServer.ts`; fetching, `dataFetcher.ts`) share: the connection the
// RpcEnv hands over, what they need of their node, the settings both apply, and reading a block's bytes exactly.
import { type Envelope, Errors, type RpcAddress } from "@kindling/protocol"
import type * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as Api from "../DataPlane.js"
import type { Connection } from "../Transport.js"

export class PrefixAlreadyServed extends Data.TaggedError("PrefixAlreadyServed")<{ readonly prefix: string }> {
  override get message(): string {
    return `Blocks with the prefix ${this.prefix} are already served`
  }
}

/** One authenticated data connection, as the RpcEnv hands it to the data plane. */
export interface Link {
  /** "out": this node dialled it and fetches on it; "in": this node serves on it. */
  readonly direction: "in" | "out"
  readonly peer: RpcAddress.RpcAddress
  readonly connection: Connection
  readonly isOpen: () => boolean
  readonly close: (reason: string) => void
}

/** What the data plane needs from its RpcEnv. */
export interface Host {
  readonly address: () => RpcAddress.RpcAddress | undefined
  readonly maxFrameSize: number
  /** Opens an authenticated data connection to the node. */
  readonly connect: (target: RpcAddress.RpcAddress) => Effect.Effect<Link, Errors.RpcError>
  readonly warn: (message: string, annotations: Record<string, unknown>) => void
}

export type DataMessage<Tag extends Envelope.DataEnvelope["_tag"]> = Extract<
  Envelope.DataEnvelope,
  { readonly _tag: Tag }
>

/** The data plane's options, resolved against the defaults and the node's frame size. */
export interface Settings {
  readonly chunkSize: number
  readonly streamWindow: number
  readonly quantum: number
  readonly creditBatch: number
  readonly maxInFlight: number
  readonly maxInFlightPerConnection: number
  readonly maxBuffered: number
  readonly maxBufferedPerConnection: number
  readonly maxRetries: number
  readonly retryWait: number
  readonly idleTimeout: number
}

/** What both sides use of their node. */
export interface Shared {
  readonly host: Host
  readonly settings: Settings
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  readonly clock: Clock.Clock
  readonly checksum: (data: Uint8Array, value?: number) => number
  readonly send: (link: Link, envelope: Envelope.DataEnvelope) => void
  /** Closes a connection whose peer broke the protocol. */
  readonly violation: (link: Link, reason: string) => void
}

export const checkOffset = (
  blockId: string,
  offset: number,
  size: number
): Effect.Effect<void, Errors.TransferRefused> =>
  offset <= size
    ? Effect.void
    : Effect.fail(
      new Errors.TransferRefused({ blockId, reason: `offset ${offset} is beyond the block's ${size} bytes` })
    )

export const readExactly = (source: Api.BlockSource, blockId: string, offset: number, length: number) =>
  Effect.flatMap(source.read(offset, length), (data) =>
    data.length === length
      ? Effect.succeed(data)
      : Effect.fail(
        new Errors.TransferRefused({
          blockId,
          reason: `reading ${length} bytes at offset ${offset} gave ${data.length}`
        })
      ))
