/**
 * The layout of the directories one role makes and another cleans up.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"

/**
 * The directory of an executor's shuffle files and spills, inside its working directory. The executor removes it
 * when it stops; its worker removes it when the executor's process has ended, however it ended.
 *
 * @since 0.1.0
 * @category constants
 */
export const blockManagerDirName = "blockmgr"

/**
 * The variable by which a worker that runs a shuffle service tells the executors it starts where the service is
 * (its RPC URL), beside `KINDLING_EXECUTOR_DIRS`, the app's scratch directory on that worker.
 *
 * @since 0.1.0
 * @category constants
 */
export const shuffleServiceVariable = "KINDLING_SHUFFLE_SERVICE"

/**
 * The directory an executor keeps its files in when its worker's shuffle service serves them: under the app's
 * scratch directory, which outlives the executor and is removed when the app has finished.
 *
 * @since 0.1.0
 */
export const servedExecutorDir = (appDir: string, executorId: string): string => Path.join(appDir, executorId)

/**
 * The file a driver process writes the summary of its failure to (its error and the app's frames), in the working
 * directory its worker starts it in, as it exits: the worker reports it as the driver's exception. The end of the
 * driver's stderr would not do: logs may follow the error there, and a long trace push it out of what is read.
 *
 * @since 0.1.0
 * @category constants
 */
export const driverFailureFileName = "failure"
