/**
 * Runs a task: evaluates its partition's plan lazily (records flow through generators, so `take` reads no more
 * than it needs) and applies its result operation. It is synchronous and self-contained, so that it can run on
 * a worker thread that is simply terminated when its task is killed.
 *
 * This module runs tasks and reads their plans; the plan's operators, shuffle reads and result operations are in
 * its internal modules.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"
import * as Records from "@kindling/protocol/records"
import { SharedVariables } from "@kindling/protocol/records"
import * as TaskContext from "../tasks/TaskContext.js"
import * as planOperators from "./internal/planOperators.js"
import * as resultOps from "./internal/resultOps.js"
import * as shuffleReads from "./internal/shuffleReads.js"

// What a thread receives: the MessagePack form of a task, plain objects tagged as the schemas describe.
/**
 * A task as it is decoded from `LaunchTask.serializedTask`.
 *
 * @since 0.1.0
 */
export type Task = typeof TaskPlan.Task.Encoded
type PlanNode = Task["plan"]
type FunctionRef = typeof TaskPlan.FunctionRef.Encoded

/**
 * Turns a function reference into the function. Named functions come from the app module, hoisted ones are
 * made by the app module's factories from their captured values; source text is compiled once per text.
 *
 * @since 0.1.0
 */
export class Functions {
  private readonly compiled = new Map<string, (...args: Array<any>) => any>()

  constructor(
    private readonly named: (name: string) => unknown,
    private readonly hoisted: (id: string) => unknown = () => undefined
  ) {}

  /**
   * The function with its environment bound as its last argument, for calls with `arity` ordinary arguments
   * (a wrapper of fixed arity for one or two: it is called once per record, and spreading arguments would
   * allocate each time).
   */
  bind(ref: FunctionRef, arity = 1): (...args: Array<any>) => any {
    const fn = this.resolve(ref)
    const env = ref.env
    // No environment: called as it is, its last parameter is undefined all the same.
    if (env === undefined) return fn
    if (arity === 1) return (a: unknown) => fn(a, env)
    if (arity === 2) return (a: unknown, b: unknown) => fn(a, b, env)
    // Called once per partition (`zipPartitions` of three datasets or more): the spread costs nothing.
    return (...args: Array<unknown>) => fn(...args.slice(0, arity), env)
  }

  private resolve(ref: FunctionRef): (...args: Array<any>) => any {
    switch (ref._tag) {
      case "NamedFunction":
        return this.byName(ref.name)
      case "SourceFunction":
        return this.compile(ref.source)
      case "ClosureFunction":
        return this.make(ref)
    }
  }

  private byName(name: string): (...args: Array<any>) => any {
    const fn = this.named(name)
    if (typeof fn !== "function") throw new Error(`The app module has no function named ${name}`)
    return fn as (...args: Array<any>) => any
  }

  // A hoisted function, made afresh for the task from the values it captured and the functions it refers to.
  private make(ref: Extract<FunctionRef, { readonly _tag: "ClosureFunction" }>): (...args: Array<any>) => any {
    const factory = this.hoisted(ref.id)
    if (typeof factory !== "function") {
      throw new Error(`The app module has no function written at ${ref.id}: was it built from other sources?`)
    }
    const captured: Record<string, unknown> = { ...ref.captured }
    for (const [name, inner] of Object.entries(ref.functions)) captured[name] = this.resolve(inner)
    return factory(captured) as (...args: Array<any>) => any
  }

  private compile(source: string): (...args: Array<any>) => any {
    let fn = this.compiled.get(source)
    if (fn === undefined) {
      // Indirect eval runs in the global scope: the function sees nothing of this module. The driver admitted it
      // only after checking that it refers to no variable of its surroundings.
      fn = (0, eval)(`(${source})`) as (...args: Array<any>) => any
      if (typeof fn !== "function") throw new Error(`Not a function: ${source.slice(0, 200)}`)
      this.compiled.set(source, fn)
    }
    return fn
  }
}

// The fields of a plan that hold the app's values — records, environments, zero values, captured values, sampled
// bounds — rather than plan: whatever they hold is data, never called.
const valueFields = new Set(["items", "env", "zero", "bounds", "captured"])

// Whether a node reads records encoded elsewhere — by another task, or by an earlier job — which may be instances
// of a class the app module registers (the records a slice carries are decoded with the task, which says at once
// when one is of a class unknown here). Every kind of node says, so that a new one is decided, not forgotten.
const readsRecordsMadeElsewhere: Record<PlanNode["_tag"], boolean> = {
  Slice: false,
  Range: false,
  TextSplit: false,
  LineRecordSplit: false,
  ParquetSplit: false,
  WholeTextFiles: false,
  RecordFile: true,
  Map: false,
  Filter: false,
  FlatMap: false,
  MapPartitions: false,
  MapValues: false,
  FlatMapValues: false,
  KeyBy: false,
  MapPartitionsWithIndex: false,
  Glom: false,
  Sample: false,
  FoldPartition: false,
  ReducePartition: false,
  ZipPartitions: false,
  ZipWithIndex: false,
  ShuffleRead: true,
  CoGroup: true,
  Concat: false,
  Cartesian: false,
  Cached: true
}
const readsElsewhere: Record<string, boolean | undefined> = readsRecordsMadeElsewhere

