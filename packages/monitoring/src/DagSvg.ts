/**
 * The DAG picture of a job or a stage, as Spark's UI draws it: one box per stage, holding the datasets the stage
 * computes, with arrows from each dataset to those made from it (across a shuffle, from the map side's last
 * dataset to the shuffled one). Laid out by dagre, drawn as plain SVG on the server.
 *
 * @since 0.1.0
 */
import * as dagre from "@dagrejs/dagre"
import type { AppEvents } from "@kindling/app"
import { Html } from "@kindling/kernel/web"
import type * as AppStatus from "./AppStatus.js"

const { html } = Html

const nodeWidth = 190
const nodeHeight = 38
const clusterPadding = 6

/**
 * @since 0.1.0
 * @category models
 */
export interface DrawnStage {
  readonly info: AppEvents.StageInfo
  readonly status: AppStatus.StageStatus
}

// A stage with no dataset described (a job from an older driver, say) is one node of its own.
const nodesOf = (stage: AppEvents.StageInfo) =>
  stage.datasets.length > 0
    ? stage.datasets.map((dataset) => ({
      id: `d${dataset.id}`,
      label: `${dataset.name} [${dataset.id}]`,
      sub: dataset.operation + (dataset.storageLevel === undefined ? "" : " (cached)"),
      parents: dataset.parentIds.map((id) => `d${id}`)
    }))
    : [{ id: `s${stage.stageId}`, label: stage.name, sub: "", parents: stage.parentIds.map((id) => `s${id}`) }]

/**
 * The stages drawn together, as SVG markup.
 *
 * @since 0.1.0
 */
export const render = (stages: ReadonlyArray<DrawnStage>): Html.Markup => {
  const graph = new dagre.graphlib.Graph({ compound: true, multigraph: false })
  graph.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 44, marginx: 12, marginy: 12 })
  graph.setDefaultEdgeLabel(() => ({}))
  const labels = new Map<string, { label: string; sub: string }>()
  const edges: Array<[string, string]> = []
  for (const { info } of stages) {
    const cluster = `stage-${info.stageId}`
    graph.setNode(cluster, { label: `Stage ${info.stageId}`, clusterLabelPos: "top", paddingTop: 24 })
    for (const node of nodesOf(info)) {
      if (labels.has(node.id)) continue
      labels.set(node.id, node)
      graph.setNode(node.id, { width: nodeWidth, height: nodeHeight })
      graph.setParent(node.id, cluster)
      for (const parent of node.parents) edges.push([parent, node.id])
    }
  }
  for (const [from, to] of edges) if (labels.has(from)) graph.setEdge(from, to)
  dagre.layout(graph)

  const box = (id: string) => graph.node(id) as { x: number; y: number; width: number; height: number }
  const clusters = stages.map(({ info, status }) => {
    const { height, width, x, y } = box(`stage-${info.stageId}`)
    const left = x - width / 2 - clusterPadding
    const top = y - height / 2 - clusterPadding - 10
    return html`<g class="cluster${
      status === "SKIPPED" ? " skipped" : ""
    }" data-stage-id="${info.stageId}"><rect x="${left}" y="${top}" width="${width + 2 * clusterPadding}" height="${
      height + 2 * clusterPadding + 10
    }" rx="6"></rect><text x="${left + 8}" y="${top + 16}">Stage ${info.stageId}${
      status === "SKIPPED" ? " (skipped)" : ""
    }</text></g>`
  })
  const nodes = [...labels].map(([id, { label, sub }]) => {
    const { x, y } = box(id)
    return html`<g class="node"><rect x="${x - nodeWidth / 2}" y="${
      y - nodeHeight / 2
    }" width="${nodeWidth}" height="${nodeHeight}" rx="4"></rect><text x="${x}" y="${
      y - 3
    }" text-anchor="middle">${label}</text><text x="${x}" y="${
      y + 12
    }" text-anchor="middle" class="sub">${sub}</text></g>`
  })
  const arrows = graph.edges().map((edge: dagre.Edge) => {
    const points = (graph.edge(edge) as { points: Array<{ x: number; y: number }> }).points
    return html`<path class="edge" d="${
      points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ")
    }"></path>`
  })
  const size = graph.graph() as { width?: number; height?: number }
  const width = Math.ceil((size.width ?? 0) + 2 * clusterPadding)
  const height = Math.ceil((size.height ?? 0) + 2 * clusterPadding + 10)
  return html`<svg class="dag" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="${-clusterPadding} ${
    -clusterPadding - 10
  } ${width} ${height}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#495057"></path></marker></defs>${clusters}${arrows}${nodes}</svg>`
}
