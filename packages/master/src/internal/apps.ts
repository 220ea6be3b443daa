// Applications and their executors: registration, removal, executor state and kills.
import { Core, Retention } from "@kindling/kernel"
import { AppClientMessages as AppClient, Errors, Ids, RpcAddress, States, WorkerMessages } from "@kindling/protocol"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { persistApp } from "./snapshots.js"
import type { AppEntry, ExecutorEntry, Step } from "./state.js"
import {
  answer,
  log,
  masterUrl,
  newApp,
  releaseExecutor,
  removeExecutorFromApp,
  toApp,
  toWorker,
  wantSchedule
} from "./state.js"

export const registerApplicationRequest = (step: Step, message: AppClient.RegisterApplication) => {
  const { state } = step
  if (state.status === "STANDBY") return // a standby master drops registrations; the client tries the others
  const app = newApp({
    id: Ids.makeAppId(new Date(step.now), state.nextAppNumber++),
    desc: message.appDescription,
    driver: message.driver,
    startTime: step.now,
    submitDate: step.now,
    state: "WAITING",
    executorLimit: Option.getOrElse(message.appDescription.initialExecutorLimit, () => Infinity),
    connection: step.connection
  })
  if (!registerApplication(step, app)) return
  log(step, "Info", `Registered app ${app.desc.name} with ID ${app.id}`)
  persistApp(step, app)
  answer(step, message.driver, new AppClient.RegisteredApplication({ appId: app.id, master: state.config.self }))
  wantSchedule(step)
}

export const registerApplication = (step: Step, app: AppEntry): boolean => {
  const { state } = step
  const key = RpcAddress.key(app.driver.address)
  if (state.addressToApp.has(key)) {
    log(step, "Info", `Attempted to re-register application at same address: ${app.driver.address.hostPort}`)
    return false
  }
  state.apps.set(app.id, app)
  state.addressToApp.set(key, app)
  state.waitingApps.push(app)
  return true
}

/**
 * Ends an app. Its driver is told unless the app finished as its driver asked (Spark tells it only of other
 * endings); `unheard` says why the master ended an app whose driver may still be running — it lost the
 * connection to it, say — and tells the driver too, so that its jobs fail instead of waiting for ever.
 */
export const removeApplication = (
  step: Step,
  app: AppEntry,
  finalState: States.ApplicationState,
  unheard?: string
) => {
  const { state } = step
  if (!state.apps.has(app.id)) return
  log(step, "Info", `Removing app ${app.id}`)
  state.apps.delete(app.id)
  state.addressToApp.delete(RpcAddress.key(app.driver.address))
  Retention.append(state.completedApps, app, state.config.retainedApplications)
  const waiting = state.waitingApps.indexOf(app)
  if (waiting >= 0) state.waitingApps.splice(waiting, 1)
  // The executors stay listed (KILLED) on the completed app, as Spark keeps them for the UI; their workers let go.
  for (const executor of [...app.executors.values()]) killExecutor(step, executor)
  app.state = finalState
  app.endTime = step.now
  if (unheard !== undefined) {
    // Its connection is gone: this goes on a new one, if the driver is there to take it.
    Core.send(step, app.driver, new AppClient.ApplicationRemoved({ message: `${finalState} (${unheard})` }))
  } else if (finalState !== "FINISHED") {
    toApp(step, app, new AppClient.ApplicationRemoved({ message: finalState }))
  }
  step.commands.push({ _tag: "Unpersist", kind: "app", id: app.id })
  wantSchedule(step)
  // Workers clean up the app's local dirs once none of its executors is left.
  for (const worker of state.workers.values()) {
    if (worker.state !== "DEAD") {
      toWorker(step, worker, new WorkerMessages.ApplicationFinished({ id: app.id }))
    }
  }
}

export const killExecutor = (step: Step, executor: ExecutorEntry) => {
  log(
    step,
    "Info",
    `Killing executor ${Ids.fullExecutorId(executor.app.id, executor.id)} on worker ${executor.worker.id}`
  )
  releaseExecutor(executor)
  toWorker(
    step,
    executor.worker,
    new WorkerMessages.KillExecutor({ masterUrl: masterUrl(step.state), appId: executor.app.id, execId: executor.id })
  )
  executor.state = "KILLED"
}

// What the app hears of its executor's new state, as its worker reported it.
const executorUpdated = (message: WorkerMessages.ExecutorStateChanged) =>
  new AppClient.ExecutorUpdated({
    id: message.execId,
    state: message.state,
    message: message.message,
    exitStatus: message.exitStatus,
    workerHost: Option.none()
  })

