// Where the app's data is: its persisted blocks by executor, and the map outputs that reduce tasks ask for.
import { Core } from "@kindling/kernel"
import { ClusterMessages, Errors, Ids } from "@kindling/protocol"
import * as Exit from "effect/Exit"
import * as DagScheduler from "../../DagScheduler.js"
import type { Local } from "../../DriverCore.js"
import type * as TaskScheduler from "../../TaskScheduler.js"
import type { State, Step } from "./driverState.js"
import { event, trusted } from "./driverState.js"

// The executors holding a block, with their hosts: where a task reading it would rather run.
export const locationsOf = (state: State, blockId: string | undefined): Array<TaskScheduler.Location> =>
  blockId === undefined ? [] : [...state.blocks.get(blockId) ?? []].flatMap((executorId) => {
    const executor = state.executors.get(executorId)
    return executor === undefined ? [] : [{ executorId, host: executor.host }]
  })

export const updateBlockInfo = (step: Step, message: ClusterMessages.UpdateBlockInfo) => {
  if (!step.state.executors.has(message.executorId)) return
  const holders = step.state.blocks.get(message.blockId) ?? new Set()
  holders.add(message.executorId)
  step.state.blocks.set(message.blockId, holders)
  event(step, {
    _tag: "BlockUpdated",
    executorId: message.executorId,
    blockId: message.blockId,
    storageLevel: message.storageLevel,
    memSize: message.memSize,
    diskSize: message.diskSize,
    time: step.now
  })
}

export const unpersist = (step: Step, input: Extract<Local, { readonly _tag: "Unpersist" }>) => {
  const { state } = step
  for (const blockId of [...state.blocks.keys()]) {
    if (blockId.startsWith(`rdd_${input.rddId}_`)) state.blocks.delete(blockId)
  }
  for (const executor of state.executors.values()) {
    Core.send(step, executor.ref, new ClusterMessages.RemoveRdd({ rddId: input.rddId }))
  }
  event(step, { _tag: "DatasetUnpersisted", datasetId: input.rddId, time: step.now })
}

export const mapOutputStatuses = (
  step: Step,
  message: ClusterMessages.GetMapOutputStatuses,
  ask: Core.Ask<ClusterMessages.GetMapOutputStatuses>
) => {
  const { state } = step
  const found = DagScheduler.locations(state.dag, message.shuffleId, message.reduceId)
  const missing = (mapIndex: number) =>
    Core.reply(step, ask, Exit.fail(new Errors.MapOutputMissing({ shuffleId: message.shuffleId, mapIndex })))
  if (found._tag === "Missing") return missing(found.mapIndex)
  const locations: Array<ClusterMessages.MapOutputLocation> = []
  for (let mapIndex = 0; mapIndex < found.blocks.length; mapIndex++) {
    const block = found.blocks[mapIndex]!
    const executorId = Ids.ExecutorId.make(block.executorId)
    // Served by its worker's shuffle service, whether its executor runs or not; else by its executor.
    const service = state.shuffleServices.get(executorId)
    const executor = state.executors.get(executorId)
    if (service === undefined && executor === undefined) return missing(mapIndex)
    locations.push(
      new ClusterMessages.MapOutputLocation({
        mapIndex,
        executorId,
        address: service ?? executor!.ref.address,
        size: block.size,
        ...(service === undefined ? {} : { shuffleService: true })
      }, trusted)
    )
  }
  Core.reply(
    step,
    ask,
    Exit.succeed(
      new ClusterMessages.MapOutputStatuses({
        shuffleId: message.shuffleId,
        reduceId: message.reduceId,
        locations
      }, trusted)
    )
  )
}
