/**
 * The decisions of Spark's DriverRunner and ExecutorRunner (§4.6 of the protocol reference), as pure functions:
 * how long a supervised driver waits before its relaunch and which final state a run ends in (which `WorkerCore`
 * applies to each run's end), and how placeholders in a command's arguments are filled in.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Option from "effect/Option"
import * as Os from "node:os"
import type { ProcessExit } from "./ProcessLauncher.js"

/**
 * A run that lasted longer than this counts as a success for the back-off, which starts over.
 *
 * @since 0.1.0
 * @category constants
 */
export const successfulRunMillis = 5000

/**
 * The wait before relaunching a supervised driver whose run just ended: `initialMillis` the first time and after a
 * run longer than `successfulRunMillis`, otherwise twice the previous wait (1, 2, 4, 8 … seconds in Spark, without
 * a cap).
 *
 * @since 0.1.0
 * @category supervision
 */
export const nextBackoff = (
  previousMillis: number | undefined,
  lastRunMillis: number,
  initialMillis: number
): number => previousMillis === undefined || lastRunMillis > successfulRunMillis ? initialMillis : previousMillis * 2

/**
 * The exit code a shell would report: the process's own code, or 128 plus the number of the signal that ended
 * it (143 for SIGTERM, 137 for SIGKILL).
 *
 * @since 0.1.0
 * @category supervision
 */
export const exitCode = (exit: ProcessExit): number => {
  if (exit.code !== null) return exit.code
  const signalNumber = exit.signal === null ? undefined : Os.constants.signals[exit.signal as NodeJS.Signals]
  return 128 + (signalNumber ?? 0)
}

/**
 * The states a driver run can end in; ERROR (the run never got going) is decided before there is an exit code.
 *
 * @since 0.1.0
 * @category models
 */
export type DriverFinalState = "FINISHED" | "KILLED" | "FAILED"

/**
 * 0 is FINISHED, even after a kill; otherwise KILLED when a kill was asked for and FAILED when not.
 * `exitCode` is undefined when the driver was killed before it was ever launched.
 *
 * @since 0.1.0
 * @category supervision
 */
export const driverFinalState = (run: {
  readonly exitCode: number | undefined
  readonly killed: boolean
}): DriverFinalState => run.exitCode === 0 ? "FINISHED" : run.killed ? "KILLED" : "FAILED"

/**
 * How an executor's run ended: its process exited by itself, it was killed (with the exit code of the terminated
 * process, none when it was killed before it started), or it could not be launched.
 *
 * @since 0.1.0
 * @category models
 */
export type ExecutorOutcome = Data.TaggedEnum<{
  Exited: { readonly exitCode: number }
  Killed: { readonly exitCode: Option.Option<number> }
  LaunchFailed: { readonly reason: string }
}>

/**
 * @since 0.1.0
 * @category constructors
 */
export const ExecutorOutcome = Data.taggedEnum<ExecutorOutcome>()

/**
 * The final state of an executor with the message and exit status that go into `ExecutorStateChanged`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecutorResult {
  readonly state: "EXITED" | "KILLED" | "FAILED"
  readonly message: Option.Option<string>
  readonly exitStatus: Option.Option<number>
}

/**
 * Exiting by itself is EXITED whatever the code (the master judges the code), a kill is KILLED, and a launch
 * failure is FAILED with the failure's text.
 *
 * @since 0.1.0
 * @category supervision
 */
export const executorFinalState: (outcome: ExecutorOutcome) => ExecutorResult = ExecutorOutcome.$match({
  Exited: ({ exitCode }): ExecutorResult => ({
    state: "EXITED",
    message: Option.some(`Command exited with code ${exitCode}`),
    exitStatus: Option.some(exitCode)
  }),
  Killed: ({ exitCode }): ExecutorResult => ({ state: "KILLED", message: Option.none(), exitStatus: exitCode }),
  LaunchFailed: ({ reason }): ExecutorResult => ({
    state: "FAILED",
    message: Option.some(reason),
    exitStatus: Option.none()
  })
})

/**
 * The placeholders a command's arguments may contain, written `{{NAME}}`.
 *
 * @since 0.1.0
 * @category models
 */
export type Placeholder = "WORKER_URL" | "USER_JAR" | "EXECUTOR_ID" | "HOSTNAME" | "CORES" | "APP_ID"

const placeholder = /\{\{([A-Z_]+)\}\}/g

/**
 * Replaces every `{{NAME}}` for which a value is given; other text, including placeholders without a value (a
 * driver has no executor id), is left as it is, as Spark does.
 *
 * @since 0.1.0
 * @category supervision
 */
export const substitute = (
  args: ReadonlyArray<string>,
  values: Partial<Record<Placeholder, string>>
): Array<string> =>
  args.map((arg) =>
    arg.replace(
      placeholder,
      (match, name: string) => Object.hasOwn(values, name) ? values[name as Placeholder]! : match
    )
  )
