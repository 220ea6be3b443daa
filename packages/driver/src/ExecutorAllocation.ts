/**
 * Dynamic allocation (kindling.dynamicAllocation.*, Spark's ExecutorAllocationManager): how many executors the app
 * asks its cluster manager for, and which idle ones it gives back. Pure: at each tick the driver's core hands it
 * what the scheduler knows, and carries out what it decides (a new total to request, executors to kill).
 *
 * Spark's rules. The target starts at `initialExecutors` and stays there while the app is initializing (until its
 * first stage, or until an executor idles out). Once tasks have waited for `backlogTimeout`, the target grows by 1,
 * then — while the backlog lasts — by 2, 4, 8… every `sustainedBacklogTimeout`, never past what the waiting and
 * running tasks could use (`maxNeeded`) nor `maxExecutors`. When the tasks need fewer executors than the target, it
 * drops at once to what they need (not below `minExecutors`). An executor with no task for `idleTimeout` is given
 * back — `cachedIdleTimeout` when it holds cached blocks, `shuffleTracking.timeout` when (with shuffle tracking) it
 * holds map outputs a later stage may read, the shorter of the two when both — unless that would leave fewer than
 * `minExecutors`, or fewer than the target.
 *
 * @since 0.1.0
 */
/** @since 0.1.0 */
export interface Config {
  readonly minExecutors: number
  readonly maxExecutors: number
  readonly initialExecutors: number
  /** How many tasks one executor runs at once (its cores ÷ the cores of a task). */
  readonly tasksPerExecutor: number
  /** The share of `maxNeeded` to ask for (`executorAllocationRatio`, 1 by default). */
  readonly allocationRatio: number
  readonly backlogTimeoutMillis: number
  readonly sustainedBacklogTimeoutMillis: number
  readonly idleTimeoutMillis: number
  readonly cachedIdleTimeoutMillis: number
  readonly shuffleTracking: boolean
  readonly shuffleTrackingTimeoutMillis: number
}

/**
 * What the scheduler knows of one live executor.
 *
 * @since 0.1.0
 */
export interface ExecutorLoad {
  readonly id: string
  readonly runningTasks: number
  /** Since when it has run no task; undefined while it runs one. */
  readonly idleSince: number | undefined
  readonly holdsCachedBlocks: boolean
  /** It holds map outputs of a shuffle a job may still read. */
  readonly holdsShuffleData: boolean
}

/**
 * What the scheduler knows at a tick.
 *
 * @since 0.1.0
 */
export interface Load {
  readonly pendingTasks: number
  readonly runningTasks: number
  readonly executors: ReadonlyArray<ExecutorLoad>
  /** Executors already asked to go, not gone yet. */
  readonly pendingRemoval: ReadonlySet<string>
  /** A stage has been submitted since the app started. */
  readonly stageSubmitted: boolean
}

/** @since 0.1.0 */
export interface State {
  readonly target: number
  /** By how much the target grows at the next step of a backlog. */
  readonly toAdd: number
  /** When the target next grows, while tasks wait; undefined without a backlog. */
  readonly addAt: number | undefined
  readonly initializing: boolean
  /** The total last asked of the cluster manager. */
  readonly requested: number
}

/**
 * What to do at a tick: ask for a new total, and give back executors.
 *
 * @since 0.1.0
 */
export interface Decision {
  readonly requestTotal: number | undefined
  readonly remove: ReadonlyArray<string>
}

const clamp = (config: Config, n: number) => Math.max(config.minExecutors, Math.min(config.maxExecutors, n))

/** @since 0.1.0 */
export const initialTarget = (config: Config): number =>
  clamp(config, Math.max(config.initialExecutors, config.minExecutors))

/** @since 0.1.0 */
export const initial = (config: Config): State => {
  const target = initialTarget(config)
  return { target, toAdd: 1, addAt: undefined, initializing: true, requested: target }
}

/**
 * The executors the waiting and running tasks could keep busy.
 *
 * @since 0.1.0
 */
export const maxNeeded = (config: Config, load: Load): number =>
  Math.ceil(((load.pendingTasks + load.runningTasks) * config.allocationRatio) / config.tasksPerExecutor)

/**
 * When an idle executor may be given back (never, for Infinity).
 *
 * @since 0.1.0
 */
export const timesOutAt = (config: Config, executor: ExecutorLoad): number => {
  if (executor.idleSince === undefined) return Infinity
  const cached = executor.holdsCachedBlocks ? config.cachedIdleTimeoutMillis : Infinity
  const shuffle = config.shuffleTracking && executor.holdsShuffleData ? config.shuffleTrackingTimeoutMillis : Infinity
  const timeout = executor.holdsCachedBlocks || (config.shuffleTracking && executor.holdsShuffleData)
    ? Math.min(cached, shuffle)
    : config.idleTimeoutMillis
  return executor.idleSince + timeout
}

// The target after a step of a backlog: grown by `toAdd` from at least the executors there are, within what the
// tasks need and the bounds; `toAdd` doubles when all of it was used, else starts again at 1.
const grow = (config: Config, state: State, needed: number, existing: number): State => {
  if (state.target >= config.maxExecutors) return { ...state, toAdd: 1 }
  const grown = clamp(config, Math.min(Math.max(state.target, existing) + state.toAdd, needed))
  const delta = grown - state.target
  if (delta <= 0) return { ...state, toAdd: 1 }
  return { ...state, target: grown, toAdd: delta === state.toAdd ? state.toAdd * 2 : 1 }
}

/**
 * One tick at `now`: the new state and what to do.
 *
 * @since 0.1.0
 */
export const tick = (config: Config, state: State, load: Load, now: number): [State, Decision] => {
  let next: State = { ...state }
  if (load.stageSubmitted) next = { ...next, initializing: false }
  const timedOut = load.executors
    .filter((executor) => !load.pendingRemoval.has(executor.id) && timesOutAt(config, executor) <= now)
    .sort((a, b) => timesOutAt(config, a) - timesOutAt(config, b) || (a.id < b.id ? -1 : 1))
  // An executor idling out ends the app's start: its initial executors are then sized like any others.
  if (timedOut.length > 0) next = { ...next, initializing: false }

  // The backlog's clock: it starts when tasks first wait, and stops when none do.
  if (load.pendingTasks === 0) next = { ...next, addAt: undefined, toAdd: 1 }
  else if (next.addAt === undefined) next = { ...next, addAt: now + config.backlogTimeoutMillis }

  if (!next.initializing) {
    const needed = maxNeeded(config, load)
    if (needed < next.target) {
      next = { ...next, target: Math.max(needed, config.minExecutors), toAdd: 1 }
    } else if (next.addAt !== undefined && now >= next.addAt) {
      next = { ...grow(config, next, needed, load.executors.length), addAt: now + config.sustainedBacklogTimeoutMillis }
    }
  }

  const remove: Array<string> = []
  let remaining = load.executors.length - load.pendingRemoval.size
  for (const executor of timedOut) {
    if (remaining - 1 < config.minExecutors || remaining - 1 < next.target) continue
    remove.push(executor.id)
    remaining -= 1
  }
  const requestTotal = next.target === next.requested ? undefined : next.target
  return [{ ...next, requested: next.target }, { requestTotal, remove }]
}
