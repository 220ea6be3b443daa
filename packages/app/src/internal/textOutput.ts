// `saveAsTextFile` on the driver: the output directory made (it must not exist), the job whose tasks write its
// parts, and the directory finished with `_SUCCESS`.
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import { OutputDirectoryExists, OutputNotWritable } from "../AppErrors.js"
import type { Dataset, DatasetError } from "../Dataset.js"
import { run } from "./actions.js"

export const saveAsTextFile = <T>(
  dataset: Dataset<T>,
  dir: string
): Effect.Effect<void, DatasetError | OutputDirectoryExists | OutputNotWritable> => {
  const path = Path.resolve(dir)
  const { files } = dataset.runtime
  // What the driver itself does to the directory; the reason (a DiskError's) names the file and the operation.
  const onOutput = <A>(operation: () => A) =>
    Effect.try({
      try: operation,
      catch: (error) => new OutputNotWritable({ path, reason: error instanceof Error ? error.message : String(error) })
    })
  return Effect.gen(function*() {
    if ((yield* onOutput(() => files.stat(path))) !== undefined) return yield* new OutputDirectoryExists({ path })
    yield* onOutput(() => files.makeDirectory(path))
    yield* run(dataset, (partition) => ({ _tag: "SaveAsText", dir: path, partition }), "saveAsTextFile")
    yield* onOutput(() => {
      // Attempts that were killed mid-write leave their hidden temporary files behind.
      for (const name of files.list(path)) if (name.startsWith(".part-")) files.remove(Path.join(path, name))
      files.writeFile(Path.join(path, "_SUCCESS"), new Uint8Array(0))
    })
  })
}
