/**
 * The app context built over a driver: what a driver's runtime (local mode, a cluster's driver) calls to give an
 * app its `Kindling`. The sources (`parallelize`, `range`, `textFile`) cut their input into partitions here; the
 * driver runs the jobs their datasets' actions make.
 *
 * @since 0.1.0
 */
import { type Disk, FilePaths, LocalFiles } from "@kindling/data"
import { SharedVariables } from "@kindling/protocol/records"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import { InputNotReadable, InvalidArgument, type JobFailed, OutputNotWritable } from "./AppErrors.js"
import type * as AppEvents from "./AppEvents.js"
import * as DataReader from "./DataReader.js"
import { Dataset, type Runtime } from "./Dataset.js"
import * as ByteSplits from "./internal/byteSplits.js"
import * as InputPaths from "./internal/inputPaths.js"
import * as UnrunActions from "./internal/unrunActions.js"
import type * as JobGraph from "./JobGraph.js"
import * as JobGroups from "./JobGroups.js"
import type { KindlingContext } from "./Kindling.js"
import * as Lineage from "./Lineage.js"
import * as UserFunctions from "./UserFunctions.js"

/**
 * What an app context needs of its driver: to run jobs, to tell what happens in the app, shared variables, and
 * why it stopped if it did. The driver's runtime (`Driver`) is one.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppDriver {
  /** Runs a job; succeeds with each result task's result value, in order. */
  readonly runJob: (job: JobGraph.JobGraph) => Effect.Effect<Array<unknown>, JobFailed>
  /** What happens in the app from the moment the stream is run, for each run (Spark's listener bus). */
  readonly events: Stream.Stream<AppEvents.AppEvent>
  /** The same from the moment this is run: a listener that must not miss what happens next. */
  readonly subscribe: Effect.Effect<Stream.Stream<AppEvents.AppEvent>, never, Scope.Scope>
  /** A value sent once to each executor that runs a task reading it (`SharedVariables.Broadcast`). */
  readonly broadcast: <T>(value: T) => SharedVariables.Broadcast<T>
  /** Cancels the running jobs of a group (`KindlingContext.cancelJobGroup`). */
  readonly cancelJobGroup: (groupId: string) => Effect.Effect<void>
  /** Cancels every running job. */
  readonly cancelAllJobs: Effect.Effect<void>
  /** A variable tasks add to, merged on the driver from the tasks that succeed. */
  readonly accumulator: <In, Out>(
    kind: SharedVariables.AccumulatorKind,
    name: string
  ) => SharedVariables.Accumulator<In, Out>
  /** Tells the executors to drop the persisted partitions of a dataset, and forgets where they were. */
  readonly unpersist: (datasetId: number) => Effect.Effect<void>
  /**
   * What stopped the driver, if a defect of its own did: every job it was running has failed with it, and every
   * later one fails at once (`JobFailed` with `internal` set).
   */
  readonly fatalError: Effect.Effect<string | undefined>
}

const checkSlices = (numSlices: number, source: string) => {
  if (!Number.isInteger(numSlices) || numSlices < 1) {
    throw new InvalidArgument({
      reason: `${source}: the number of partitions must be a positive integer, got ${numSlices}`
    })
  }
}

// Partition i of n over `length` items: [⌊i·length/n⌋, ⌊(i+1)·length/n⌋), as Spark slices collections.
const bounds = (i: number, n: number, length: number) =>
  [Math.floor((i * length) / n), Math.floor(((i + 1) * length) / n)] as const

const inputFiles = (files: Disk.Files, path: string): Effect.Effect<Array<InputPaths.InputFile>, InputNotReadable> =>
  Effect.try({
    try: () => InputPaths.expand(files, path),
    catch: (error) => new InputNotReadable({ path, reason: error instanceof Error ? error.message : String(error) })
  })

