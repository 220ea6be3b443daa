/**
 * Which task set: the stage attempt whose tasks it runs (a set per attempt, as Spark's `TaskSetManager`). The two
 * numbers are kept as numbers, so that whoever needs the stage or the attempt reads it; a map of task sets is keyed
 * by `key`, which is built here only and never read back.
 *
 * @since 0.1.0
 */
import type * as Brand from "effect/Brand"

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskSetId {
  readonly stageId: number
  readonly stageAttempt: number
}

/**
 * A task set's key in a map (ids are objects, which a `Map` compares by identity): the same for the same stage
 * attempt. It reads as Spark writes a stage attempt (`3.1`), so messages may show it too.
 *
 * @since 0.1.0
 * @category models
 */
export type Key = string & Brand.Brand<"TaskSetKey">

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (stageId: number, stageAttempt: number): TaskSetId => ({ stageId, stageAttempt })

/**
 * The key of a task set, or of anything that names its stage attempt (a task set's or an attempt's record).
 *
 * @since 0.1.0
 */
export const key = (id: TaskSetId): Key => `${id.stageId}.${id.stageAttempt}` as Key
