/**
 * What an app's event stream must say of its jobs, whatever happened to them: every job that started ended
 * exactly once; every stage attempt submitted completed exactly once, and every task that started ended exactly
 * once; and no task started for a stage once every job that needed the stage had ended. Fed the events in the
 * order the app published them.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"

// Things that start once and end once: how many times each that started has ended.
class Lifetimes {
  private readonly ends = new Map<string, number>()

  constructor(private readonly what: string, private readonly found: Array<string>) {}

  started(id: string): void {
    if (this.ends.has(id)) this.found.push(`${this.what} ${id} started twice`)
    this.ends.set(id, 0)
  }

  ended(id: string): void {
    const ends = this.ends.get(id)
    if (ends === undefined) this.found.push(`${this.what} ${id} ended unstarted`)
    else this.ends.set(id, ends + 1)
  }

  hasEnded(id: string): boolean {
    return (this.ends.get(id) ?? 0) > 0
  }

  problems(): Array<string> {
    return [...this.ends].flatMap(([id, ends]) => (ends === 1 ? [] : [`${this.what} ${id} ended ${ends} times`]))
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export class EventChecks {
  private readonly found: Array<string> = []
  private readonly jobs = new Lifetimes("job", this.found)
  private readonly stages = new Lifetimes("stage", this.found)
  private readonly tasks = new Lifetimes("TID", this.found)
  private readonly stageJobs = new Map<number, Set<number>>()

  record(event: AppEvents.AppEvent): void {
    switch (event._tag) {
      case "JobStart":
        this.jobs.started(String(event.jobId))
        for (const stageId of event.stageIds) {
          this.stageJobs.set(stageId, new Set([...this.stageJobs.get(stageId) ?? [], event.jobId]))
        }
        return
      case "JobEnd":
        return this.jobs.ended(String(event.jobId))
      case "StageSubmitted":
        return this.stages.started(`${event.stageId}.${event.stageAttempt}`)
      case "StageCompleted":
        return this.stages.ended(`${event.stageId}.${event.stageAttempt}`)
      case "TaskStart": {
        this.tasks.started(String(event.taskId))
        const jobs = [...this.stageJobs.get(event.stageId) ?? []]
        if (jobs.length > 0 && jobs.every((job) => this.jobs.hasEnded(String(job)))) {
          this.found.push(
            `TID ${event.taskId} of stage ${event.stageId} started after its jobs ${jobs.join(", ")} ended`
          )
        }
        return
      }
      case "TaskEnd":
        return this.tasks.ended(String(event.taskId))
    }
  }

  /** What is wrong, once the app is done. */
  problems(): ReadonlyArray<string> {
    return [...this.found, ...this.jobs.problems(), ...this.stages.problems(), ...this.tasks.problems()]
  }
}
