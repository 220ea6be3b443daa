/**
 * The stylesheet and script every node's pages share, served under `/static/`. Plain CSS and a few lines of
 * browser script: no front-end build.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export const stylesheet = `
:root { --fg: #1d2330; --muted: #5f6b7a; --line: #dde3ea; --bg: #f7f9fb; --accent: #d9480f; --ok: #2b8a3e;
  --bad: #c92a2a; --run: #1971c2; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
body { margin: 0; background: white; font-size: 14px; }
header { display: flex; align-items: center; gap: 1.5em; padding: .6em 1.5em; background: var(--fg); color: white; }
header .brand { font-weight: 700; color: #ffa94d; letter-spacing: .02em; }
header .title { font-weight: 500; }
header nav { display: flex; gap: .2em; margin-left: auto; }
header nav a { color: #d0d7e2; text-decoration: none; padding: .35em .8em; border-radius: 4px; }
header nav a.active, header nav a:hover { background: #39424f; color: white; }
header .live { font-size: 11px; color: #8ce99a; border: 1px solid #8ce99a; border-radius: 8px; padding: 0 .5em; }
main { padding: 1em 1.5em 3em; max-width: 1400px; }
h1 { font-size: 20px; margin: .4em 0 .6em; } h2 { font-size: 16px; margin: 1.6em 0 .5em; }
a { color: var(--run); }
ul.summary { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr));
  gap: .3em 2em; }
ul.summary li strong { color: var(--muted); font-weight: 600; margin-right: .4em; }
table { border-collapse: collapse; width: 100%; margin: .3em 0 1em; }
th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg); font-weight: 600; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:hover { background: #f1f5f9; }
p.empty { color: var(--muted); font-style: italic; }
.state-ALIVE, .state-RUNNING, .state-SUCCEEDED, .state-SUCCESS, .state-FINISHED, .state-COMPLETE { color: var(--ok); font-weight: 600; }
.state-DEAD, .state-FAILED, .state-KILLED, .state-ERROR, .state-LOST { color: var(--bad); font-weight: 600; }
.state-ACTIVE, .state-WAITING, .state-SUBMITTED, .state-LAUNCHING, .state-PENDING { color: var(--run); font-weight: 600; }
.state-SKIPPED { color: var(--muted); }
.bar { position: relative; min-width: 140px; height: 16px; background: #e9ecef; border-radius: 3px; overflow: hidden; }
.bar .done { position: absolute; left: 0; top: 0; bottom: 0; background: #69db7c; }
.bar .running { position: absolute; top: 0; bottom: 0; background: #74c0fc; }
.bar span { position: relative; font-size: 11px; padding-left: .4em; }
form.inline { display: inline; }
button.kill { color: var(--bad); background: none; border: 1px solid #ffa8a8; border-radius: 3px; cursor: pointer;
  font-size: 11px; padding: 0 .4em; margin-left: .5em; }
.pager { display: flex; gap: .6em; align-items: center; margin: .5em 0; color: var(--muted); }
pre.log { background: var(--bg); border: 1px solid var(--line); padding: .8em; overflow: auto; max-height: 70vh;
  white-space: pre-wrap; font-size: 12px; }
svg.dag { border: 1px solid var(--line); background: var(--bg); max-width: 100%; height: auto; }
svg.dag .cluster rect { fill: #fff4e6; stroke: #ffa94d; }
svg.dag .cluster.skipped rect { fill: #f1f3f5; stroke: #adb5bd; }
svg.dag .node rect { fill: white; stroke: #339af0; }
svg.dag text { font-size: 12px; fill: var(--fg); }
svg.dag .edge { stroke: #495057; fill: none; marker-end: url(#arrow); }
.timeline { position: relative; border-left: 1px solid var(--line); margin: .5em 0 1em; }
.timeline .lane { position: relative; height: 20px; margin: 2px 0; }
.timeline .span { position: absolute; height: 16px; border-radius: 2px; font-size: 11px; color: white;
  padding-left: 3px; overflow: hidden; white-space: nowrap; }
.timeline .span.SUCCEEDED { background: #40c057; } .timeline .span.FAILED { background: #fa5252; }
.timeline .span.RUNNING { background: #339af0; } .timeline .span.executor { background: #868e96; }
.timeline .span.decommissioning { background: #fab005; }
`

/**
 * Keeps a page live — when its events stream says something changed, the page's main part is fetched again and
 * replaced (at most once a second) — and asks before a kill.
 *
 * @since 0.1.0
 */
export const script = `
(() => {
  document.addEventListener("submit", (event) => {
    const question = event.target.getAttribute("data-confirm")
    if (question !== null && !window.confirm(question)) event.preventDefault()
  })
  const source = document.body.getAttribute("data-live")
  if (source === null || typeof EventSource === "undefined") return
  const badge = document.querySelector("header .live")
  let pending = false
  let last = 0
  const refresh = async () => {
    pending = false
    last = Date.now()
    const response = await fetch(window.location.href, { headers: { accept: "text/html" } })
    if (!response.ok) return
    const next = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("main")
    const main = document.querySelector("main")
    if (next !== null && main !== null) main.innerHTML = next.innerHTML
  }
  const events = new EventSource(source)
  events.onopen = () => { if (badge) badge.hidden = false }
  events.onerror = () => { if (badge) badge.hidden = true }
  events.onmessage = () => {
    if (pending) return
    pending = true
    setTimeout(refresh, Math.max(0, 1000 - (Date.now() - last)))
  }
})()
`
