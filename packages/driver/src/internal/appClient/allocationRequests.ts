// Dynamic allocation's requests to the master, in the app client's core. The total the app wants is asked until a
// master has taken it, and again whenever the app registers or another master leads: a request made before the
// app was registered, lost on its way, or taken by a master that has failed over since (a new leader knows the app
// as it was stored: seed 650) would otherwise leave the master at a stale count. Executors given back are asked
// killed until the master reports them gone: a master restarted from its store may take a kill before it knows the
// executor again and let it be (seed 336), and the executor would hold its place for ever. One total is asked at a
// time; a timer asks again every `allocationRetryMillis` while anything is owed, and is cancelled once nothing is.
import { Core } from "@kindling/kernel"
import type { Step } from "../../AppClientCore.js"

const timer = "allocation"

/** What the master has been asked for, and what it has taken. */
export interface Allocation {
  /** The total the app wants (0 once it is leaving); undefined until dynamic allocation asks one. */
  wanted: number | undefined
  /** The total the master of the moment has taken, if any since it leads or the app registered with it. */
  taken: number | undefined
  /** The request of a total awaiting its answer, by number; answers to any other are stale. */
  asking: { readonly ask: number; readonly total: number } | undefined
  /** How many totals were asked: the number of the next. */
  asks: number
  /** Executors given back the master has not reported gone. */
  readonly kills: Set<string>
  /**
   * Executors the master reported gone. A kill the driver decided before it heard so is owed nothing: the master
   * says no executor's end twice, so it would stay owed, asked every retry, for the app's life. Ids are never reused
   * within an app.
   */
  readonly ended: Set<string>
  /** Whether the retry timer runs. */
  armed: boolean
}

export const empty = (): Allocation => ({
  wanted: undefined,
  taken: undefined,
  asking: undefined,
  asks: 0,
  kills: new Set(),
  ended: new Set(),
  armed: false
})

const owesTotal = (allocation: Allocation) => allocation.wanted !== undefined && allocation.wanted !== allocation.taken

// Whether the master may not have everything asked of it.
export const owed = (step: Step) =>
  !step.state.stopped && (owesTotal(step.state.allocation) || step.state.allocation.kills.size > 0)

const askTotal = (step: Step) => {
  const { allocation, appId, master, stopped } = step.state
  const wanted = allocation.wanted
  if (appId === undefined || master === undefined || stopped || wanted === undefined) return
  if (!owesTotal(allocation) || allocation.asking !== undefined) return
  allocation.asking = { ask: allocation.asks++, total: wanted }
  step.commands.push({ _tag: "AskTotal", appId, master, total: wanted, ask: allocation.asking.ask })
}

const askKills = (step: Step) => {
  const { allocation, appId, master, stopped } = step.state
  if (appId === undefined || master === undefined || stopped || allocation.kills.size === 0) return
  step.commands.push({ _tag: "AskKill", appId, master, executorIds: [...allocation.kills] })
}

/** The timer runs exactly while something is owed. Called after every step. */
export const keepTimer = (step: Step) => {
  const allocation = step.state.allocation
  const wanted = owed(step)
  if (wanted === allocation.armed) return
  allocation.armed = wanted
  if (wanted) {
    const every = step.state.config.allocationRetryMillis
    Core.startTimer(step, timer, { _tag: "SyncAllocation" }, every, every)
  } else {
    Core.cancelTimer(step, timer)
  }
}

export const requestTotal = (step: Step, total: number) => {
  step.state.allocation.wanted = total
  askTotal(step)
}

export const kill = (step: Step, executorIds: ReadonlyArray<string>) => {
  const { allocation } = step.state
  for (const id of executorIds) if (!allocation.ended.has(id)) allocation.kills.add(id)
  askKills(step)
}

export const answered = (step: Step, ask: number, taken: boolean) => {
  const { allocation } = step.state
  const asking = allocation.asking
  if (asking?.ask !== ask) return
  allocation.asking = undefined
  if (!taken) return // the timer asks again
  allocation.taken = asking.total
  // Asked for another total meanwhile: that one now.
  askTotal(step)
}

export const retry = (step: Step) => {
  askTotal(step)
  askKills(step)
}

/**
 * The app registered, or another master leads: it knows nothing this app client asked (or knows it as it was
 * stored), and an answer still awaited comes from the one before.
 */
export const newMaster = (step: Step) => {
  const { allocation } = step.state
  allocation.taken = undefined
  allocation.asking = undefined
  askTotal(step)
  askKills(step)
}

export const gone = (step: Step, executorId: number) => {
  const { allocation } = step.state
  allocation.kills.delete(String(executorId))
  allocation.ended.add(String(executorId))
}

export const validate = (allocation: Allocation, registered: boolean): ReadonlyArray<string> => [
  ...[...allocation.kills].filter((id) => allocation.ended.has(id)).map((id) =>
    `executor ${id} asked killed after the master reported it gone`
  ),
  ...(allocation.asking !== undefined && allocation.asking.ask >= allocation.asks
    ? [`total request ${allocation.asking.ask} awaited before it was asked`]
    : []),
  ...(!registered && (allocation.taken !== undefined || allocation.asking !== undefined)
    ? ["a total taken or asked before the app registered"]
    : [])
]
