// Decommissioning executors in the driver's core: an executor whose worker is going away is offered no more tasks;
// once its running ones are over it offers its map outputs and cached blocks, which the driver has copied to peers
// (the map output tracker then points at the copies), and then it is stopped.
import { Core } from "@kindling/kernel"
import { ClusterMessages, type Ids } from "@kindling/protocol"
import * as DagScheduler from "../../DagScheduler.js"
import type { Step } from "./driverState.js"
import { dag, event, schedule, trusted } from "./driverState.js"

/**
 * What decommissioning does with an executor's work and data (`kindling.executor.decommission.*`,
 * `kindling.storage.decommission.*`).
 */
export interface Config {
  /** Tasks still running this long after the decommission began get a copy on another executor. */
  readonly killIntervalMillis: number | undefined
  /** The executor is stopped this long after the decommission began, whatever it still runs or holds. */
  readonly forceKillTimeoutMillis: number | undefined
  /** Map outputs are copied to peers. */
  readonly migrateShuffles: boolean
  /** Cached blocks are copied to peers. */
  readonly migrateBlocks: boolean
  /** How long a drained executor waits for a peer to copy its blocks to before it gives them up. */
  readonly peerWaitMillis: number
}

export const defaults: Config = {
  killIntervalMillis: undefined,
  forceKillTimeoutMillis: undefined,
  migrateShuffles: true,
  migrateBlocks: true,
  peerWaitMillis: 30_000
}

const configOf = (step: Step): Config => step.state.config.decommission ?? defaults

/** How often the waits of decommissioning executors are looked at. */
export const intervalMillis = 1000

// One decommissioning executor.
export interface Decommission {
  readonly since: number
  readonly reason: string
  /**
   * Running its last tasks; waiting for a peer, since when; its blocks being copied by these peers, each to answer
   * one `BlocksMigrated`; or told to stop.
   */
  phase:
    | { readonly _tag: "Draining" }
    | { readonly _tag: "WaitingForPeer"; readonly since: number; readonly offer: ClusterMessages.ReadyToMigrate }
    | {
      readonly _tag: "Copying"
      readonly offer: ClusterMessages.ReadyToMigrate
      readonly peers: Set<Ids.ExecutorId>
      moved: number
      blocks: number
      /** A peer went before it answered: what it was given is shared out again once the others have answered. */
      peerLost: boolean
    }
    | { readonly _tag: "Stopped" }
}

export const isDecommissioning = (step: Step, executorId: Ids.ExecutorId): boolean =>
  step.state.decommissions.has(executorId)

/** The executor's worker is being decommissioned (or the executor asked for it): it drains, then migrates. */
export const decommission = (step: Step, executorId: Ids.ExecutorId, reason: string) => {
  const { state } = step
  const executor = state.executors.get(executorId)
  if (executor === undefined || state.decommissions.has(executorId) || state.stopping) return
  Core.log(step, "Info", `Decommissioning executor ${executorId} on ${executor.host}: ${reason}`)
  state.decommissions.set(executorId, { since: step.now, reason, phase: { _tag: "Draining" } })
  const { killIntervalMillis } = configOf(step)
  schedule(step, {
    _tag: "ExecutorDecommissioned",
    executorId,
    killAt: killIntervalMillis === undefined ? undefined : step.now + killIntervalMillis,
    now: step.now
  })
  Core.send(step, executor.ref, new ClusterMessages.DecommissionExecutor())
  event(step, { _tag: "ExecutorDecommissioned", executorId, reason, time: step.now })
}

// The executors blocks can be copied to: offered tasks, and not going away themselves.
const peers = (step: Step, except: Ids.ExecutorId) =>
  [...step.state.executors.values()].filter((executor) =>
    executor.launched && executor.id !== except && !step.state.decommissions.has(executor.id) &&
    step.state.allocation?.pendingRemoval.has(executor.id) !== true
  )

const stop = (step: Step, executorId: Ids.ExecutorId, why: string) => {
  const decommission = step.state.decommissions.get(executorId)
  const executor = step.state.executors.get(executorId)
  if (decommission === undefined || executor === undefined || decommission.phase._tag === "Stopped") return
  decommission.phase = { _tag: "Stopped" }
  Core.log(step, "Info", `Stopping decommissioned executor ${executorId}: ${why}`)
  Core.send(step, executor.ref, new ClusterMessages.StopExecutor())
}

/** A decommissioning executor's tasks are over: what it holds is shared out among the peers, or it stops. */
export const readyToMigrate = (step: Step, message: ClusterMessages.ReadyToMigrate) => {
  const decommission = step.state.decommissions.get(message.executorId)
  if (decommission === undefined || decommission.phase._tag !== "Draining") return
  migrate(step, message, decommission)
}

const migrated = (counts: { readonly moved: number; readonly blocks: number }) =>
  `${counts.moved} map output(s) and ${counts.blocks} cached block(s) migrated`

