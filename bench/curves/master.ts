// The master's curves, on its core in this process: (c) the schedule pass with N workers and N apps, and (d) its
// memory after many finished apps, with `kindling.deploy.retainedApplications` honoured.
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import { MasterWorld } from "./masterWorld.js"

/**
 * Milliseconds of one schedule pass (the median of `passes`) on a master with `n` busy workers of 4 cores and `n`
 * apps waiting for more cores than there are: each pass is the step of one more worker registering, whose cores
 * the first waiting app takes. Also the time it took to register them all.
 */
export const schedulePass = (n: number, passes = 51) => {
  const world = new MasterWorld()
  const started = performance.now()
  for (let i = 0; i < n; i++) world.registerWorker(4, 16_384)
  for (let i = 0; i < n; i++) world.registerApp(undefined, 1024)
  const buildMillis = performance.now() - started
  const millis: Array<number> = []
  for (let i = 0; i < passes; i++) {
    const before = performance.now()
    const commands = world.registerWorker(4, 16_384)
    millis.push(performance.now() - before)
    if (!commands.some((c) => c._tag === "Send" && c.message._tag === "LaunchExecutor")) {
      throw new Error("the pass launched nothing: the bench does not measure what it says")
    }
  }
  return { passMillis: millis.sort((a, b) => a - b)[Math.floor(passes / 2)]!, buildMillis }
}

// A full collection on demand, in this process.
V8.setFlagsFromString("--expose-gc")
const gc = Vm.runInNewContext("gc") as () => void

const heapAfterCollection = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/**
 * The heap the master's state holds (after a full collection, less what it held empty) after every `every`
 * finished apps up to `total`, each app registered on a cluster of 10 workers, given its executors and finished.
 */
export const memoryAfterFinishedApps = (total: number, every: number, retained: number) => {
  // The master's code compiled and optimized first, so that what is measured is its state alone.
  finishApps(new MasterWorld(retained), 2 * retained)
  const empty = heapAfterCollection()
  const world = new MasterWorld(retained)
  for (let i = 0; i < 10; i++) world.registerWorker(4, 16_384)
  const points: Array<readonly [number, number]> = [[0, heapAfterCollection() - empty]]
  for (let finished = 0; finished < total; finished += every) {
    finishApps(world, every)
    points.push([finished + every, heapAfterCollection() - empty])
  }
  return points
}

const finishApps = (world: MasterWorld, count: number) => {
  for (let i = 0; i < count; i++) {
    world.registerApp(2, 1024)
    world.finishApp(world.appIds.at(-1)!)
    world.appIds.length = 0
  }
}
