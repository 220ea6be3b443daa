/**
 * What an app's event stream must say of its jobs, whatever happened to them: every job that started ended
 * exactly once; every stage attempt submitted completed exactly once, and every task that started ended exactly
 * once; and no task started for a stage once every job that needed the stage had ended. Fed the events in the
 * order the app published them.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/driver"

/**
 * @since 0.1.0
 * @category models
 */
export class EventChecks {
  private readonly jobs = new Map<number, number>()
  private readonly stageJobs = new Map<number, Set<number>>()
  private readonly stages = new Map<string, number>()
  private readonly tasks = new Map<number, number>()
  private readonly found: Array<string> = []

  record(event: AppEvents.AppEvent): void {
    switch (event._tag) {
      case "JobStart":
        if (this.jobs.has(event.jobId)) this.found.push(`job ${event.jobId} started twice`)
        this.jobs.set(event.jobId, 0)
        for (const stageId of event.stageIds) {
          this.stageJobs.set(stageId, new Set([...this.stageJobs.get(stageId) ?? [], event.jobId]))
        }
        return
      case "JobEnd": {
        const ends = this.jobs.get(event.jobId)
        if (ends === undefined) this.found.push(`job ${event.jobId} ended unstarted`)
        else this.jobs.set(event.jobId, ends + 1)
        return
      }
      case "StageSubmitted": {
        const key = `${event.stageId}.${event.stageAttempt}`
        if (this.stages.has(key)) this.found.push(`stage ${key} was submitted twice`)
        this.stages.set(key, 0)
        return
      }
      case "StageCompleted": {
        const key = `${event.stageId}.${event.stageAttempt}`
        const ends = this.stages.get(key)
        if (ends === undefined) this.found.push(`stage ${key} completed unsubmitted`)
        else this.stages.set(key, ends + 1)
        return
      }
      case "TaskStart": {
        if (this.tasks.has(event.taskId)) this.found.push(`TID ${event.taskId} started twice`)
        this.tasks.set(event.taskId, 0)
        const jobs = [...this.stageJobs.get(event.stageId) ?? []]
        if (jobs.length > 0 && jobs.every((job) => (this.jobs.get(job) ?? 0) > 0)) {
          this.found.push(
            `TID ${event.taskId} of stage ${event.stageId} started after its jobs ${jobs.join(", ")} ended`
          )
        }
        return
      }
      case "TaskEnd": {
        const ends = this.tasks.get(event.taskId)
        if (ends === undefined) this.found.push(`TID ${event.taskId} ended unstarted`)
        else this.tasks.set(event.taskId, ends + 1)
        return
      }
    }
  }

  /** What is wrong, once the app is done. */
  problems(): ReadonlyArray<string> {
    const problems = [...this.found]
    for (const [job, ends] of this.jobs) if (ends !== 1) problems.push(`job ${job} ended ${ends} times`)
    for (const [stage, ends] of this.stages) if (ends !== 1) problems.push(`stage ${stage} completed ${ends} times`)
    for (const [task, ends] of this.tasks) if (ends !== 1) problems.push(`TID ${task} ended ${ends} times`)
    return problems
  }
}