export const executorStateChanged = (step: Step, message: WorkerMessages.ExecutorStateChanged) => {
  const { state } = step
  const app = state.apps.get(message.appId)
  const executor = app?.executors.get(message.execId)
  // The end of an executor the app asked to kill: expected, and the app hears of it as of any other's.
  if (app !== undefined && executor === undefined && States.isExecutorFinished(message.state)) {
    if (app.decommissionedExecutors.delete(message.execId)) {
      log(step, "Info", `Executor ${message.appId}/${message.execId} of a decommissioned worker is ${message.state}`)
      return
    }
    if (app.killedExecutors.delete(message.execId)) {
      log(step, "Info", `Executor ${message.appId}/${message.execId}, killed as its app asked, is ${message.state}`)
      toApp(
        step,
        app,
        executorUpdated(message)
      )
      return
    }
  }
  if (app === undefined || executor === undefined) {
    log(step, "Warning", `Got status update for unknown executor ${message.appId}/${message.execId}`)
    // It runs where no such executor should: its launch reached a worker the master had removed since (and which
    // registered again), or its app is gone. Told to stop, it does not run on unseen — Spark only logs it.
    const worker = step.sender === undefined ? undefined : state.addressToWorker.get(RpcAddress.key(step.sender))
    if (
      state.status === "ALIVE" && worker?.state === "ALIVE" && !States.isExecutorFinished(message.state)
    ) {
      toWorker(
        step,
        worker,
        new WorkerMessages.KillExecutor({ masterUrl: masterUrl(state), appId: message.appId, execId: message.execId })
      )
    }
    // An app this leader does not have (it ended while the worker was away, before the master restarted, say) is
    // finished: the worker may still hold its scratch dirs and what its shuffle service served for it.
    if (state.status === "ALIVE" && worker?.state === "ALIVE" && app === undefined) {
      toWorker(step, worker, new WorkerMessages.ApplicationFinished({ id: message.appId }))
    }
    return
  }
  // Only the worker that runs it speaks for an executor. After a recovery in which a worker did not answer, its
  // executors' ids may have been given again; its late report of the old one must not end the new one.
  if (executor.worker.connection !== undefined && executor.worker.connection !== step.connection) {
    log(
      step,
      "Warning",
      `Got status update for executor ${message.appId}/${message.execId} from a worker that does not run it; ignored`
    )
    return
  }
  const oldState = executor.state
  if (!States.canMove(States.executorMoves, oldState, message.state)) {
    log(
      step,
      "Warning",
      `Executor ${message.appId}/${message.execId} reported ${message.state} while ${oldState}; ignored`
    )
    return
  }
  executor.state = message.state
  if (message.state === "RUNNING") app.retryCount = 0
  toApp(step, app, executorUpdated(message))
  if (States.isExecutorFinished(message.state)) {
    log(step, "Info", `Removing executor ${message.appId}/${message.execId} because it is ${message.state}`)
    removeExecutorFromApp(executor)
    releaseExecutor(executor)
    const normalExit = Option.getOrUndefined(message.exitStatus) === 0
    const retries = state.config.maxExecutorRetries
    if (!normalExit && oldState !== "DECOMMISSIONED") {
      app.retryCount += 1
      if (retries >= 0 && app.retryCount >= retries) {
        const running = [...app.executors.values()].some((e) => e.state === "RUNNING")
        if (!running) {
          log(
            step,
            "Warning",
            `Application ${app.desc.name} with ID ${app.id} failed ${app.retryCount} times; removing it`
          )
          removeApplication(step, app, "FAILED")
        }
      }
    }
  }
  wantSchedule(step)
}

export const killExecutorsRequest = (
  step: Step,
  message: AppClient.KillExecutors
): Exit.Exit<boolean, Errors.AppNotFound> => {
  const { state } = step
  const app = state.apps.get(message.appId)
  if (app === undefined) return Exit.fail(new Errors.AppNotFound({ appId: message.appId }))
  log(step, "Info", `Application ${app.id} requests to kill executors: ${message.executorIds.join(", ")}`)
  // Spark drops ids that are not integers.
  const ids = message.executorIds.filter((id) => /^\d+$/.test(id)).map(Number)
  for (const id of ids) {
    const executor = app.executors.get(id)
    if (executor === undefined) {
      log(step, "Warning", `Application ${app.id} attempted to kill non-existent executor ${id}`)
      continue
    }
    removeExecutorFromApp(executor)
    killExecutor(step, executor)
    app.killedExecutors.add(id)
  }
  wantSchedule(step)
  return Exit.succeed(true)
}
