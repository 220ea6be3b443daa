// The serving side of the data plane: blocks registered by prefix, each fetch streamed in chunks (checksummed,
// unless the fetcher checks the bytes itself) as the fetcher's credit allows, within the bounds on bytes buffered per connection and per node.
import { Codec, type Envelope, Errors, type RpcAddress } from "@kindling/protocol"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Api from "../DataPlane.js"
import {
  checkOffset,
  type DataMessage,
  type Link,
  PrefixAlreadyServed,
  readExactly,
  type Shared
} from "./dataShared.js"

export interface Registration {
  readonly resolve: (
    blockId: string,
    requester: RpcAddress.RpcAddress
  ) => Effect.Effect<Api.BlockSource, Errors.FetchFailure, Scope.Scope>
  readonly streams: Set<Serving>
}

interface ServerLink {
  readonly link: Link
  readonly streams: Map<number, Serving>
  drainArmed: boolean
}

interface Serving {
  readonly id: number
  readonly blockId: string
  readonly server: ServerLink
  readonly registration: Registration | undefined
  /** Whether its chunks carry their CRC-32: false when the fetcher checks the bytes itself. */
  readonly checksums: boolean
  credit: number
  wake: (() => void) | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
}

export interface Server {
  readonly serve: Api.DataPlane["serve"]
  /** The registration that serves a block, if any. */
  readonly registrationOf: (blockId: string) => Registration | undefined
  /** Takes what a fetcher sent on a connection this node serves on; false if it is not the server's to take. */
  readonly received: (link: Link, envelope: Envelope.DataEnvelope) => boolean
  readonly closed: (link: Link) => void
  readonly stop: () => void
  readonly stats: () =>
    & Pick<
      Api.Stats,
      "serving" | "buffered" | "peakBuffered" | "peakBufferedPerConnection" | "bytesServed"
    >
    & { readonly connections: number }
}

