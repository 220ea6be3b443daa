/**
 * The placement decisions of the master's `schedule()` (Spark 3.3 semantics, custom resources left out): which
 * worker each waiting driver goes to, how many cores an application gets on each worker, and how those cores
 * become executors. They are pure so that the master's state machine only applies them, and so that they can be
 * checked against a literal port of Spark's loop.
 *
 * @since 0.1.0
 */

/**
 * What an application still wants, as `scheduleExecutorsOnWorkers` sees it. `coresLeft` is its cores cap minus
 * the cores it already holds and `executorLimit` its executor target; either may be `Infinity`.
 * `coresPerExecutor` undefined means one executor per worker that takes every core it is given.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecutorDemand {
  readonly coresPerExecutor: number | undefined
  readonly memoryPerExecutorMb: number
  readonly coresLeft: number
  readonly executorLimit: number
  readonly existingExecutors: number
}

/**
 * What a worker has left to give.
 *
 * @since 0.1.0
 * @category models
 */
export interface FreeResources {
  readonly coresFree: number
  readonly memoryFreeMb: number
}

/**
 * What a driver needs on the worker that runs it.
 *
 * @since 0.1.0
 * @category models
 */
export interface DriverDemand {
  readonly cores: number
  readonly memoryMb: number
}

/**
 * The executors that a worker's assigned cores become.
 *
 * @since 0.1.0
 * @category models
 */
export interface Allocation {
  readonly executors: number
  readonly coresEach: number
}

/**
 * The cores to give the application on each worker, in the order given (callers pass usable workers sorted by
 * free cores, descending). The answers are those of Spark 3.3's `scheduleExecutorsOnWorkers`, which hands out one
 * unit (`coresPerExecutor ?? 1` cores) per iteration: round robin over the workers when `spreadOut`, otherwise
 * filling each worker before the next. Here the work is per worker, not per unit, so a large cluster costs
 * O(workers · log workers) whatever its core count.
 *
 * @since 0.1.0
 * @category executors
 */
export const scheduleExecutorsOnWorkers = (
  app: ExecutorDemand,
  workers: ReadonlyArray<FreeResources>,
  spreadOut: boolean
): ReadonlyArray<number> => {
  const unit = app.coresPerExecutor ?? 1
  const onePerWorker = app.coresPerExecutor === undefined
  const memory = app.memoryPerExecutorMb
  let coresFree = 0
  for (const worker of workers) coresFree += worker.coresFree
  const toAssign = Math.min(app.coresLeft, coresFree)
  const units = toAssign >= unit ? Math.floor(toAssign / unit) : 0
  const newExecutors = app.executorLimit - app.existingExecutors
  // Each worker's cap in units, as if the app's cores never ran out. Memory and the executor limit are checked only
  // for a unit that starts an executor. With one executor per worker only the first unit does, so the limit just
  // picks which workers get one: Spark's first pass reaches them in order and nothing frees the limit later, so
  // they are the first `newExecutors` workers able to start one.
  const caps: Array<number> = []
  let launchable = newExecutors
  for (const worker of workers) {
    const byCores = Math.max(0, Math.floor(worker.coresFree / unit))
    const byMemory = memory > 0
      ? Math.max(0, Math.floor(worker.memoryFreeMb / memory))
      : worker.memoryFreeMb >= memory
      ? Infinity
      : 0
    if (!onePerWorker) caps.push(Math.min(byCores, byMemory))
    else if (byCores > 0 && byMemory > 0 && launchable >= 1) {
      caps.push(byCores)
      launchable--
    } else caps.push(0)
  }
  // With an executor per unit, the limit caps units just as the app's cores do, in the same order.
  const budget = onePerWorker ? units : Math.min(units, Math.max(0, newExecutors))
  const given = spreadOut ? roundRobin(caps, budget) : inOrder(caps, budget)
  return given.map((n) => n * unit)
}

const inOrder = (caps: ReadonlyArray<number>, budget: number): ReadonlyArray<number> => {
  let left = budget
  return caps.map((cap) => {
    const n = Math.min(cap, left)
    left -= n
    return n
  })
}

// Spark's passes: every worker with room gets one unit per pass, in order, until the budget runs out mid-pass.
// Find how many whole passes the budget pays for by raising a level through the sorted caps, then give the
// partial pass to the first workers still below their cap.
const roundRobin = (caps: ReadonlyArray<number>, budget: number): ReadonlyArray<number> => {
  let total = 0
  for (const cap of caps) total += cap
  if (total <= budget) return caps
  const sorted = caps.filter((cap) => cap > 0).sort((a, b) => a - b)
  let level = 0
  let spent = 0
  let active = sorted.length
  for (const cap of sorted) {
    const raise = (cap - level) * active
    if (spent + raise > budget) break
    spent += raise
    level = cap
    active--
  }
  // `total > budget` means the loop stopped with workers still below their cap, so `active` is not zero.
  const passes = Math.floor((budget - spent) / active)
  level += passes
  let partial = budget - spent - passes * active
  return caps.map((cap) => {
    if (cap <= level) return cap
    if (partial === 0) return level
    partial--
    return level + 1
  })
}

/**
 * The executors to launch for the cores `scheduleExecutorsOnWorkers` assigned on one worker: `coresPerExecutor`
 * cores each when set, otherwise a single executor with all of them. No cores, no executor.
 *
 * @since 0.1.0
 * @category executors
 */
export const allocate = (assignedCores: number, coresPerExecutor: number | undefined): Allocation => {
  if (assignedCores <= 0) return { executors: 0, coresEach: 0 }
  if (coresPerExecutor === undefined) return { executors: 1, coresEach: assignedCores }
  return { executors: Math.floor(assignedCores / coresPerExecutor), coresEach: coresPerExecutor }
}

/**
 * The worker (an index into `workers`) each waiting driver launches on, in FIFO order, or `undefined` when it
 * stays waiting. `workers` are the alive workers, already shuffled. As in Spark, one cursor serves the whole
 * call: each driver tries at most every worker once from the cursor on, the cursor moves past every worker it
 * tries, and a launch charges the worker's cores and memory before the next driver is placed.
 *
 * @since 0.1.0
 * @category drivers
 */
export const placeDrivers = (
  drivers: ReadonlyArray<DriverDemand>,
  workers: ReadonlyArray<FreeResources>
): ReadonlyArray<number | undefined> => {
  const cores = workers.map((worker) => worker.coresFree)
  const memory = workers.map((worker) => worker.memoryFreeMb)
  let pos = 0
  const placed: Array<number | undefined> = []
  for (const driver of drivers) {
    let chosen: number | undefined
    for (let visited = 0; visited < workers.length && chosen === undefined; visited++) {
      if (memory[pos] >= driver.memoryMb && cores[pos] >= driver.cores) {
        chosen = pos
        memory[pos] -= driver.memoryMb
        cores[pos] -= driver.cores
      }
      pos = (pos + 1) % workers.length
    }
    placed.push(chosen)
  }
  return placed
}
