// The worker's records as protocol snapshots: for the master and for `RequestWorkerState`.
import { Descriptions, QueryMessages, WorkerMessages } from "@kindling/protocol"
import * as Option from "effect/Option"
import type { DriverEntry, ExecutorEntry, State } from "./state.js"
import { masterUrl } from "./state.js"

export const describeExecutor = (executor: ExecutorEntry) =>
  new WorkerMessages.WorkerExecutorStateResponse({
    desc: new Descriptions.ExecutorDescription({
      appId: executor.appId,
      execId: executor.execId,
      cores: executor.cores,
      state: executor.state
    }),
    resources: {}
  })

export const workerState = (state: State): QueryMessages.WorkerStateResponse => {
  const { workDir } = state.config
  const executor = (e: ExecutorEntry) =>
    new QueryMessages.ExecutorRunnerInfo({
      appId: e.appId,
      execId: e.execId,
      appDesc: e.appDesc,
      cores: e.cores,
      memory: e.memory,
      state: e.state,
      resources: {},
      workDir: `${workDir}/${e.appId}/${e.execId}`
    })
  const driver = (d: DriverEntry) =>
    new QueryMessages.DriverRunnerInfo({
      driverId: d.id,
      desc: d.desc,
      state: d.state,
      exception: Option.fromNullable(d.exception),
      resources: {},
      workDir: `${workDir}/${d.id}`
    })
  return new QueryMessages.WorkerStateResponse({
    host: state.config.self.address.host,
    port: state.config.self.address.port,
    workerId: state.config.workerId,
    executors: [...state.executors.values()].map(executor),
    finishedExecutors: state.finishedExecutors.map(executor),
    drivers: [...state.drivers.values()].map(driver),
    finishedDrivers: state.finishedDrivers.map(driver),
    masterUrl: Option.fromNullable(masterUrl(state)),
    cores: state.config.cores,
    memory: state.config.memory,
    coresUsed: state.coresUsed,
    memoryUsed: state.memoryUsed,
    masterWebUiUrl: Option.fromNullable(state.masterWebUiUrl),
    resources: {},
    resourcesUsed: {}
  })
}
