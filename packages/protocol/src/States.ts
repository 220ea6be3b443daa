/**
 * The state enums of the standalone deploy protocol, with Spark 3.3's values in declaration order.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The master's leadership and recovery state (Spark's `RecoveryState`). A master starts in STANDBY.
 *
 * @since 0.1.0
 * @category models
 */
export const RecoveryState = Schema.Literal("STANDBY", "ALIVE", "RECOVERING", "COMPLETING_RECOVERY").annotations({
  identifier: "RecoveryState",
  description: "The master's leadership and recovery state; a master starts in STANDBY"
})
/**
 * @since 0.1.0
 * @category models
 */
export type RecoveryState = typeof RecoveryState.Type

/**
 * A worker as the master sees it. UNKNOWN only occurs while the master recovers.
 *
 * @since 0.1.0
 * @category models
 */
export const WorkerState = Schema.Literal("ALIVE", "DEAD", "DECOMMISSIONED", "UNKNOWN").annotations({
  identifier: "WorkerState",
  description: "A worker as the master sees it; UNKNOWN only while the master recovers"
})
/**
 * @since 0.1.0
 * @category models
 */
export type WorkerState = typeof WorkerState.Type

/**
 * A driver's lifecycle. RELAUNCHING is the final state of the old record of a supervised driver that was
 * relaunched under a new id.
 *
 * @since 0.1.0
 * @category models
 */
export const DriverState = Schema.Literal(
  "SUBMITTED",
  "RUNNING",
  "FINISHED",
  "RELAUNCHING",
  "UNKNOWN",
  "KILLED",
  "FAILED",
  "ERROR"
).annotations({
  identifier: "DriverState",
  description: "A driver's lifecycle; RELAUNCHING marks the old record of a relaunched supervised driver"
})
/**
 * @since 0.1.0
 * @category models
 */
export type DriverState = typeof DriverState.Type

/**
 * An application's lifecycle on the master.
 *
 * @since 0.1.0
 * @category models
 */
export const ApplicationState = Schema.Literal("WAITING", "RUNNING", "FINISHED", "FAILED", "KILLED", "UNKNOWN")
  .annotations({ identifier: "ApplicationState", description: "An application's lifecycle on the master" })
/**
 * @since 0.1.0
 * @category models
 */
export type ApplicationState = typeof ApplicationState.Type

/**
 * An executor process's lifecycle. DECOMMISSIONED is deliberately not a finished state.
 *
 * @since 0.1.0
 * @category models
 */
export const ExecutorState = Schema.Literal(
  "LAUNCHING",
  "RUNNING",
  "KILLED",
  "FAILED",
  "LOST",
  "EXITED",
  "DECOMMISSIONED"
).annotations({
  identifier: "ExecutorState",
  description: "An executor process's lifecycle; DECOMMISSIONED is not a finished state"
})
/**
 * @since 0.1.0
 * @category models
 */
export type ExecutorState = typeof ExecutorState.Type

/**
 * A task attempt's lifecycle.
 *
 * @since 0.1.0
 * @category models
 */
export const TaskState = Schema.Literal("LAUNCHING", "RUNNING", "FINISHED", "FAILED", "KILLED", "LOST").annotations({
  identifier: "TaskState",
  description: "A task attempt's lifecycle"
})
/**
 * @since 0.1.0
 * @category models
 */
export type TaskState = typeof TaskState.Type

/**
 * Every state enum of the protocol, by name; the docs generator and the test kit iterate over it.
 *
 * @since 0.1.0
 * @category models
 */
export const all = {
  RecoveryState,
  WorkerState,
  DriverState,
  ApplicationState,
  ExecutorState,
  TaskState
} as const

const member = <A extends string>(values: ReadonlyArray<A>) => {
  const set: ReadonlySet<string> = new Set(values)
  return (state: A): boolean => set.has(state)
}

/**
 * DEAD is the only state a worker does not leave.
 *
 * @since 0.1.0
 * @category guards
 */
export const isWorkerFinished: (state: WorkerState) => boolean = member<WorkerState>(["DEAD"])

