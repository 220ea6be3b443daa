/**
 * The Node parts of the data plane: zlib's CRC-32, which is native and several times faster than the plain JS
 * one the main entry falls back to, and block sources backed by files.
 *
 * @since 0.1.0
 */
import { Errors } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs/promises"
import * as Zlib from "node:zlib"
import * as DataPlane from "./DataPlane.js"

/**
 * CRC-32 (IEEE 802.3) by zlib; the same values as `DataPlane.crc32`.
 *
 * @since 0.1.0
 * @category checksums
 */
export const crc32 = (data: Uint8Array, value?: number): number => Zlib.crc32(data, value)

/**
 * Has the data plane check chunks with zlib's CRC-32. `NodeTransport.layer` includes it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<DataPlane.Crc32> = Layer.succeedContext(DataPlane.Crc32.context(crc32))

const failure = (blockId: string, path: string, error: unknown): Errors.BlockNotFound | Errors.TransferRefused =>
  (error as { readonly code?: unknown }).code === "ENOENT"
    ? new Errors.BlockNotFound({ blockId })
    : new Errors.TransferRefused({
      blockId,
      reason: `cannot read ${path}: ${error instanceof Error ? error.message : error}`
    })

/**
 * The file at `path` as the block `blockId` — or only the byte range `range` of it — open until the scope closes
 * (for a resolver: until its stream ends). A missing file is `BlockNotFound`; a file that cannot be read is
 * `TransferRefused`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFile = (
  blockId: string,
  path: string,
  range?: { readonly offset: number; readonly length: number }
): Effect.Effect<DataPlane.BlockSource, Errors.BlockNotFound | Errors.TransferRefused, Scope.Scope> =>
  Effect.gen(function*() {
    const attempt = <A>(run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (error) => failure(blockId, path, error) })
    const handle = yield* Effect.acquireRelease(
      attempt(() => Fs.open(path, "r")),
      (handle) => Effect.ignore(Effect.tryPromise(() => handle.close()))
    )
    const start = range?.offset ?? 0
    const size = range?.length ?? (yield* attempt(() => handle.stat())).size
    return {
      size,
      read: (at, length) =>
        attempt(async () => {
          // A fresh buffer per read: the data plane hands it to a socket that may hold on to it.
          const buffer = Buffer.allocUnsafe(length)
          let filled = 0
          while (filled < length) {
            const { bytesRead } = await handle.read(buffer, filled, length - filled, start + at + filled)
            if (bytesRead === 0) break
            filled += bytesRead
          }
          return buffer.subarray(0, filled)
        })
    }
  })