export const makeServer = (shared: Shared): Server => {
  const { checksum, runFork, send, violation } = shared
  const { chunkSize, maxBuffered, maxBufferedPerConnection } = shared.settings
  let bytesServed = 0
  let peakBuffered = 0
  let peakBufferedPerConnection = 0

  const registrations = new Map<string, Registration>()
  const serverLinks = new Map<Link, ServerLink>()
  const roomWaiters = new Set<() => void>()

  const registrationOf = (blockId: string): Registration | undefined => {
    let best: string | undefined
    for (const prefix of registrations.keys()) {
      if (blockId.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix
    }
    return best === undefined ? undefined : registrations.get(best)
  }

  const bufferedOnNode = () => {
    let total = 0
    for (const server of serverLinks.values()) total += server.link.connection.bufferedBytes()
    return total
  }

  // Whether `bytes` more fit under both bounds; a connection (or node) with nothing buffered takes any one frame,
  // so a frame larger than a bound still goes out.
  const hasRoom = (server: ServerLink, bytes: number) => {
    const own = server.link.connection.bufferedBytes()
    if (own > 0 && own + bytes > maxBufferedPerConnection) return false
    const total = bufferedOnNode()
    return total === 0 || total + bytes <= maxBuffered
  }

  const wakeRoomWaiters = () => {
    const waiters = [...roomWaiters]
    roomWaiters.clear()
    for (const waiter of waiters) waiter()
  }

  // The node's bound is over every connection, so a writer waits for any of them to drain and looks again.
  const armDrains = () => {
    for (const server of serverLinks.values()) {
      if (server.drainArmed || server.link.connection.bufferedBytes() === 0) continue
      server.drainArmed = true
      server.link.connection.onDrain(() => {
        server.drainArmed = false
        wakeRoomWaiters()
      })
    }
  }

  const awaitRoom = (server: ServerLink, bytes: number): Effect.Effect<void> =>
    Effect.suspend(() =>
      hasRoom(server, bytes) ? Effect.void : Effect.async<void>((resume) => {
        const waiter = () => resume(awaitRoom(server, bytes))
        roomWaiters.add(waiter)
        armDrains()
        return Effect.sync(() => {
          roomWaiters.delete(waiter)
        })
      })
    )

  // The check and the write happen in one step: no other stream can fill the buffer in between.
  const write = (server: ServerLink, [header, data]: readonly [Uint8Array, Uint8Array]): Effect.Effect<void> =>
    Effect.suspend(() => {
      const size = header.length + data.length
      if (!hasRoom(server, size)) return Effect.zipRight(awaitRoom(server, size), write(server, [header, data]))
      server.link.connection.write(header)
      server.link.connection.write(data)
      peakBufferedPerConnection = Math.max(peakBufferedPerConnection, server.link.connection.bufferedBytes())
      peakBuffered = Math.max(peakBuffered, bufferedOnNode())
      return Effect.void
    })

  const awaitCredit = (serving: Serving): Effect.Effect<number> =>
    Effect.suspend(() =>
      serving.credit > 0 ? Effect.succeed(serving.credit) : Effect.async<number>((resume) => {
        serving.wake = () => {
          serving.wake = undefined
          resume(awaitCredit(serving))
        }
        return Effect.sync(() => {
          serving.wake = undefined
        })
      })
    )

  const stream = (serving: Serving, registration: Registration, offset: number) =>
    Effect.gen(function*() {
      const { blockId, id, server } = serving
      const source = yield* registration.resolve(blockId, server.link.peer)
      yield* checkOffset(blockId, offset, source.size)
      let position = offset
      while (position < source.size) {
        const credit = yield* awaitCredit(serving)
        const length = Math.min(chunkSize, credit, source.size - position)
        // Read only when the bytes can go out soon, so a stream holds at most one chunk outside the buffer.
        yield* awaitRoom(server, length + Codec.chunkFrameOverhead)
        const data = yield* readExactly(source, blockId, position, length)
        yield* write(
          server,
          Codec.encodeChunkFrame(
            serving.checksums ? { id, offset: position, crc: checksum(data), data } : { id, offset: position, data }
          )
        )
        serving.credit -= length
        position += length
        bytesServed += length
      }
      send(server.link, { _tag: "end", id, size: source.size })
    }).pipe(Effect.scoped)

  const isServing = (serving: Serving) => serving.server.streams.get(serving.id) === serving

  const forget = (serving: Serving) => {
    if (isServing(serving)) serving.server.streams.delete(serving.id)
    serving.registration?.streams.delete(serving)
  }

  const answerFailure = (serving: Serving, cause: Cause.Cause<Errors.FetchFailure>) =>
    Effect.suspend(() => {
      if (Cause.isInterruptedOnly(cause) || !isServing(serving)) return Effect.void
      const failure = Cause.failureOption(cause)
      const error = Option.getOrElse(
        failure,
        () => new Errors.TransferRefused({ blockId: serving.blockId, reason: "the server failed while serving it" })
      )
      send(serving.server.link, {
        _tag: "fetchFailed",
        id: serving.id,
        error: Either.getOrThrow(Codec.encodeWith(Errors.FetchFailure, error))
      })
      return Option.isSome(failure) ? Effect.void : Effect.logError(`serving ${serving.blockId} failed`, cause)
    })

  const onFetch = (server: ServerLink, { block, checksums, id, offset, window }: DataMessage<"fetch">) => {
    if (server.streams.has(id)) return violation(server.link, `stream ${id} opened twice`)
    const registration = registrationOf(block)
    const serving: Serving = {
      id,
      blockId: block,
      server,
      registration,
      checksums: checksums ?? true,
      credit: window,
      wake: undefined,
      fiber: undefined
    }
    server.streams.set(id, serving)
    registration?.streams.add(serving)
    const program = registration === undefined
      ? Effect.fail(new Errors.BlockNotFound({ blockId: block }))
      : stream(serving, registration, offset)
    const fiber = runFork(Effect.catchAllCause(program, (cause) => answerFailure(serving, cause)))
    serving.fiber = fiber
    fiber.addObserver(() => forget(serving))
  }

  const onCredit = (server: ServerLink, { bytes, id }: DataMessage<"credit">) => {
    const serving = server.streams.get(id)
    if (serving === undefined) return
    serving.credit += bytes
    serving.wake?.()
  }

  const stopServing = (serving: Serving) => {
    forget(serving)
    serving.fiber?.unsafeInterruptAsFork(FiberId.none)
  }

  const onCancel = (server: ServerLink, { id }: DataMessage<"cancel">) => {
    const serving = server.streams.get(id)
    if (serving !== undefined) stopServing(serving)
  }

  const serve = <R>(prefix: string, resolve: Api.Resolver<R>) =>
    Effect.gen(function*() {
      const context = yield* Effect.context<Exclude<R, Scope.Scope>>()
      const registration: Registration = {
        resolve: (blockId, requester) =>
          Effect.provide(resolve(blockId, requester), context) as Effect.Effect<
            Api.BlockSource,
            Errors.FetchFailure,
            Scope.Scope
          >,
        streams: new Set()
      }
      yield* Effect.acquireRelease(
        Effect.suspend(() => {
          if (registrations.has(prefix)) return Effect.fail(new PrefixAlreadyServed({ prefix }))
          registrations.set(prefix, registration)
          return Effect.void
        }),
        () =>
          Effect.sync(() => {
            registrations.delete(prefix)
            for (const serving of [...registration.streams]) {
              if (isServing(serving)) {
                send(serving.server.link, {
                  _tag: "fetchFailed",
                  id: serving.id,
                  error: Either.getOrThrow(
                    Codec.encodeWith(Errors.FetchFailure, new Errors.BlockNotFound({ blockId: serving.blockId }))
                  )
                })
              }
              stopServing(serving)
            }
          })
      )
    })

  const received = (link: Link, envelope: Envelope.DataEnvelope): boolean => {
    let server = serverLinks.get(link)
    if (server === undefined) {
      server = { link, streams: new Map(), drainArmed: false }
      serverLinks.set(link, server)
    }
    switch (envelope._tag) {
      case "fetch":
        onFetch(server, envelope)
        return true
      case "credit":
        onCredit(server, envelope)
        return true
      case "cancel":
        onCancel(server, envelope)
        return true
      default:
        return false
    }
  }

  const closed = (link: Link) => {
    const server = serverLinks.get(link)
    if (server === undefined) return
    serverLinks.delete(link)
    for (const serving of [...server.streams.values()]) stopServing(serving)
    wakeRoomWaiters()
  }

  const stop = () => {
    for (const server of serverLinks.values()) {
      for (const serving of [...server.streams.values()]) stopServing(serving)
    }
  }

  const stats = () => {
    let serving = 0
    for (const server of serverLinks.values()) serving += server.streams.size
    return {
      connections: serverLinks.size,
      serving,
      buffered: bufferedOnNode(),
      peakBuffered,
      peakBufferedPerConnection,
      bytesServed
    }
  }

  return { serve, registrationOf, received, closed, stop, stats }
}
