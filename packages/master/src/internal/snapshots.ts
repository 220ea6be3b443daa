// The records as protocol snapshots: for persistence and for `RequestMasterState`.
import { QueryMessages } from "@kindling/protocol"
import * as Option from "effect/Option"
import type { AppEntry, DriverEntry, ExecutorEntry, State, Step, WorkerEntry } from "./state.js"

export const executorInfo = (executor: ExecutorEntry) =>
  new QueryMessages.ExecutorInfo({
    appId: executor.app.id,
    execId: executor.id,
    workerId: executor.worker.id,
    cores: executor.cores,
    memory: executor.memory,
    state: executor.state,
    resources: {}
  })

export const workerInfo = (worker: WorkerEntry) =>
  new QueryMessages.WorkerInfo({
    id: worker.id,
    host: worker.host,
    port: worker.port,
    webUiAddress: worker.webUiAddress,
    cores: worker.cores,
    coresUsed: worker.coresUsed,
    memory: worker.memory,
    memoryUsed: worker.memoryUsed,
    resources: worker.resources,
    resourcesUsed: {},
    state: worker.state,
    lastHeartbeat: worker.lastHeartbeat,
    executors: [...worker.executors.values()].map(executorInfo),
    drivers: [...worker.drivers.keys()],
    driverFenceMillis: worker.driverFenceMillis
  })

export const appInfo = (app: AppEntry) =>
  new QueryMessages.ApplicationInfo({
    id: app.id,
    startTime: app.startTime,
    submitDate: app.submitDate,
    desc: app.desc,
    driver: app.driver,
    state: app.state,
    // A completed app's: the most it held, as Spark's page shows it (its executors still counted when it ends).
    coresGranted: app.endTime === undefined ? app.coresGranted : app.peakCoresGranted,
    executors: [...app.executors.values()].map(executorInfo),
    executorLimit: Number.isFinite(app.executorLimit) ? Option.some(app.executorLimit) : Option.none(),
    endTime: Option.fromNullable(app.endTime)
  })

export const driverInfo = (driver: DriverEntry) =>
  new QueryMessages.DriverInfo({
    id: driver.id,
    startTime: driver.startTime,
    submitDate: driver.submitDate,
    desc: driver.desc,
    state: driver.state,
    workerId: Option.fromNullable(driver.worker?.id),
    exception: Option.fromNullable(driver.exception),
    resources: {},
    fenceMillis: driver.fenceMillis
  })

export const persistWorker = (step: Step, worker: WorkerEntry) =>
  step.commands.push({ _tag: "Persist", record: { kind: "worker", value: workerInfo(worker) } })

export const persistApp = (step: Step, app: AppEntry) =>
  step.commands.push({ _tag: "Persist", record: { kind: "app", value: appInfo(app) } })

export const persistDriver = (step: Step, driver: DriverEntry) =>
  step.commands.push({ _tag: "Persist", record: { kind: "driver", value: driverInfo(driver) } })

// The master's whole state as the `RequestMasterState` reply.
export const masterState = (state: State): QueryMessages.MasterStateResponse =>
  new QueryMessages.MasterStateResponse({
    host: state.config.self.address.host,
    port: state.config.self.address.port,
    restPort: Option.fromNullable(state.config.restPort),
    workers: [...state.workers.values()].map(workerInfo),
    activeApps: [...state.apps.values()].map(appInfo),
    completedApps: state.completedApps.map(appInfo),
    activeDrivers: [...state.drivers.values()].map(driverInfo),
    completedDrivers: state.completedDrivers.map(driverInfo),
    status: state.status
  })
