// The Storage tab and a persisted dataset's page, the Environment tab and the Executors tab.
import { Html } from "@kindling/kernel/web"
import type { AppDescription } from "../AppPages.js"
import type * as AppStatus from "../AppStatus.js"
import * as MonitoringApi from "../MonitoringApi.js"
import { page, state } from "./appPageChrome.js"

const { html, link } = Html

export const storagePage = (status: AppStatus.AppStatus, app: AppDescription) => {
  const rows = [...status.storage.values()].map(MonitoringApi.storage)
  return page(
    app,
    "storage/",
    html`<h1>Storage</h1><h2>Cached Datasets (${rows.length})</h2>${
      Html.table<(typeof rows)[number]>(
        [
          { header: "ID", cell: (r) => r.id, numeric: true },
          { header: "Dataset Name", cell: (r) => link(`storage/rdd/?id=${r.id}`, r.name) },
          { header: "Storage Level", cell: (r) => r.storageLevel },
          { header: "Cached Partitions", cell: (r) => r.numCachedPartitions, numeric: true },
          {
            header: "Fraction Cached",
            cell: (r) => r.numPartitions === 0 ? "" : `${Math.round((100 * r.numCachedPartitions) / r.numPartitions)}%`,
            numeric: true
          },
          { header: "Size in Memory", cell: (r) => Html.bytes(r.memoryUsed), numeric: true },
          { header: "Size on Disk", cell: (r) => Html.bytes(r.diskUsed), numeric: true }
        ],
        rows,
        { id: "storage", empty: "No dataset is persisted." }
      )
    }`
  )
}

export const datasetPage = (status: AppStatus.AppStatus, app: AppDescription, storage: AppStatus.Storage) => {
  const blocks = [...storage.blocks].flatMap(([blockId, holders]) =>
    [...holders].map(([executorId, size]) => ({ blockId, executorId, ...size }))
  )
  const summary = MonitoringApi.storage(storage)
  return page(
    app,
    "storage/",
    html`<h1>Dataset Storage Info for ${storage.name}</h1>
<ul class="summary"><li><strong>Storage Level:</strong>${storage.storageLevel}</li><li><strong>Cached Partitions:</strong>${summary.numCachedPartitions} of ${summary.numPartitions}</li><li><strong>Memory Size:</strong>${
      Html.bytes(summary.memoryUsed)
    }</li><li><strong>Disk Size:</strong>${Html.bytes(summary.diskUsed)}</li></ul>
<h2>${blocks.length} Partitions</h2>${
      Html.table<(typeof blocks)[number]>(
        [
          { header: "Block Name", cell: (b) => b.blockId },
          { header: "Size in Memory", cell: (b) => Html.bytes(b.memSize), numeric: true },
          { header: "Size on Disk", cell: (b) => Html.bytes(b.diskSize), numeric: true },
          { header: "Executor", cell: (b) => `${b.executorId} (${status.executors.get(b.executorId)?.host ?? ""})` }
        ],
        blocks,
        { id: "blocks" }
      )
    }`
  )
}

export const environmentPage = (app: AppDescription, info: MonitoringApi.AppInfo) => {
  const env = MonitoringApi.environment(info)
  const pairs = (rows: ReadonlyArray<ReadonlyArray<string>>, id: string) =>
    Html.table<ReadonlyArray<string>>(
      [{ header: "Name", cell: (r) => r[0] }, { header: "Value", cell: (r) => r[1] }],
      rows,
      { id }
    )
  return page(
    app,
    "environment/",
    html`<h1>Environment</h1>
<h2>Runtime Information</h2>${
      pairs(
        [["Node.js Version", process.version], ["Node.js Home", process.execPath], ["Kindling Version", info.version]],
        "runtime"
      )
    }
<h2>Kindling Properties</h2>${pairs(env.sparkProperties, "properties")}
<h2>System Properties</h2>${pairs(env.systemProperties, "system")}`
  )
}

// Spark's states, and the decommissioning that Spark's page does not show.
const executorState = (executor: AppStatus.Executor, active: boolean) =>
  executor.decommissioned === undefined
    ? active ? "ACTIVE" : "DEAD"
    : active
    ? "DECOMMISSIONING"
    : "DECOMMISSIONED"

export const executorsPage = (status: AppStatus.AppStatus, app: AppDescription) => {
  const rows = [...status.executors.values()].map((e) => ({ e, summary: MonitoringApi.executor(status, e) }))
  return page(
    app,
    "executors/",
    html`<h1>Executors</h1>${
      Html.table<(typeof rows)[number]>(
        [
          { header: "Executor ID", cell: (r) => r.e.executorId },
          { header: "Address", cell: (r) => r.e.host },
          { header: "Status", cell: (r) => state(executorState(r.e, r.summary.isActive)) },
          { header: "RDD Blocks", cell: (r) => r.summary.rddBlocks, numeric: true },
          { header: "Storage Memory", cell: (r) => Html.bytes(r.summary.memoryUsed), numeric: true },
          { header: "Heap Used", cell: (r) => Html.bytes(r.e.memory["heapUsed"] ?? 0), numeric: true },
          { header: "Cores", cell: (r) => r.e.totalCores, numeric: true },
          { header: "Active Tasks", cell: (r) => r.e.activeTasks, numeric: true },
          { header: "Failed Tasks", cell: (r) => r.e.failedTasks, numeric: true },
          { header: "Complete Tasks", cell: (r) => r.e.completedTasks, numeric: true },
          { header: "Task Time", cell: (r) => Html.duration(r.e.totalDuration), numeric: true },
          { header: "Shuffle Read", cell: (r) => Html.bytes(r.e.shuffleRead), numeric: true },
          { header: "Shuffle Write", cell: (r) => Html.bytes(r.e.shuffleWrite), numeric: true },
          {
            header: "Logs",
            cell: (r) => Object.entries(r.e.logUrls).map(([logType, url], i) => [i > 0 ? " " : "", link(url, logType)])
          },
          { header: "Removed", cell: (r) => r.e.removeReason ?? "" }
        ],
        rows,
        { id: "executors", empty: "No executors yet." }
      )
    }`
  )
}
