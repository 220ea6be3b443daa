/**
 * Job groups and descriptions (Spark's `setJobGroup`, `setJobDescription`, `cancelJobGroup`): properties of the
 * fiber that starts jobs — as Spark's are of the thread — that its jobs carry, and fibers it forks inherit. A
 * description names jobs in the UI, the monitoring API and the event log; a group lets the app cancel all its
 * running jobs at once.
 *
 * @since 0.1.0
 */
import * as FiberRef from "effect/FiberRef"

/**
 * @since 0.1.0
 * @category models
 */
export interface JobProperties {
  readonly group: string | undefined
  readonly description: string | undefined
}

/**
 * The properties the current fiber's jobs get.
 *
 * @since 0.1.0
 */
export const current: FiberRef.FiberRef<JobProperties> = FiberRef.unsafeMake<JobProperties>({
  group: undefined,
  description: undefined
})
