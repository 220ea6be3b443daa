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

/**
 * Bytes compressed as one gzip member; members written one after another make one file that every gzip reader
 * reads whole. Zstandard output is not written yet (reading it is): it needs a compressor that runs
 * synchronously on a task's thread.
 *
 * @since 0.1.0
 */
export const compress = (bytes: Uint8Array, codec: DataFormats.Compression): Uint8Array => {
  if (codec === "zstd") throw new Error("Writing zstd-compressed files is not supported yet: use gzip")
  return Zlib.gzipSync(bytes)
}
