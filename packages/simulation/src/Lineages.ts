/**
 * Random programs over the whole dataset API, each job with what it must give. A program is a pool of datasets
 * grown from sources (`parallelize`, `range`, `textFile`) by random transformations — narrow ones, `union`,
 * `zipWithIndex`, `glom`, `mapPartitionsWithIndex`, `cartesian`, the key-based shuffles (`reduceByKey`,
 * `foldByKey`, `aggregateByKey`, `combineByKey`, `groupByKey`, `partitionBy`), `sortByKey` and `sortBy`, the
 * joins and `cogroup`, `distinct`, `intersection`, `subtract`, `repartition` and `coalesce` — with random
 * partition counts, some persisted at a random storage level, some reading a broadcast variable, and some whose
 * function throws on one record (on a task's first attempt only, or on every attempt); then jobs — every kind of
 * action, an accumulator counted by `foreach`, output saved and read back — a few of them run at once on the
 * same shuffled data, a few cancelled by a timeout.
 *
 * The oracle evaluates the same lineage on plain arrays, with the very functions the jobs ship, and knows as much
 * as Spark promises: a partition's records and their order after narrow transformations, each partition's
 * records (not their order) after a shuffle by key (hash partitioning is by `Keys.partitionOf`), the global
 * order after a sort (not the order of equal keys), and the records alone after `repartition`. Answers are
 * compared against that and no more. A dataset whose function throws on every attempt of a record it holds must
 * make every job that reads all of it fail with the function's error.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import { actionFor } from "./internal/lineageActions.js"
import type * as Oracle from "./internal/lineageOracle.js"
import { short } from "./internal/lineageOracle.js"
import * as Pool from "./internal/lineagePool.js"
import { steps as stepsOf } from "./internal/lineageSteps.js"

/**
 * What the oracle knows of a dataset's records.
 *
 * @since 0.1.0
 * @category models
 */
export type Model = Oracle.Model

/**
 * The text an injected fault's error carries: a job may fail with it, and with nothing unexpected.
 *
 * @since 0.1.0
 */
export const injected = "injected fault"

/**
 * What a job must give.
 *
 * @since 0.1.0
 * @category models
 */
export type Expected = Oracle.Expected

/**
 * What a job runs with: the app's context, and the datasets of the program built so far.
 *
 * @since 0.1.0
 * @category models
 */
export type Session = Pool.Session

/**
 * @since 0.1.0
 * @category models
 */