/**
 * The final states a worker may report for a driver it ran.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDriverFinished: (state: DriverState) => boolean = member<DriverState>([
  "FINISHED",
  "KILLED",
  "FAILED",
  "ERROR",
  "RELAUNCHING"
])

/**
 * A driver state a worker may report in `DriverStateChanged`; the master rejects every other one.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDriverReportable: (state: DriverState) => boolean = member<DriverState>([
  "FINISHED",
  "KILLED",
  "FAILED",
  "ERROR"
])

/**
 * Anything but WAITING and RUNNING is finished.
 *
 * @since 0.1.0
 * @category guards
 */
export const isApplicationFinished: (state: ApplicationState) => boolean = (state) =>
  state !== "WAITING" && state !== "RUNNING"

/**
 * KILLED, FAILED, LOST and EXITED; DECOMMISSIONED is not finished.
 *
 * @since 0.1.0
 * @category guards
 */
export const isExecutorFinished: (state: ExecutorState) => boolean = member<ExecutorState>([
  "KILLED",
  "FAILED",
  "LOST",
  "EXITED"
])

/**
 * FINISHED, FAILED, KILLED and LOST.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTaskFinished: (state: TaskState) => boolean = member<TaskState>(["FINISHED", "FAILED", "KILLED", "LOST"])

/**
 * FAILED or LOST: the finished states that count against a task's failure budget.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTaskFailed: (state: TaskState) => boolean = member<TaskState>(["FAILED", "LOST"])

type Moves<S extends string> = { readonly [From in S]: ReadonlyArray<S> }

/**
 * The state changes a master may make to an executor it tracks. Reports that would make any other change are
 * ignored.
 *
 * @since 0.1.0
 * @category transitions
 */
export const executorMoves: Moves<ExecutorState> = {
  LAUNCHING: ["RUNNING", "DECOMMISSIONED", "KILLED", "FAILED", "LOST", "EXITED"],
  RUNNING: ["DECOMMISSIONED", "KILLED", "FAILED", "LOST", "EXITED"],
  DECOMMISSIONED: ["KILLED", "FAILED", "LOST", "EXITED"],
  KILLED: [],
  FAILED: [],
  LOST: [],
  EXITED: []
}

/**
 * A driver record's state changes. SUBMITTED drivers may end without running (killed while waiting, or lost
 * in recovery); RELAUNCHING ends the record of a driver that is relaunched under a new id.
 *
 * @since 0.1.0
 * @category transitions
 */
export const driverMoves: Moves<DriverState> = {
  SUBMITTED: ["RUNNING", "KILLED", "ERROR", "RELAUNCHING"],
  RUNNING: ["FINISHED", "KILLED", "FAILED", "ERROR", "RELAUNCHING"],
  UNKNOWN: ["RUNNING", "KILLED", "ERROR", "RELAUNCHING"],
  FINISHED: [],
  RELAUNCHING: [],
  KILLED: [],
  FAILED: [],
  ERROR: []
}

/**
 * An application's state changes; UNKNOWN is where a recovering master puts the apps it read back.
 *
 * @since 0.1.0
 * @category transitions
 */
export const applicationMoves: Moves<ApplicationState> = {
  WAITING: ["RUNNING", "FINISHED", "FAILED", "KILLED"],
  RUNNING: ["FINISHED", "FAILED", "KILLED"],
  UNKNOWN: ["WAITING", "FINISHED"],
  FINISHED: [],
  FAILED: [],
  KILLED: []
}

/**
 * A worker's state changes as the master sees them.
 *
 * @since 0.1.0
 * @category transitions
 */
export const workerMoves: Moves<WorkerState> = {
  ALIVE: ["DEAD", "DECOMMISSIONED"],
  DECOMMISSIONED: ["DEAD"],
  UNKNOWN: ["ALIVE", "DEAD", "DECOMMISSIONED"],
  DEAD: []
}

/**
 * Whether a move is one of the listed ones (staying put always is).
 *
 * @since 0.1.0
 * @category transitions
 */
export const canMove = <S extends string>(moves: Moves<S>, from: S, to: S): boolean =>
  from === to || moves[from].includes(to)
