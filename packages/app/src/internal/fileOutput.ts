// Saving a dataset as files, on the driver: the write mode applied to the output directory, the job whose tasks
// write its parts (each through a temporary file of its own, renamed into place whole), and the job committed —
// the attempts' leftovers removed, `_SUCCESS` written — as Hadoop's file output committer leaves a directory; or,
// when the job fails or is interrupted, aborted (Spark's `abortJob`): nothing of the write is left behind.
import { Compression, FilePaths, PartFiles } from "@kindling/data"
import type { DataFormats } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Crypto from "node:crypto"
import { OutputDirectoryExists, OutputNotWritable } from "../AppErrors.js"
import type { Dataset, DatasetError } from "../Dataset.js"
import { run } from "./actions.js"

/**
 * What to do when the output directory exists (Spark's `SaveMode`): fail (`error`, the default), replace it
 * (`overwrite`), add parts of new names beside its own (`append`), or write nothing (`ignore`).
 */
export type SaveMode = "error" | "overwrite" | "append" | "ignore"

export interface Output {
  readonly format: DataFormats.OutputFormat
  readonly mode: SaveMode
  readonly compression?: DataFormats.Compression | undefined
  /** The extension of each part's name (`.csv`, `.parquet`), before a codec's. */
  readonly extension: string
  /** Parts named as `saveAsTextFile` names them, `part-00000`, rather than per write. */
  readonly plainNames?: boolean
}

export const save = <T>(
  dataset: Dataset<T>,
  dir: string,
  output: Output
): Effect.Effect<void, DatasetError | OutputDirectoryExists | OutputNotWritable> => {
  const path = FilePaths.resolve(dir)
  const { files } = dataset.runtime
  // What the driver itself does to the directory; the reason (a DiskError's) names the file and the operation.
  const onOutput = <A>(operation: () => A) =>
    Effect.try({
      try: operation,
      catch: (error) => new OutputNotWritable({ path, reason: error instanceof Error ? error.message : String(error) })
    })
  // Parts of each write named apart, as Spark's are, so that an append never replaces a part of an earlier one.
  const writeId = Crypto.randomUUID()
  const suffix = output.extension + (output.compression === undefined ? "" : Compression.extension(output.compression))
  const file = (partition: number) =>
    output.plainNames === true
      ? PartFiles.partFile(partition)
      : `${PartFiles.partFile(partition)}-${writeId}${suffix}`
  return Effect.gen(function*() {
    const exists = (yield* onOutput(() => files.stat(path))) !== undefined
    if (exists) {
      if (output.mode === "error") return yield* new OutputDirectoryExists({ path })
      if (output.mode === "ignore") return
      if (output.mode === "overwrite") yield* onOutput(() => files.remove(path))
    }
    yield* onOutput(() => files.makeDirectory(path))
    // A byte written and removed: a full disk or a read-only one fails the save now, before any task runs, as a
    // directory that cannot be made does (a bucket has neither). What the save made is taken back then (all but a
    // directory it appends to), so that the same save can run again once there is room.
    if (!FilePaths.isObjectPath(path)) {
      const probe = FilePaths.join(path, `.probe-${writeId}`)
      yield* onOutput(() => {
        files.writeFile(probe, new Uint8Array(1))
        files.remove(probe)
      }).pipe(
        Effect.tapError(() =>
          Effect.ignore(onOutput(() => files.remove(exists && output.mode === "append" ? probe : path)))
        )
      )
    }
    // The attempts' temporary files, and the parts of this write that tasks committed before the job failed
    // (each renames its own into place as it ends); the directory itself when this write made it.
    const abort = onOutput(() => {
      if (!exists || output.mode === "overwrite") return files.remove(path)
      files.remove(FilePaths.join(path, PartFiles.temporaryDir))
      for (const name of files.list(path)) if (name.includes(writeId)) files.remove(FilePaths.join(path, name))
    }).pipe(
      Effect.catchAll((error) => Effect.logWarning(`The failed write to ${path} could not be undone: ${error.reason}`))
    )
    yield* run(dataset, (partition) => ({
      _tag: "SaveAs",
      dir: path,
      file: file(partition),
      format: output.format,
      ...(output.compression === undefined ? {} : { compression: output.compression })
    }), "save").pipe(Effect.onError(() => abort))
    yield* onOutput(() => {
      // Attempts that were killed mid-write leave their temporary files behind.
      files.remove(FilePaths.join(path, PartFiles.temporaryDir))
      files.writeFile(FilePaths.join(path, "_SUCCESS"), new Uint8Array(0))
    })
  })
}
