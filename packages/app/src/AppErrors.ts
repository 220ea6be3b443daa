/**
 * The errors an app's actions fail with.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

/**
 * A job did not complete: a task failed too often, results were too large, or it was cancelled. The reason reads
 * as Spark's (`Job aborted due to stage failure: Task 3 in stage 0.0 failed 4 times, most recent failure: …`).
 * `internal` is set when the job did not fail of its own accord but because the app's driver met a defect of its
 * own and stopped (`Job aborted: the driver stopped on an internal error: …`): then every later job fails too.
 *
 * @since 0.1.0
 * @category errors
 */
export class JobFailed extends Data.TaggedError("JobFailed")<{
  readonly reason: string
  readonly internal?: boolean
}> {
  override get message() {
    return this.reason
  }
}

/**
 * `reduce` or `first` of a dataset with no records.
 *
 * @since 0.1.0
 * @category errors
 */
export class EmptyDataset extends Data.TaggedError("EmptyDataset")<{ readonly action: string }> {
  override get message() {
    return `${this.action} of an empty dataset`
  }
}

/**
 * `saveAsTextFile` into a directory that exists: nothing of it is overwritten.
 *
 * @since 0.1.0
 * @category errors
 */
export class OutputDirectoryExists extends Data.TaggedError("OutputDirectoryExists")<{ readonly path: string }> {
  override get message() {
    return `Output directory ${this.path} already exists`
  }
}

/**
 * `saveAsTextFile` could not make, list, write in or finish its output directory (a parent that is a file or not
 * writable, a read-only or full disk, a file system that did not answer within `kindling.driver.fileTimeout`, the
 * directory gone once the parts were written): the driver finds out before any task runs. A part file an executor
 * cannot write (its disk filled up during the job, or it is another machine's) fails its task instead, and the job
 * with `JobFailed`.
 *
 * @since 0.1.0
 * @category errors
 */
export class OutputNotWritable extends Data.TaggedError("OutputNotWritable")<{
  readonly path: string
  readonly reason: string
}> {
  override get message() {
    return `Output directory ${this.path} cannot be written: ${this.reason}`
  }
}

/**
 * A file or directory a dataset reads could not be read.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputNotReadable extends Data.TaggedError("InputNotReadable")<{
  readonly path: string
  readonly reason: string
}> {
  override get message() {
    return `Input path ${this.path} cannot be read: ${this.reason}`
  }
}

/**
 * An argument out of its range: a negative count, a sample fraction below 0, a range step of 0.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidArgument extends Data.TaggedError("InvalidArgument")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}
