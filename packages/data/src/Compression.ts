/**
 * The codecs a text, CSV or JSON lines file may be compressed with, told by its extension as Hadoop tells them:
 * `.gz` is gzip, `.zst` (or `.zstd`) Zstandard. A compressed file is read whole and written a member at a time.
 *
 * @since 0.1.0
 */
import type { DataFormats } from "@kindling/protocol"
import { decompress as zstdDecompress } from "fzstd"
import * as Zlib from "node:zlib"

/**
 * The codec a file's name says it is compressed with, if any.
 *
 * @since 0.1.0
 */
export const codecOf = (path: string): DataFormats.Compression | undefined =>
  path.endsWith(".gz") ? "gzip" : path.endsWith(".zst") || path.endsWith(".zstd") ? "zstd" : undefined

/**
 * The extension a file compressed with `codec` is written with.
 *
 * @since 0.1.0
 */
export const extension = (codec: DataFormats.Compression): string => codec === "gzip" ? ".gz" : ".zst"

/**
 * The bytes of a compressed file, decompressed (every member of a file made of several).
 *
 * @since 0.1.0
 */
export const decompress = (bytes: Uint8Array, codec: DataFormats.Compression): Uint8Array =>
  // An empty file is no text, whatever its name says (Hadoop's readers read no line of it).
  bytes.length === 0 ? bytes : codec === "gzip" ? Zlib.gunzipSync(bytes) : zstdDecompress(bytes)

// Zstandard's compressor (Node 20's zlib has none): WebAssembly, loaded in a thread before its first task that
// writes zstd — loading it is asynchronous, a task is not — and kept.
let zstd: { readonly compress: (bytes: Uint8Array, level?: number) => Uint8Array } | undefined

/**
 * Readies the compressor of `codec` in this thread, for tasks to compress with synchronously: a no-op but for
 * zstd's, which loads once.
 *
 * @since 0.1.0
 */
export const prepare = async (codec: DataFormats.Compression | undefined): Promise<void> => {
  if (codec !== "zstd" || zstd !== undefined) return
  const module = await import("@bokuweb/zstd-wasm")
  await module.init()
  zstd = module
}

/**
 * Bytes compressed as one member (a gzip member, a Zstandard frame); members written one after another make one
 * file that every reader reads whole. Zstandard's level is 3, its tools' default.
 *
 * @since 0.1.0
 */
export const compress = (bytes: Uint8Array, codec: DataFormats.Compression): Uint8Array => {
  if (codec === "gzip") return Zlib.gzipSync(bytes)
  if (zstd === undefined) throw new Error("The zstd compressor was not prepared on this thread (Compression.prepare)")
  return zstd.compress(bytes, 3)
}
