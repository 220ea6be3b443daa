// The names Spark's event log gives what Kindling's events say: storage levels, the property of a job's scheduling
// pool, a killed task's reason.
import type * as SparkEvents from "../SparkEvents.js"

type SparkStorageLevel = typeof SparkEvents.StorageLevel.Type

export const storageLevels: Record<string, SparkStorageLevel> = {
  MEMORY_ONLY: { "Use Disk": false, "Use Memory": true, "Use Off Heap": false, Deserialized: true, Replication: 1 },
  MEMORY_AND_DISK: { "Use Disk": true, "Use Memory": true, "Use Off Heap": false, Deserialized: true, Replication: 1 },
  DISK_ONLY: { "Use Disk": true, "Use Memory": false, "Use Off Heap": false, Deserialized: false, Replication: 1 }
}

export const notStored: SparkStorageLevel = {
  "Use Disk": false,
  "Use Memory": false,
  "Use Off Heap": false,
  Deserialized: false,
  Replication: 1
}

export const storageLevelName = (level: SparkStorageLevel): string | undefined =>
  level["Use Memory"]
    ? (level["Use Disk"] ? "MEMORY_AND_DISK" : "MEMORY_ONLY")
    : level["Use Disk"]
    ? "DISK_ONLY"
    : undefined

// The pool a job runs in, as Spark's job properties name it.
export const poolProperty = "spark.scheduler.pool"
export const descriptionProperty = "spark.job.description"
export const jobGroupProperty = "spark.jobGroup.id"

export const killedPrefix = "TaskKilled ("

/** The suffix of a log still being written. */
export const inProgressSuffix = ".inprogress"

/** The prefix of a rolling log's folder (Spark's `eventlog_v2_`). */
export const rollingPrefix = "eventlog_v2_"