/**
 * Builds the context's sources over the app's driver; functions of `appExports` (the app module's exports)
 * travel by name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly appName: string
  readonly master: string
  /** `kindling.default.parallelism` when set, else the cores the app has. */
  readonly defaultParallelism: () => number
  /** `kindling.default.parallelism`, when set: the partitions of a shuffle given no count. */
  readonly configuredParallelism?: number | undefined
  readonly driver: AppDriver
  readonly appExports?: Record<string, unknown> | undefined
  readonly uiWebUrl?: string | undefined
  /** The files datasets read and write (the local file system unless given). */
  readonly files?: Disk.Files | undefined
}): KindlingContext => {
  const { driver } = options
  const exports = options.appExports ?? {}
  const files = options.files ?? LocalFiles.files
  let datasets = 0
  let shuffles = 0
  const runtime: Runtime = {
    runJob: driver.runJob,
    reference: (fn, env, transformation) => UserFunctions.reference(fn, env, transformation, exports),
    newDatasetId: () => datasets++,
    newShuffleId: () => shuffles++,
    defaultPartitions: () => options.configuredParallelism,
    unpersist: driver.unpersist,
    files,
    checkpoints: { dir: undefined },
    unrun: UnrunActions.make()
  }
  return {
    appName: options.appName,
    master: options.master,
    uiWebUrl: options.uiWebUrl,
    events: driver.events,
    subscribe: driver.subscribe,
    get defaultParallelism() {
      return options.defaultParallelism()
    },
    broadcast: driver.broadcast,
    taskContext: SharedVariables.taskContext,
    fatalError: driver.fatalError,
    unrunActions: Effect.sync(() => runtime.unrun.neverRun()),
    longAccumulator: (name = "") => driver.accumulator<number, number>("long", name),
    setJobGroup: (group, description) =>
      FiberRef.update(JobGroups.current, (properties) => ({
        group,
        description: description ?? properties.description
      })),
    clearJobGroup: FiberRef.update(JobGroups.current, (properties) => ({ ...properties, group: undefined })),
    setJobDescription: (description) =>
      FiberRef.update(JobGroups.current, (properties) => ({ ...properties, description })),
    setCheckpointDir: (dir) =>
      Effect.try({
        // A folder of the app's own in it, as Spark makes one.
        try: () => {
          const path = FilePaths.join(FilePaths.resolve(dir), Crypto.randomUUID())
          files.makeDirectory(path)
          runtime.checkpoints.dir = path
        },
        catch: (error) =>
          new OutputNotWritable({ path: dir, reason: error instanceof Error ? error.message : String(error) })
      }),
    cancelJobGroup: driver.cancelJobGroup,
    cancelAllJobs: driver.cancelAllJobs,
    collectionAccumulator: <T>(name = "") => driver.accumulator<T, Array<T>>("collection", name),
    parallelize: <A>(items: Iterable<A>, numSlices = options.defaultParallelism()) => {
      checkSlices(numSlices, "parallelize")
      const all = Array.from(items)
      const plans = Array.from({ length: numSlices }, (_, i) => {
        const [from, to] = bounds(i, numSlices, all.length)
        return { _tag: "Slice" as const, items: all.slice(from, to) }
      })
      return Dataset.of<A>(runtime, Effect.succeed(plans), "ParallelCollectionDataset", "parallelize")
    },
    range: (start, end, step = 1, numSlices = options.defaultParallelism()) => {
      checkSlices(numSlices, "range")
      if (!Number.isSafeInteger(step) || step === 0) {
        throw new InvalidArgument({ reason: `range: the step must be a non-zero integer, got ${step}` })
      }
      const length = Math.max(0, Math.ceil((end - start) / step))
      const plans = Array.from({ length: numSlices }, (_, i) => {
        const [from, to] = bounds(i, numSlices, length)
        return { _tag: "Range" as const, start: start + from * step, end: start + to * step, step }
      })
      return Dataset.of<number>(runtime, Effect.succeed(plans), "RangeDataset", "range")
    },
    textFile: (path, minPartitions = Math.min(options.defaultParallelism(), 2)) => {
      checkSlices(minPartitions, "textFile")
      const plans = Effect.map(
        inputFiles(files, path),
        (found) => ByteSplits.cut(found, minPartitions).map((split) => ({ _tag: "TextSplit" as const, ...split }))
      )
      return Dataset.of<string>(runtime, Lineage.once(plans), "TextFileDataset", "textFile")
    },
    wholeTextFiles: (path, minPartitions = Math.min(options.defaultParallelism(), 2)) => {
      checkSlices(minPartitions, "wholeTextFiles")
      // Files in path order, cut where a partition reaches its share of the bytes (at least one file each).
      const plans = Effect.map(inputFiles(files, path), (files) => {
        const share = files.reduce((sum, file) => sum + file.size, 0) / minPartitions
        const groups: Array<Array<string>> = []
        let size = Infinity
        for (const file of files) {
          if (size >= share) {
            groups.push([])
            size = 0
          }
          groups.at(-1)!.push(file.path)
          size += file.size
        }
        return groups.map((paths) => ({ _tag: "WholeTextFiles" as const, paths }))
      })
      return Dataset.of<[string, string]>(runtime, Lineage.once(plans), "WholeTextFileDataset", "wholeTextFiles")
    },
    read: DataReader.make(runtime, options.defaultParallelism),
    union: <A>(datasets: ReadonlyArray<Dataset<A>>) => {
      if (datasets.length === 0) throw new InvalidArgument({ reason: "union: no dataset to unite" })
      return Dataset.unionAll(datasets)
    }
  }
}