const migrate = (
  step: Step,
  offer: ClusterMessages.ReadyToMigrate,
  decommission: Decommission,
  done: { readonly moved: number; readonly blocks: number } = { moved: 0, blocks: 0 },
  /** Outputs moved in this step, which the DAG scheduler is yet to take (its inputs are queued). */
  movedNow: ReadonlyArray<{ readonly shuffleId: number; readonly mapIndex: number }> = []
) => {
  const { state } = step
  const from = offer.executorId
  const config = configOf(step)
  const tokens = new Map(offer.shuffles.map(({ shuffleId, token }) => [shuffleId, token]))
  // Only what the driver still counts on is worth copying: map outputs registered there (not those copied already),
  // blocks it knows are there and nowhere else.
  const moving = new Set(movedNow.map((output) => `${output.shuffleId}/${output.mapIndex}`))
  const mapOutputs = !config.migrateShuffles ? [] : DagScheduler.outputsOn(state.dag, from).flatMap((output) => {
    const token = tokens.get(output.shuffleId)
    return token === undefined || moving.has(`${output.shuffleId}/${output.mapIndex}`) ? [] : [{ ...output, token }]
  })
  const blocks = !config.migrateBlocks ? [] : offer.blocks.filter((block) => {
    const holders = state.blocks.get(block.blockId)
    return holders?.has(from) === true && holders.size === 1
  })
  if (mapOutputs.length === 0 && blocks.length === 0) {
    return stop(step, from, done.moved + done.blocks === 0 ? "nothing of it to migrate" : migrated(done))
  }
  const targets = peers(step, from)
  if (targets.length === 0) {
    if (decommission.phase._tag !== "WaitingForPeer") {
      Core.log(step, "Info", `No executor to migrate the blocks of executor ${from} to; waiting for one`)
      decommission.phase = { _tag: "WaitingForPeer", since: step.now, offer }
    }
    return
  }
  // Shared out in turn, so that each peer copies about as much, all at once.
  const shares = targets.map((target) => ({
    target,
    mapOutputs: [] as Array<ClusterMessages.MigratingMapOutput>,
    blocks: [] as Array<ClusterMessages.HeldBlock>
  }))
  mapOutputs.forEach((output, i) => shares[i % shares.length]!.mapOutputs.push(output))
  blocks.forEach((block, i) => shares[(mapOutputs.length + i) % shares.length]!.blocks.push(block))
  const busy = shares.filter((share) => share.mapOutputs.length + share.blocks.length > 0)
  const address = state.executors.get(from)!.ref.address
  for (const share of busy) {
    Core.send(
      step,
      share.target.ref,
      new ClusterMessages.MigrateBlocks({
        from,
        address,
        token: offer.token,
        mapOutputs: share.mapOutputs,
        blocks: share.blocks
      }, trusted)
    )
  }
  Core.log(
    step,
    "Info",
    `Migrating ${mapOutputs.length} map output(s) and ${blocks.length} cached block(s) of executor ${from} to ` +
      busy.map((share) => share.target.id).join(", ")
  )
  decommission.phase = {
    _tag: "Copying",
    offer,
    peers: new Set(busy.map((share) => share.target.id)),
    moved: done.moved,
    blocks: done.blocks,
    peerLost: false
  }
}

/** A peer copied what it was given: the map output tracker points at its copies. */
export const blocksMigrated = (step: Step, message: ClusterMessages.BlocksMigrated) => {
  const decommission = step.state.decommissions.get(message.from)
  if (decommission?.phase._tag !== "Copying" || !decommission.phase.peers.delete(message.executorId)) return
  for (const output of message.mapOutputs) {
    dag(step, { _tag: "MapOutputMoved", ...output, from: message.from, to: message.executorId, now: step.now })
  }
  decommission.phase.moved += message.mapOutputs.length
  decommission.phase.blocks += message.blocks.length
  for (const failure of message.failures) {
    Core.log(step, "Warning", `Executor ${message.executorId} did not migrate from ${message.from}: ${failure}`)
  }
  copied(step, message.from, decommission, message.mapOutputs)
}

const copied = (
  step: Step,
  executorId: Ids.ExecutorId,
  decommission: Decommission,
  movedNow: ReadonlyArray<{ readonly shuffleId: number; readonly mapIndex: number }> = []
) => {
  const { phase } = decommission
  if (phase._tag !== "Copying" || phase.peers.size > 0) return
  if (phase.peerLost) migrate(step, phase.offer, decommission, phase, movedNow)
  else stop(step, executorId, migrated(phase))
}

/**
 * An executor is gone: its own decommission is over, and a peer copying for another will not answer (what it was
 * given is shared out again among those left).
 */
export const executorGone = (step: Step, executorId: Ids.ExecutorId) => {
  step.state.decommissions.delete(executorId)
  for (const [from, decommission] of step.state.decommissions) {
    if (decommission.phase._tag === "Copying" && decommission.phase.peers.delete(executorId)) {
      decommission.phase.peerLost = true
      copied(step, from, decommission)
    }
  }
}

/** An executor that waits for a peer takes the first one; one past its force-kill timeout is stopped. */
export const check = (step: Step) => {
  const { state } = step
  const config = configOf(step)
  for (const [executorId, decommission] of state.decommissions) {
    const { phase } = decommission
    if (phase._tag === "Stopped") continue
    if (config.forceKillTimeoutMillis !== undefined && step.now - decommission.since >= config.forceKillTimeoutMillis) {
      stop(
        step,
        executorId,
        `kindling.executor.decommission.forceKillTimeout (${config.forceKillTimeoutMillis} ms) passed`
      )
    } else if (phase._tag === "WaitingForPeer") {
      if (step.now - phase.since >= config.peerWaitMillis) {
        stop(step, executorId, `no executor to migrate its blocks to for ${config.peerWaitMillis} ms`)
      } else migrate(step, phase.offer, decommission)
    }
  }
}
