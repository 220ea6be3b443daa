// Telling the master what changed here: an executor's state, a driver's end. Each executor's (and each driver's)
// messages are asked in the order they were told, one at a time, each retried before the next; different ones go
// in parallel. Every attempt goes to the master of the moment, which may have changed. A timed-out attempt is
// tried again at once (it has waited already), any other failure after the ask timeout. After
// `executorStateSyncMaxAttempts` attempts: an executor's state no master takes stops the worker, as Spark's does
// — unless the worker has no master connection at all, when the master it registers with next learns what still
// runs here and drops the rest; a driver's end is kept, and told again when the worker next registers.
import { Core } from "@kindling/kernel"
import { Ids, type RpcAddress } from "@kindling/protocol"
import type { Step, Sync, SyncMessage } from "./state.js"
import { log } from "./state.js"

const keyOf = (message: SyncMessage): string =>
  message._tag === "DriverStateChanged" ? message.driverId : Ids.fullExecutorId(message.appId, message.execId)

const timerOf = (key: string) => `stateSync:${key}`

/** Tells `message` to the master (`to`, or whichever is active when it is asked), after what went before it. */
export const tell = (step: Step, to: RpcAddress.RefOf<"Master">, message: SyncMessage) => {
  const key = keyOf(message)
  const sync = step.state.syncs.get(key)
  if (sync !== undefined) {
    sync.queue.push({ to, message })
    return
  }
  const started: Sync = { key, queue: [{ to, message }], attempt: 1, askId: 0, retrying: false }
  step.state.syncs.set(key, started)
  ask(step, started)
}

const ask = (step: Step, sync: Sync) => {
  const { state } = step
  const { message, to } = sync.queue[0]!
  sync.askId = state.nextSyncAskId++
  sync.retrying = false
  step.commands.push({ _tag: "SyncState", key: sync.key, askId: sync.askId, to: state.master ?? to, message })
}

// The sync the answer is for, if the answer is for the ask it waits on.
const awaiting = (step: Step, key: string, askId: number): Sync | undefined => {
  const sync = step.state.syncs.get(key)
  return sync !== undefined && !sync.retrying && sync.askId === askId ? sync : undefined
}

const next = (step: Step, sync: Sync) => {
  sync.queue.shift()
  sync.attempt = 1
  if (sync.queue.length === 0) step.state.syncs.delete(sync.key)
  else ask(step, sync)
}

/** The master answered; for a driver's end, whether it took it (a standby answers that it did not). */
export const answered = (
  step: Step,
  input: { readonly key: string; readonly askId: number; readonly taken: boolean }
) => {
  const sync = awaiting(step, input.key, input.askId)
  if (sync === undefined) return
  const { message } = sync.queue[0]!
  if (message._tag === "DriverStateChanged") {
    if (input.taken) step.state.unheard.delete(message.driverId)
    else log(step, "Info", `The master is a standby; the end of driver ${message.driverId} is told to the next leader`)
  }
  next(step, sync)
}

/** The ask failed: timed out, or any other way. */
export const failed = (
  step: Step,
  input: { readonly key: string; readonly askId: number; readonly reason: string; readonly timedOut: boolean }
) => {
  const sync = awaiting(step, input.key, input.askId)
  if (sync === undefined) return
  const { state } = step
  const { message, to } = sync.queue[0]!
  if (sync.attempt >= state.config.executorStateSyncMaxAttempts) {
    const reason = `Failed to send ${message._tag} to ${(state.master ?? to).toString()} ${sync.attempt} times ` +
      `(${input.reason}); giving up`
    if (message._tag === "DriverStateChanged") {
      log(step, "Warning", `${reason}; it is told again when the worker next registers`)
    } else if (!state.connected) {
      // Spark's worker exits here. While it has no master at all, that would only lose what it runs.
      log(step, "Warning", `${reason}; the master reconciles it when the worker next registers`)
    } else {
      log(step, "Error", reason)
      step.commands.push({ _tag: "Exit", code: 1, reason })
    }
    return next(step, sync)
  }
  log(step, "Warning", `Failed to send ${message._tag} (attempt ${sync.attempt}): ${input.reason}`)
  sync.attempt++
  if (input.timedOut) return ask(step, sync)
  sync.retrying = true
  Core.startTimer(step, timerOf(sync.key), { _tag: "RetryStateSync", key: sync.key }, state.config.askTimeoutMillis)
}

/** The wait after a failed attempt is over. */
export const retry = (step: Step, key: string) => {
  const sync = step.state.syncs.get(key)
  if (sync !== undefined && sync.retrying) ask(step, sync)
}

/** What is wrong with the syncs, if anything. */
export const problems = (syncs: ReadonlyMap<string, Sync>, maxAttempts: number): ReadonlyArray<string> =>
  [...syncs].flatMap(([key, sync]) => [
    ...(sync.queue.length === 0 ? [`state sync ${key} has nothing to tell`] : []),
    ...(sync.attempt < 1 || sync.attempt > maxAttempts ? [`state sync ${key} at attempt ${sync.attempt}`] : []),
    ...sync.queue.filter((entry) => keyOf(entry.message) !== key).map(() => `state sync ${key} holds another's message`)
  ])
