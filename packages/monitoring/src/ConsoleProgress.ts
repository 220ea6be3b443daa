/**
 * The console progress bar, as Spark draws it: every 200 ms, the stages that have run for more than 500 ms (at
 * most three), side by side across the terminal's width, each `[Stage 3:=========>          (42 + 8) / 100]`
 * — completed tasks, running tasks, total. Written to stderr between carriage returns, redrawn only when it
 * changed (or after a minute), and wiped when a job ends. It follows the app's event stream.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/**
 * @since 0.1.0
 * @category models
 */
export interface StageProgress {
  readonly stageId: number
  readonly total: number
  readonly completed: number
  readonly active: number
  readonly submittedAt: number
}

const firstDelayMillis = 500
const maxStages = 3

/**
 * The bar for the stages shown at `now` in `width` columns, or `""` when none has run long enough.
 *
 * @since 0.1.0
 */
export const render = (stages: ReadonlyArray<StageProgress>, now: number, width: number): string => {
  const shown = stages
    .filter((stage) => now - stage.submittedAt > firstDelayMillis)
    .sort((a, b) => a.stageId - b.stageId)
    .slice(0, maxStages)
  if (shown.length === 0) return ""
  const share = Math.floor(width / shown.length)
  return shown.map((stage) => {
    const header = `[Stage ${stage.stageId}:`
    const tail = `(${stage.completed} + ${stage.active}) / ${stage.total}]`
    const barWidth = share - header.length - tail.length
    let bar = ""
    if (barWidth > 0) {
      const filled = Math.floor((barWidth * stage.completed) / stage.total)
      for (let i = 0; i < barWidth; i++) bar += i < filled ? "=" : i === filled ? ">" : " "
    }
    return header + bar + tail
  }).join("")
}

/**
 * Draws the bar from `events` with `write` until the scope closes.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: {
  readonly events: Stream.Stream<AppEvents.AppEvent>
  readonly write: (text: string) => void
  readonly width: () => number
  readonly intervalMillis?: number
}): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stages = new Map<number, StageProgress>()
    let last = ""
    let lastDrawn = 0
    const clear = () => {
      if (last === "") return
      options.write(`\r${" ".repeat(options.width())}\r`)
      last = ""
    }
    const attempts = new Map<number, number>()
    const jobStages = new Map<number, ReadonlyArray<number>>()
    const apply = (event: AppEvents.AppEvent) => {
      // Tasks of an attempt other than the stage's latest do not move its bar.
      const stage =
        "stageId" in event && (!("stageAttempt" in event) || attempts.get(event.stageId) === event.stageAttempt)
          ? stages.get(event.stageId)
          : undefined
      switch (event._tag) {
        case "JobStart":
          jobStages.set(event.jobId, event.stageIds)
          break
        case "StageSubmitted":
          attempts.set(event.stageId, event.stageAttempt)
          stages.set(event.stageId, {
            stageId: event.stageId,
            total: event.tasks,
            completed: 0,
            active: 0,
            submittedAt: event.time
          })
          break
        case "StageCompleted":
          stages.delete(event.stageId)
          attempts.delete(event.stageId)
          break
        case "TaskStart":
          if (stage !== undefined) stages.set(stage.stageId, { ...stage, active: stage.active + 1 })
          break
        case "TaskEnd":
          if (stage !== undefined) {
            stages.set(stage.stageId, {
              ...stage,
              active: Math.max(0, stage.active - 1),
              completed: stage.completed + (event.succeeded ? 1 : 0)
            })
          }
          break
        case "JobEnd":
          // A cancelled job's stages end with it, reported or not.
          for (const stageId of jobStages.get(event.jobId) ?? []) stages.delete(stageId)
          jobStages.delete(event.jobId)
          clear()
          break
      }
    }
    const draw = Effect.sync(() => {
      const now = Date.now()
      const line = render([...stages.values()], now, options.width())
      if (line === "" || (line === last && now - lastDrawn < 60_000)) return
      options.write(`\r${line}\r`)
      last = line
      lastDrawn = now
    })
    yield* Effect.forkScoped(Stream.runForEach(options.events, (event) => Effect.sync(() => apply(event))))
    yield* Effect.forkScoped(Effect.repeat(draw, { schedule: Schedule.spaced(options.intervalMillis ?? 200) }))
    yield* Effect.addFinalizer(() => Effect.sync(clear))
  })

/**
 * Options that draw on this process's stderr, `$COLUMNS` wide (80 when unset), as Spark does.
 *
 * @since 0.1.0
 */
export const onStderr = (events: Stream.Stream<AppEvents.AppEvent>) => ({
  events,
  write: (text: string) => {
    process.stderr.write(text)
  },
  width: () => Number(process.env.COLUMNS) || 80
})