export interface Job {
  /** The action and the lineage it runs on, for reports. */
  readonly label: string
  readonly run: (session: Session) => Effect.Effect<unknown, unknown>
  readonly expected: Expected
  /** Interrupted after this many milliseconds, if given (its result is then not known). */
  readonly cancelAfterMillis: number | undefined
  /** Whether it is run at once with the job before it. */
  readonly withPrevious: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Program {
  /** Text files the program reads, to be written before it runs. */
  readonly inputs: ReadonlyArray<{ readonly path: string; readonly text: string }>
  readonly jobs: ReadonlyArray<Job>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where input files and saved output go (an absolute directory, made by the program's runner). */
  readonly dir: string
  readonly jobs: number
  /** The chance that a new dataset's function throws on a record: once (its task's first attempt) or always. */
  readonly faultRate?: number
  /** The chance that a job is cancelled, after up to this many milliseconds. */
  readonly cancelRate?: number
  readonly cancelWithinMillis?: number
  /** Whether a failed task is tried again (`kindling.task.maxFailures` above 1): if not, a fault once is fatal. */
  readonly retries: boolean
}

/**
 * A program of `options.jobs` jobs, drawn with `random`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const program = (random: () => number, options: Options): Program => {
  const pool = new Pool.Pool(random)
  const { between, chance, get, inputs, nodes, oneOf, size } = pool
  const sources = Pool.sources(pool, options.dir)
  const steps = stepsOf(pool, { faultRate: options.faultRate ?? 0.1, retries: options.retries })

  // ---- the pool: a few sources, then transformations of what is there
  const sourceCount = between(1, 3)
  for (let i = 0; i < sourceCount; i++) oneOf([sources.parallelize, sources.range, sources.textFile])()
  const transformations = between(3, 10)
  for (let made = 0, tries = 0; made < transformations && tries < 200; tries++) {
    const step = oneOf(steps)
    const node = step(oneOf(nodes))
    if (node === undefined) continue
    if (size(node.model) > 600) {
      nodes.pop()
      continue
    }
    made++
  }

  // ---- the jobs
  const jobs: Array<Job> = []
  for (let i = 0; i < options.jobs; i++) {
    // Later datasets are more likely: they have the longer lineages.
    const node = nodes[Math.min(nodes.length - 1, Math.floor(Math.sqrt(random()) * nodes.length))]!
    const shuffled =
      /ByKey|partitionBy|join|cogroup|distinct|intersection|subtract|repartition|coalesce\(\d+, true|sort/
    const previous = jobs.at(-1)
    const withPrevious = previous !== undefined && !previous.withPrevious && chance(0.25) &&
      shuffled.test(node.label)
    const cancelled = chance(options.cancelRate ?? 0.05)
    const action = actionFor(node, random, `${options.dir}/output-${i}`)
    jobs.push({
      ...action,
      label: `${action.label} of ${node.label}`,
      run: (session) => action.run(get(session, node), session),
      cancelAfterMillis: cancelled ? between(1, options.cancelWithinMillis ?? 3_000) : undefined,
      withPrevious
    })
  }
  return { inputs, jobs }
}

// ---- running and judging ------------------------------------------------------------------------------------------

/**
 * How a job ended, as `judge` tells it.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Right" }
  | { readonly _tag: "Cancelled" }
  /** A typed failure with a cause the program injected (or a cluster fault that may cause one). */
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Wrong"; readonly problem: string }

/**
 * Runs a program's jobs in order (a job marked `withPrevious` at once with the one before), each to its end: their
 * exits, in job order. A job cancelled by its timeout fails with `TimeoutException`.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (program: Program, session: Session): Effect.Effect<Array<Exit.Exit<unknown, unknown>>> =>
  Effect.gen(function*() {
    const exits: Array<Exit.Exit<unknown, unknown>> = []
    const one = (job: Job) => {
      const running = Effect.suspend(() => job.run(session))
      return Effect.exit(job.cancelAfterMillis === undefined ? running : Effect.timeout(running, job.cancelAfterMillis))
    }
    for (let i = 0; i < program.jobs.length; i++) {
      const next = program.jobs[i + 1]
      if (next?.withPrevious === true) {
        exits.push(...(yield* Effect.all([one(program.jobs[i]!), one(next)], { concurrency: 2 })))
        i++
      } else {
        exits.push(yield* one(program.jobs[i]!))
      }
    }
    return exits
  })

/**
 * How a job ended against what it must give: right (its value, or the failure it must fail with), cancelled by
 * its timeout, failed (typed) for a reason the caller must judge — a cluster fault may fail a job — or wrong.
 *
 * @since 0.1.0
 * @category running
 */
export const judge = (job: Job, exit: Exit.Exit<unknown, unknown>): Verdict => {
  const { expected } = job
  if (exit._tag === "Success") {
    if (expected._tag === "Value") {
      const problem = expected.check(exit.value)
      return problem === undefined ? { _tag: "Right" } : { _tag: "Wrong", problem }
    }
    return { _tag: "Wrong", problem: `it succeeded with ${short(exit.value)}, but must fail (${expected._tag})` }
  }
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "None") {
    return { _tag: "Wrong", problem: `it ended with ${Cause.pretty(exit.cause).split("\n")[0]}` }
  }
  const error = failure.value as { readonly _tag?: string; readonly reason?: string; readonly internal?: boolean }
  switch (error._tag) {
    case "TimeoutException":
      return job.cancelAfterMillis === undefined
        ? { _tag: "Wrong", problem: "it timed out uncancelled" }
        : { _tag: "Cancelled" }
    case "EmptyDataset":
      return expected._tag === "Empty" ? { _tag: "Right" } : { _tag: "Wrong", problem: "it failed with EmptyDataset" }
    case "JobFailed": {
      const reason = error.reason ?? ""
      if (error.internal === true) return { _tag: "Wrong", problem: `an internal error: ${reason}` }
      if (expected._tag === "Fails" && reason.includes(injected)) return { _tag: "Right" }
      return { _tag: "Failed", reason }
    }
    default:
      return { _tag: "Wrong", problem: `it failed with ${String(error._tag)}: ${String((error as Error).message)}` }
  }
}
