// The curves measured on a real local-cluster: (a) shuffles of growing size with executors whose memory is below
// the shuffle's, and (b) jobs of growing task counts.
import { children, rss } from "../processes.js"
import { results, submit } from "../submit.js"

export const shuffleOperations = ["groupByKey", "sortByKey", "reduceByKey"] as const

export interface ShufflePoint {
  readonly gib: number
  readonly seconds: number
  readonly shuffleWritten: number
  readonly spilled: number
  /** The largest resident memory an executor process reached. */
  readonly peakRss: number
}

/**
 * One shuffle of `gib` GiB of 128-byte records (an int key drawn skewed from a million, a 120-character payload),
 * made by the executors of `local-cluster[2,1,executorMb]`, 16 partitions per GiB.
 */
export const shuffle = async (operation: string, gib: number, executorMb: number): Promise<ShufflePoint> => {
  const records = Math.round((gib * 2 ** 30) / 128)
  const partitions = Math.max(2, Math.round(16 * gib))
  let peakRss = 0
  const ran = await submit(
    `local-cluster[2,1,${executorMb}]`,
    "bench/apps/shuffle.ts",
    [operation, String(records), "120", String(partitions)],
    {
      flags: ["--executor-memory", `${executorMb}m`],
      sample: (pid) => (peakRss = Math.max(peakRss, ...children(pid).map(rss)))
    }
  )
  const [millis, written, , spilled] = results(ran.stdout)[0]!
  return { gib, seconds: millis! / 1000, shuffleWritten: written!, spilled: spilled!, peakRss }
}

export interface TasksPoint {
  readonly tasks: number
  readonly perSecond: number
  readonly heapPerTask: number
}

/** Jobs of each of `counts` one-element tasks in one app on `local-cluster[2,1,1024]`. */
export const taskCounts = async (counts: ReadonlyArray<number>): Promise<Array<TasksPoint>> => {
  const ran = await submit("local-cluster[2,1,1024]", "bench/apps/task-scale.ts", counts.map(String), {
    nodeFlags: ["--expose-gc"]
  })
  return results(ran.stdout).map(([tasks, millis, before, peak]) => ({
    tasks: tasks!,
    perSecond: tasks! / (millis! / 1000),
    heapPerTask: (peak! - before!) / tasks!
  }))
}
