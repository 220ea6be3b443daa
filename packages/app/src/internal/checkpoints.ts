// Checkpoints (Spark's reliable checkpointing): after an action's jobs, each dataset of its lineage marked with
// `checkpoint()` is written — a job whose tasks save its partitions' records, as record frames, to
// `<checkpoint dir>/rdd-<id>/part-NNNNN` — and from then on is read from those files: its lineage ends there.
import { FilePaths } from "@kindling/data"
import * as Effect from "effect/Effect"
import { JobFailed } from "../AppErrors.js"
import type { Dataset, DatasetError } from "../Dataset.js"
import { run } from "./actions.js"

// The datasets `dataset` is made from, itself first, each once.
const lineageOf = (dataset: Dataset<unknown>, into = new Set<Dataset<unknown>>()): Set<Dataset<unknown>> => {
  if (into.has(dataset)) return into
  into.add(dataset)
  for (const parent of [...dataset.origin.narrow, ...dataset.origin.shuffled]) lineageOf(parent, into)
  return into
}

const write = (dataset: Dataset<unknown>, root: string): Effect.Effect<void, DatasetError> =>
  Effect.gen(function*() {
    const dir = FilePaths.join(root, `rdd-${dataset.id}`)
    yield* Effect.try({
      try: () => dataset.runtime.files.makeDirectory(dir),
      catch: (error) =>
        new JobFailed({ reason: `checkpoint: ${error instanceof Error ? error.message : String(error)}` })
    })
    const parts = yield* run(dataset, (partition) => ({ _tag: "SaveRecords", dir, partition }), "checkpoint")
    dataset.checkpointed(dir, parts.length)
  })

/** Writes the checkpoints the lineage of `dataset` asks for and has not got yet. */
export const writeRequested = (dataset: Dataset<unknown>): Effect.Effect<void, DatasetError> =>
  Effect.suspend(() => {
    // An app without a checkpoint directory has no checkpoint to write: its lineages are not walked after each action.
    const root = dataset.runtime.checkpoints.dir
    if (root === undefined) return Effect.void
    const requested = [...lineageOf(dataset)].filter((each) => each.checkpointRequested)
    return Effect.forEach(requested, (each) => write(each, root), { discard: true })
  })
