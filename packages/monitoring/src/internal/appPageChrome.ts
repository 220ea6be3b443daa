// What every page of an app's UI shares: the page itself with its tabs, a state's badge, progress bars,
// durations and sizes, and the event timeline.
import { Html } from "@kindling/kernel/web"
import type { AppDescription } from "../AppPages.js"

const { html } = Html

const tabs: ReadonlyArray<Html.Tab> = [
  { label: "Jobs", href: "jobs/" },
  { label: "Stages", href: "stages/" },
  { label: "Storage", href: "storage/" },
  { label: "Environment", href: "environment/" },
  { label: "Executors", href: "executors/" }
]

export const state = (cell: string) => html`<span class="state-${cell}">${cell}</span>`

export const progressBar = (done: number, running: number, total: number, extra = "") => {
  const share = (n: number) => (total === 0 ? 0 : Math.min(100, (100 * n) / total))
  return html`<div class="bar"><div class="done" style="width:${
    share(done).toFixed(2)
  }%"></div><div class="running" style="left:${share(done).toFixed(2)}%;width:${
    share(running).toFixed(2)
  }%"></div><span>${done}/${total}${running > 0 ? ` (${running} running)` : ""}${extra}</span></div>`
}

export const durationOf = (start: number | undefined, end: number | undefined, now: number) =>
  start === undefined ? "" : Html.duration((end ?? now) - start)

export const page = (app: AppDescription, activeTab: string, body: Html.Markup) => {
  const badge = app.liveBadge === undefined ? "live" : app.liveBadge()
  return Html.respond(Html.page({
    title: `${app.name} application UI`,
    base: app.uiRoot ?? "/",
    tabs,
    activeTab,
    ...(badge === undefined ? {} : { liveFrom: "events", liveBadge: badge }),
    body
  }))
}

export const timeline = (
  lanes: ReadonlyArray<
    {
      readonly label: Html.Content
      readonly spans: ReadonlyArray<{ start: number; end: number | undefined; kind: string; text: string }>
    }
  >,
  now: number
) => {
  const all = lanes.flatMap((lane) => lane.spans)
  if (all.length === 0) return html`<p class="empty">Nothing yet.</p>`
  const from = Math.min(...all.map((s) => s.start))
  const to = Math.max(now, ...all.map((s) => s.end ?? now))
  const span = Math.max(1, to - from)
  const pct = (t: number) => ((100 * (t - from)) / span).toFixed(2)
  return html`<table class="timeline-table"><tbody>${
    lanes.map((lane) =>
      html`<tr><td style="width:12em">${lane.label}</td><td><div class="timeline"><div class="lane">${
        lane.spans.map((s) =>
          html`<div class="span ${s.kind}" title="${s.text}" style="left:${pct(s.start)}%;width:max(3px,${
            (Number(pct(s.end ?? now)) - Number(pct(s.start))).toFixed(2)
          }%)">${s.text}</div>`
        )
      }</div></div></td></tr>`
    )
  }</tbody></table><p class="empty">${Html.time(from)} – ${Html.time(to)}</p>`
}

export const bytesOr = (n: number | undefined) => (n === undefined || n === 0 ? "" : Html.bytes(n))
