// The invariants over the master's records, as a list of what is wrong.
import { Ids, States } from "@kindling/protocol"
import { RpcAddress } from "@kindling/protocol"
import type { State } from "./state.js"

export const validate = (state: State): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const waiting = new Set(state.waitingDrivers)

  for (const worker of state.workers.values()) {
    let cores = 0
    let memory = 0
    for (const driver of worker.drivers.values()) {
      cores += driver.desc.cores
      memory += driver.desc.mem
      if (driver.worker !== worker) problems.push(`driver ${driver.id} is listed on ${worker.id} but placed elsewhere`)
      if (state.drivers.get(driver.id) !== driver) problems.push(`${worker.id} holds inactive driver ${driver.id}`)
    }
    for (const [fullId, executor] of worker.executors) {
      cores += executor.cores
      memory += executor.memory
      if (executor.worker !== worker) problems.push(`executor ${fullId} is listed on ${worker.id} but placed elsewhere`)
      if (fullId !== Ids.fullExecutorId(executor.app.id, executor.id)) problems.push(`executor ${fullId} misfiled`)
      if (state.apps.get(executor.app.id) !== executor.app) {
        problems.push(`${worker.id} holds executor ${fullId} of inactive app`)
      } else if (executor.app.executors.get(executor.id) !== executor) {
        problems.push(`executor ${fullId} on ${worker.id} is not its app's`)
      }
    }
    if (worker.coresUsed !== cores) problems.push(`${worker.id} counts ${worker.coresUsed} cores used, holds ${cores}`)
    if (worker.memoryUsed !== memory) {
      problems.push(`${worker.id} counts ${worker.memoryUsed} MB used, holds ${memory}`)
    }
    if (worker.coresUsed > worker.cores || worker.memoryUsed > worker.memory) problems.push(`${worker.id} overbooked`)
    if (worker.coresUsed < 0 || worker.memoryUsed < 0) problems.push(`${worker.id} has negative usage`)
    if (worker.state === "DEAD" && (worker.drivers.size > 0 || worker.executors.size > 0)) {
      problems.push(`dead worker ${worker.id} still holds work`)
    }
    const indexed = state.idToWorker.get(worker.id) === worker
    if (indexed === (worker.state === "DEAD")) problems.push(`${worker.id} (${worker.state}) wrongly indexed by id`)
  }
  for (const [key, worker] of state.addressToWorker) {
    if (state.idToWorker.get(worker.id) !== worker || RpcAddress.key(worker.endpoint.address) !== key) {
      problems.push(`address ${key} indexes a worker that is not registered there`)
    }
  }

  for (const driver of state.drivers.values()) {
    if (waiting.has(driver)) {
      if (driver.state !== "SUBMITTED" || driver.worker !== undefined) {
        problems.push(`waiting driver ${driver.id} is ${driver.state} on ${driver.worker?.id ?? "no worker"}`)
      }
    } else if (driver.worker !== undefined) {
      if (driver.state !== "RUNNING") problems.push(`placed driver ${driver.id} is ${driver.state}`)
      if (driver.worker.drivers.get(driver.id) !== driver) problems.push(`driver ${driver.id} is not on its worker`)
      if (driver.worker.state === "DEAD") problems.push(`driver ${driver.id} is on dead worker ${driver.worker.id}`)
      if (state.workers.get(driver.worker.id) !== driver.worker) {
        problems.push(`driver ${driver.id} is on forgotten worker`)
      }
    } else if (state.status !== "RECOVERING") {
      problems.push(`driver ${driver.id} is neither waiting nor placed while ${state.status}`)
    }
  }
  for (const driver of state.waitingDrivers) {
    if (state.drivers.get(driver.id) !== driver) problems.push(`waiting driver ${driver.id} is not active`)
    if (driver.notBefore !== undefined && !Number.isFinite(driver.notBefore)) {
      problems.push(`waiting driver ${driver.id} may be launched from ${driver.notBefore}, which is no time`)
    }
  }
  for (const driver of state.completedDrivers) {
    if (!States.isDriverFinished(driver.state)) problems.push(`completed driver ${driver.id} is ${driver.state}`)
    if (state.drivers.get(driver.id) === driver) problems.push(`completed driver ${driver.id} is still active`)
  }

  for (const app of state.apps.values()) {
    let cores = 0
    for (const executor of app.executors.values()) {
      cores += executor.cores
      const holder = executor.worker.executors.get(Ids.fullExecutorId(app.id, executor.id))
      if (holder !== executor) problems.push(`executor ${app.id}/${executor.id} is not on its worker`)
      if (executor.app !== app) problems.push(`executor ${app.id}/${executor.id} belongs to another app`)
    }
    if (app.coresGranted !== cores) problems.push(`${app.id} counts ${app.coresGranted} cores granted, holds ${cores}`)
    if (state.addressToApp.get(RpcAddress.key(app.driver.address)) !== app) problems.push(`${app.id} not indexed`)
  }
  for (const app of state.waitingApps) {
    if (state.apps.get(app.id) !== app) problems.push(`waiting app ${app.id} is not active`)
  }
  return problems
}