// One walk of a plan or a result through every field but the values, so that a new kind of node or result with a
// function in it is never missed: a function of the app module (named: exported, or registered by the app or the
// app API it imports; or hoisted into it), or a node that reads records made elsewhere. A function sent as source
// text needs no module.
const needsModule = (value: unknown): boolean => {
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return false
  if (Array.isArray(value)) {
    for (const item of value) if (needsModule(item)) return true
    return false
  }
  const fields = value as Record<string, unknown>
  const tag = fields["_tag"]
  if (
    typeof tag === "string" && (tag === "NamedFunction" || tag === "ClosureFunction" || readsElsewhere[tag] === true)
  ) {
    return true
  }
  for (const field in fields) if (!valueFields.has(field) && needsModule(fields[field])) return true
  return false
}

/**
 * Whether the task needs the app module imported before it runs: it calls one of the module's functions, or may
 * meet records of a class the module registers (read from a shuffle, a persisted partition or a checkpoint; a
 * task that reads broadcast variables, which its inputs carry, needs it too). A task that needs none of it — one
 * that counts parallelized numbers — runs without it.
 *
 * @since 0.1.0
 */
export const needsAppModule = (task: Task): boolean => needsModule(task.plan) || needsModule(task.result)

/**
 * What a task produced, and how many records it read from its sources.
 *
 * @since 0.1.0
 */
export interface Outcome {
  readonly value: unknown
  readonly recordsRead: number
  readonly metrics: Readonly<Record<string, number>>
}

/**
 * Where a running task counts the records it has read from its sources; a task thread's is in memory its pool
 * can read while the task runs.
 *
 * @since 0.1.0
 */
export interface Counter {
  read: number
}

/**
 * Runs the task against `functions` in `context`, counting what it reads in `counter` and, when its thread has a
 * `cpuClock` (nanoseconds this thread has run), the CPU time it took (`cpuTime`); throws whatever the user's
 * functions throw. The task's scratch files are gone when it returns or throws.
 *
 * @since 0.1.0
 */
export const run = (
  task: Task,
  functions: Functions,
  context: TaskContext.TaskContext,
  counter: Counter = { read: 0 },
  cpuClock?: () => number
): Outcome => {
  const env: planOperators.Run = { functions, counter, context }
  const cpuStart = cpuClock?.()
  try {
    return SharedVariables.withinTask(variablesOf(context), () => {
      const records = planOperators.evaluate(task.plan, env)
      const value = resultOps.apply(task.result, records, env)
      if (cpuStart !== undefined) TaskContext.count(context, "cpuTime", cpuClock!() - cpuStart)
      return { value, recordsRead: counter.read, metrics: context.metrics }
    })
  } finally {
    TaskContext.cleanUp(context)
  }
}

// Broadcast values, decoded once per thread (each thread has its own copy of this module).
const decodedBroadcasts = new Map<number, unknown>()

// Shared variables as a task sees them: broadcasts from what its executor fetched, accumulators its own, and the
// task context its own attempt.
const variablesOf = (context: TaskContext.TaskContext): SharedVariables.VariableScope => ({
  task: context.task,
  broadcastValue: (broadcast) => {
    if (decodedBroadcasts.has(broadcast.id)) return decodedBroadcasts.get(broadcast.id)
    const bytes = context.broadcasts.get(broadcast.id)
    if (bytes === undefined) throw new Error(`Broadcast ${broadcast.id} was not fetched for this task`)
    // A copy out of the memory the executor shares with its threads, which the decoder does not read.
    const value = Records.decode(bytes.buffer instanceof SharedArrayBuffer ? new Uint8Array(bytes) : bytes)
    decodedBroadcasts.set(broadcast.id, value)
    return value
  },
  add: (accumulator, value) => {
    const entry = context.accumulators.get(accumulator.id) ??
      { kind: accumulator.kind, value: SharedVariables.zero(accumulator.kind) }
    entry.value = SharedVariables.added(accumulator.kind, entry.value, value)
    context.accumulators.set(accumulator.id, entry)
  },
  // In a task, an accumulator's value is what this task has added.
  accumulatorValue: (accumulator) =>
    context.accumulators.get(accumulator.id)?.value ?? SharedVariables.zero(accumulator.kind)
})

