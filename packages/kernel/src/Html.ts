/**
 * Server-rendered pages for every node's web UI: markup built with the `html` template (whatever is interpolated
 * is escaped unless it is markup itself), one page layout with a header, tabs and the shared stylesheet and
 * script, tables, and the formats Spark's pages use for sizes, durations and dates.
 *
 * @since 0.1.0
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

const MarkupTypeId: unique symbol = Symbol.for("@kindling/kernel/Html/Markup") as never

/**
 * Markup that is safe to put in a page as it is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Markup {
  readonly [MarkupTypeId]: typeof MarkupTypeId
  readonly text: string
}

/**
 * What may be put in a page: text (escaped), numbers, markup, nothing, or a list of those.
 *
 * @since 0.1.0
 * @category models
 */
export type Content = string | number | bigint | boolean | Markup | null | undefined | ReadonlyArray<Content>

/**
 * @since 0.1.0
 * @category guards
 */
export const isMarkup = (value: unknown): value is Markup =>
  typeof value === "object" && value !== null && MarkupTypeId in value

/**
 * Markup from a string the caller vouches for (no user data in it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const trusted = (text: string): Markup => ({ [MarkupTypeId]: MarkupTypeId, text })

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/**
 * Text made safe for an element's content or a quoted attribute.
 *
 * @since 0.1.0
 */
export const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c]!)

const render = (content: Content): string => {
  if (content === null || content === undefined || content === false) return ""
  if (isMarkup(content)) return content.text
  if (Array.isArray(content)) return content.map(render).join("")
  return escape(String(content))
}

/**
 * Markup from a template: interpolated values are escaped unless they are markup.
 *
 * @since 0.1.0
 * @category constructors
 */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Content>): Markup => {
  let text = strings[0]!
  for (let i = 0; i < values.length; i++) text += render(values[i]!) + strings[i + 1]!
  return trusted(text)
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Column<A> {
  readonly header: string
  readonly cell: (row: A) => Content
  /** Right-aligned, for figures. */
  readonly numeric?: boolean
}

/**
 * A table of `rows`, or `empty` when there are none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const table = <A>(
  columns: ReadonlyArray<Column<A>>,
  rows: ReadonlyArray<A>,
  options: { readonly empty?: string; readonly id?: string } = {}
): Markup => {
  if (rows.length === 0) return html`<p class="empty">${options.empty ?? "None."}</p>`
  const align = (column: Column<A>) => (column.numeric === true ? trusted(" class=\"num\"") : "")
  return html`<table${options.id === undefined ? "" : html` id="${options.id}"`}><thead><tr>${
    columns.map((column) => html`<th${align(column)}>${column.header}</th>`)
  }</tr></thead><tbody>${
    rows.map((row) => html`<tr>${columns.map((column) => html`<td${align(column)}>${column.cell(row)}</td>`)}</tr>`)
  }</tbody></table>`
}

/**
 * A link.
 *
 * @since 0.1.0
 * @category constructors
 */
export const link = (href: string, text: Content): Markup => html`<a href="${href}">${text}</a>`

/**
 * A kill button: a form that POSTs Spark's `id` and `terminate=true` to `action` once the user confirms.
 *
 * @since 0.1.0
 * @category constructors
 */
export const killButton = (action: string, id: string | number, what: string): Markup =>
  html`<form class="inline" method="post" action="${action}" data-confirm="Kill ${what} ${id}?"><input type="hidden" name="id" value="${id}"><input type="hidden" name="terminate" value="true"><button class="kill" type="submit">kill</button></form>`

/**
 * @since 0.1.0
 * @category models
 */
export interface Tab {
  readonly label: string
  readonly href: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PageOptions {
  /** Shown in the header, after the Kindling mark: "Master at kindling://…", "my-app application UI". */
  readonly title: string
  /** What the page's relative links are relative to (its `<base>`), when not the page itself. */
  readonly base?: string
  readonly tabs?: ReadonlyArray<Tab>
  /** The href of the tab shown as selected. */
  readonly activeTab?: string
  /** Where the page's live updates come from (server-sent events); without it the page is static. */
  readonly liveFrom?: string
  /** What the header's badge says while the live updates flow (`live` unless given). */
  readonly liveBadge?: string
  readonly body: Markup
}

/**
 * A whole page: header with tabs, the body, the shared stylesheet and script.
 *
 * @since 0.1.0
 * @category constructors
 */
export const page = (options: PageOptions): Markup =>
  html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title}</title>${
    options.base === undefined ? "" : html`<base href="${options.base}">`
  }<link rel="stylesheet" href="/static/kindling.css"><script src="/static/kindling.js" defer></script></head>
<body${options.liveFrom === undefined ? "" : html` data-live="${options.liveFrom}"`}>
<header><span class="brand">Kindling</span><span class="title">${options.title}</span><nav>${
    (options.tabs ?? []).map((tab) =>
      html`<a href="${tab.href}"${tab.href === options.activeTab ? trusted(" class=\"active\"") : ""}>${tab.label}</a>`
    )
  }</nav>${
    options.liveFrom === undefined ? "" : html`<span class="live" hidden>${options.liveBadge ?? "live"}</span>`
  }</header>
<main>${options.body}</main></body></html>`

/**
 * A page as a response.
 *
 * @since 0.1.0
 * @category responses
 */
export const respond = (markup: Markup, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(markup.text, { status, contentType: "text/html; charset=utf-8" })

const units = ["B", "KiB", "MiB", "GiB", "TiB"]

/**
 * Bytes as Spark's pages show them: `1.5 MiB`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const bytes = (n: number): string => {
  let value = n
  let unit = 0
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`
}

/**
 * Megabytes (the unit of memory sizes on the wire) as a size.
 *
 * @since 0.1.0
 * @category formatting
 */
export const megabytes = (mb: number): string => bytes(mb * 2 ** 20)

/**
 * A duration as Spark's pages show it: `42 ms`, `3 s`, `1.2 min`, `2.0 h`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const duration = (millis: number): string => {
  if (millis < 1000) return `${Math.round(millis)} ms`
  if (millis < 60_000) return `${Math.round(millis / 100) / 10} s`
  if (millis < 3_600_000) return `${(millis / 60_000).toFixed(1)} min`
  return `${(millis / 3_600_000).toFixed(1)} h`
}

/**
 * A moment as `2026-12-04 08:20:17` (UTC).
 *
 * @since 0.1.0
 * @category formatting
 */
export const time = (epochMillis: number): string =>
  new Date(epochMillis).toISOString().replace("T", " ").replace(/\.\d+Z$/, "")
