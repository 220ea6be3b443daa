/**
 * Shared variables (Spark's broadcast variables and accumulators) as values an app puts in a function's
 * environment: `ds.map((w, env) => { env.seen.add(1); return env.table.value[w] }, { table, seen })`. They
 * travel inside tasks as small references (a `Records` extension), never as their contents:
 *
 * - a `Broadcast`'s `value` is read where the code runs — on the driver, the value it was made with; in a task,
 *   the value its executor fetched once from the driver's data plane (block `broadcast/<token>/<id>`);
 * - an `Accumulator`'s `add` adds to the driver's value when called on the driver, and to the running task's
 *   own updates in a task; a task's updates reach the driver with its result, and are merged only if it
 *   succeeded.
 *
 * - the `TaskContext` (Spark's `TaskContext.get()`) says, in a task, which task it is: its stage, partition and
 *   attempt — as a task that must behave differently on a retry needs to know.
 *
 * Which of those applies is the scope in force: `withinTask` for the length of a task's evaluation, else the
 * driver's. It imports nothing, so that a task thread can load it alone (through `@kindling/protocol/records`).
 *
 * @since 0.1.0
 */

/**
 * What an accumulator adds up: `long` sums numbers, `collection` gathers values in an array.
 *
 * @since 0.1.0
 * @category models
 */
export type AccumulatorKind = "long" | "collection"

/**
 * Where shared variables are read and added to.
 *
 * @since 0.1.0
 * @category models
 */
export interface VariableScope {
  readonly broadcastValue: (broadcast: Broadcast<unknown>) => unknown
  readonly add: (accumulator: Accumulator<unknown, unknown>, value: unknown) => void
  readonly accumulatorValue: (accumulator: Accumulator<unknown, unknown>) => unknown
  /** The running task, in a task's scope. */
  readonly task?: TaskInfo
}

/**
 * Which task attempt is running (Spark's `TaskContext`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskInfo {
  readonly stageId: number
  readonly stageAttemptNumber: number
  /** The partition of the dataset it computes. */
  readonly partitionId: number
  /** How many attempts of this task its stage attempt made before this one: 0 for the first. */
  readonly attemptNumber: number
  /** The attempt's id among all of the app's (its TID). */
  readonly taskAttemptId: number
}

let driverScope: VariableScope | undefined
let taskScope: VariableScope | undefined

const current = (): VariableScope => {
  const scope = taskScope ?? driverScope
  if (scope === undefined) throw new Error("A shared variable is used outside of an app and of its tasks")
  return scope
}

/**
 * A value sent to every executor once, read by tasks through `value`.
 *
 * @since 0.1.0
 * @category models
 */
export class Broadcast<T> {
  constructor(
    readonly id: number,
    /** Random: only the app's own executors, told it in their tasks, can fetch the value. */
    readonly token: string
  ) {}

  get value(): T {
    return current().broadcastValue(this as Broadcast<unknown>) as T
  }
}

/**
 * A variable tasks add to and the driver reads (after the action that ran them).
 *
 * @since 0.1.0
 * @category models
 */
export class Accumulator<In, Out> {
  constructor(readonly id: number, readonly kind: AccumulatorKind, readonly name: string) {}

  add(value: In): void {
    current().add(this as Accumulator<unknown, unknown>, value)
  }

  get value(): Out {
    return current().accumulatorValue(this as Accumulator<unknown, unknown>) as Out
  }
}

/**
 * The running task as functions see it (Spark's `TaskContext.get()`): pass `kc.taskContext` in a function's
 * environment and read `env.task.attemptNumber`, `.partitionId`, … there. Read outside of a task (on the
 * driver), it throws.
 *
 * @since 0.1.0
 * @category models
 */
export class TaskContext implements TaskInfo {
  private get info(): TaskInfo {
    const task = taskScope?.task
    if (task === undefined) throw new Error("The TaskContext is read only in a task, on an executor")
    return task
  }

  get stageId(): number {
    return this.info.stageId
  }

  get stageAttemptNumber(): number {
    return this.info.stageAttemptNumber
  }

  get partitionId(): number {
    return this.info.partitionId
  }

  get attemptNumber(): number {
    return this.info.attemptNumber
  }

  get taskAttemptId(): number {
    return this.info.taskAttemptId
  }
}

/**
 * The one `TaskContext`: what it says depends on the task that reads it.
 *
 * @since 0.1.0
 */
export const taskContext: TaskContext = new TaskContext()

/**
 * Sums numbers (Spark's `LongAccumulator`).
 *
 * @since 0.1.0
 * @category models
 */
export type LongAccumulator = Accumulator<number, number>

/**
 * Gathers values (Spark's `CollectionAccumulator`).
 *
 * @since 0.1.0
 * @category models
 */
export type CollectionAccumulator<T> = Accumulator<T, Array<T>>

/**
 * The value of an accumulator nothing was added to.
 *
 * @since 0.1.0
 */
export const zero = (kind: AccumulatorKind): unknown => (kind === "long" ? 0 : [])

/**
 * Two values of an accumulator, merged.
 *
 * @since 0.1.0
 */
export const merge = (kind: AccumulatorKind, a: unknown, b: unknown): unknown =>
  kind === "long" ? (a as number) + (b as number) : (a as Array<unknown>).concat(b as Array<unknown>)

/**
 * One value added to an accumulator's value.
 *
 * @since 0.1.0
 */
export const added = (kind: AccumulatorKind, total: unknown, value: unknown): unknown => {
  if (kind === "long") {
    if (typeof value !== "number") throw new TypeError(`A long accumulator adds numbers, not ${typeof value}`)
    return (total as number) + value
  }
  ;(total as Array<unknown>).push(value)
  return total
}

/**
 * Makes `scope` the driver's: where shared variables are read outside of tasks, in this process.
 *
 * @since 0.1.0
 */
export const setDriverScope = (scope: VariableScope): void => {
  driverScope = scope
}

/**
 * Runs `f` with `scope` as the running task's.
 *
 * @since 0.1.0
 */
export const withinTask = <A>(scope: VariableScope, f: () => A): A => {
  const previous = taskScope
  taskScope = scope
  try {
    return f()
  } finally {
    taskScope = previous
  }
}