/**
 * A task's outcome: an encoded `TaskPlan.TaskOutcome`, and whether it is a result (`TaskResult`), which the
 * executor need not decode it to know (a result may be large).
 *
 * @since 0.1.0
 * @category models
 */
export interface EncodedOutcome {
  readonly bytes: Uint8Array
  readonly succeeded: boolean
}

/**
 * Runs a task and encodes its outcome: a `TaskResult`, or a `TaskFailure` with what the user's functions threw.
 * It never throws.
 *
 * @since 0.1.0
 */
export const outcomeOf = (
  task: Task,
  functions: Functions,
  context: TaskContext.TaskContext,
  counter?: Counter,
  cpuClock?: () => number
): EncodedOutcome => {
  try {
    const { metrics, recordsRead, value } = run(task, functions, context, counter, cpuClock)
    const accumulators = [...context.accumulators].map(([id, entry]) => [id, entry.value])
    const parsedFiles = context.parsedFiles.filter((file) => file.records > 0)
    const bytes = Records.encode({
      _tag: "TaskResult",
      value: encodeResult(task, value),
      recordsRead,
      metrics,
      ...(accumulators.length === 0 ? {} : { accumulators }),
      ...(parsedFiles.length === 0 ? {} : { parsedFiles })
    })
    return { bytes, succeeded: true }
  } catch (error) {
    if (!(error instanceof ShuffleReadFailed)) return failureOutcome(error)
    const bytes = Records.encode({
      _tag: "FetchFailed",
      shuffleId: error.shuffleId,
      mapIndex: error.mapIndex,
      reduceId: error.reduceId,
      executorId: error.executorId,
      message: error.message
    })
    return { bytes, succeeded: false }
  }
}

// The records a task returns as they are (`collect`, `take`): those the app's function made, named so when they
// cannot travel (an Effect returned where its result was meant).
const encodeResult = (task: Task, value: unknown): Uint8Array => {
  try {
    return Records.encode(value)
  } catch (error) {
    if (!(error instanceof Records.CannotTravel) || (task.result._tag !== "Collect" && task.result._tag !== "Take")) {
      throw error
    }
    let maker = task.plan
    while ((maker._tag === "Filter" || maker._tag === "Sample") && "child" in maker) maker = maker.child
    if (!("fn" in maker)) throw new Records.CannotTravel("A record", error.reason)
    const transformation = madeBy(maker._tag)
    throw new Records.CannotTravel(
      `A record returned by the function given to ${transformation}`,
      error.reason,
      error.reason._tag === "Effect"
        ? `The function runs on executors, outside any Effect: it returns the value itself (${transformation}((x) => ` +
          `x * 2), not ${transformation}((x) => Effect.succeed(x * 2)))`
        : undefined
    )
  }
}

// The transformation a plan node's function was given to: `FlatMap` is `flatMap`'s.
const madeBy = (tag: string): string => `${tag[0]!.toLowerCase()}${tag.slice(1)}`

/**
 * A block of a map output this task read turned out unreadable (rotten on its disk, cut short, gone): not the
 * task's fault but the map output's, which must be computed again — the task's outcome is a `FetchFailed`.
 *
 * @since 0.1.0
 */
export const ShuffleReadFailed: typeof shuffleReads.ShuffleReadFailed = shuffleReads.ShuffleReadFailed
/**
 * @since 0.1.0
 */
export type ShuffleReadFailed = shuffleReads.ShuffleReadFailed

/**
 * The encoded `TaskFailure` of a task that could not run, with what was thrown.
 *
 * @since 0.1.0
 */
export const failureOutcome = (error: unknown): EncodedOutcome => ({
  bytes: Records.encode({ _tag: "TaskFailure", ...describeError(error) }),
  succeeded: false
})

/**
 * Runs an encoded `TaskPlan.Task` and encodes its outcome (`outcomeOf`); bytes that are not a task are its
 * failure. It never throws, so every runner of tasks (a task thread, or the simulated cluster's executors)
 * reports outcomes alike.
 *
 * @since 0.1.0
 */
export const runEncoded = (
  task: Uint8Array,
  functions: Functions,
  context: TaskContext.TaskContext
): EncodedOutcome => {
  let decoded: Task
  try {
    decoded = Records.decode(task) as Task
  } catch (error) {
    return failureOutcome(error)
  }
  return outcomeOf(decoded, functions, context)
}

/**
 * What a thrown value says of itself, as a task failure reports it.
 *
 * @since 0.1.0
 */
export const describeError = (
  error: unknown
): { readonly className: string; readonly message: string; readonly stack: string } =>
  error instanceof Error
    ? { className: error.name, message: error.message, stack: error.stack ?? `${error.name}: ${error.message}` }
    : { className: typeof error, message: String(error), stack: String(error) }
