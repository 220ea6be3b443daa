/**
 * What `--master` names, read as Spark reads it: `local` (one thread), `local[N]`, `local[*]` (a thread per
 * core), `local[N,F]` (and `local[*,F]`: tasks may fail F times), `local-cluster[W,C,M]` (a master and W workers
 * of C cores and M MiB in this process, executors as processes) or `kindling://host:port[,host:port…]`.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Os from "node:os"

/**
 * @since 0.1.0
 * @category models
 */
export type MasterSpec =
  | { readonly _tag: "Local"; readonly threads: number; readonly maxFailures: number }
  | {
    readonly _tag: "LocalCluster"
    readonly workers: number
    readonly coresPerWorker: number
    readonly memoryPerWorker: number
  }
  | { readonly _tag: "Cluster"; readonly url: string }

/**
 * @since 0.1.0
 * @category errors
 */
export class InvalidMaster extends Data.TaggedError("InvalidMaster")<{ readonly master: string }> {
  override get message() {
    return `Could not parse the master URL '${this.master}': use local, local[N], local[*], local[N,F], ` +
      `local-cluster[W,C,M] or kindling://host:port`
  }
}

const positive = (text: string) => /^[1-9]\d*$/.test(text)

/**
 * @since 0.1.0
 * @category parsing
 */
export const parse = (master: string): Either.Either<MasterSpec, InvalidMaster> => {
  const invalid = Either.left(new InvalidMaster({ master }))
  if (master === "local") return Either.right({ _tag: "Local", threads: 1, maxFailures: 1 })
  const local = /^local\[(\*|\d+)(?:,(\d+))?\]$/.exec(master)
  if (local !== null) {
    const [, threads, failures] = local
    if (threads !== "*" && !positive(threads!)) return invalid
    if (failures !== undefined && !positive(failures)) return invalid
    return Either.right({
      _tag: "Local",
      threads: threads === "*" ? Os.availableParallelism() : Number(threads),
      maxFailures: failures === undefined ? 1 : Number(failures)
    })
  }
  const cluster = /^local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\]$/.exec(master)
  if (cluster !== null) {
    const [, workers, cores, memory] = cluster
    if (![workers, cores, memory].every((n) => positive(n!))) return invalid
    return Either.right({
      _tag: "LocalCluster",
      workers: Number(workers),
      coresPerWorker: Number(cores),
      memoryPerWorker: Number(memory)
    })
  }
  if (master.startsWith("kindling://")) return Either.right({ _tag: "Cluster", url: master })
  return invalid
}
