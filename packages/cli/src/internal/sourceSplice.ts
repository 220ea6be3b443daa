/**
 * A new text made of pieces of a generated text (copied, possibly more than once) and of new text, with a source
 * map that sends each copied piece where the generated text's own map sent it: the original sources. New text
 * maps nowhere of its own.
 */
import { addSegment, GenMapping, setSourceContent, toEncodedMap } from "@jridgewell/gen-mapping"
import { eachMapping, originalPositionFor, TraceMap } from "@jridgewell/trace-mapping"

/** Where a position of the generated text came from: a 1-based line and 0-based column, as source maps count. */
export interface Position {
  readonly line: number
  readonly column: number
}

export interface SourceSplice {
  /** Where the generated text's `offset` came from in its original source. */
  readonly originalPosition: (offset: number) => Position
  /** Appends `text` as it is. */
  readonly text: (text: string) => void
  /** Appends the generated text from `start` to `end`, mapped. */
  readonly copy: (start: number, end: number) => void
  /** The text made so far, with its source map inline. */
  readonly withInlineMap: () => string
}

interface Segment {
  readonly offset: number
  readonly source: string
  readonly line: number
  readonly column: number
  readonly name: string | null
}

const lineStarts = (text: string): Array<number> => {
  const starts = [0]
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1)
  return starts
}

// The index of the last element of `sorted` not above `value` (-1 if none).
const lastNotAbove = (sorted: ReadonlyArray<number>, value: number): number => {
  let low = 0
  let high = sorted.length - 1
  let found = -1
  while (low <= high) {
    const middle = (low + high) >> 1
    if (sorted[middle]! <= value) {
      found = middle
      low = middle + 1
    } else {
      high = middle - 1
    }
  }
  return found
}

export const make = (generated: string, map: string): SourceSplice => {
  const trace = new TraceMap(map)
  const generatedLines = lineStarts(generated)
  const segments: Array<Segment> = []
  eachMapping(trace, (mapping) => {
    if (mapping.source === null) return
    segments.push({
      offset: generatedLines[mapping.generatedLine - 1]! + mapping.generatedColumn,
      source: mapping.source,
      line: mapping.originalLine,
      column: mapping.originalColumn,
      name: mapping.name
    })
  })
  segments.sort((a, b) => a.offset - b.offset)
  const offsets = segments.map((segment) => segment.offset)

  const output = new GenMapping()
  trace.sources.forEach((source, index) => {
    if (source !== null) setSourceContent(output, source, trace.sourcesContent?.[index] ?? null)
  })
  const parts: Array<string> = []
  // Where the next appended character goes: 0-based line and column.
  let line = 0
  let column = 0
  const advance = (text: string) => {
    const lastBreak = text.lastIndexOf("\n")
    if (lastBreak === -1) {
      column += text.length
    } else {
      line += text.split("\n").length - 1
      column = text.length - lastBreak - 1
    }
    parts.push(text)
  }

  return {
    originalPosition: (offset) => {
      const lineIndex = lastNotAbove(generatedLines, offset)
      const found = originalPositionFor(trace, { line: lineIndex + 1, column: offset - generatedLines[lineIndex]! })
      return found.line === null ? { line: lineIndex + 1, column: offset - generatedLines[lineIndex]! } : found
    },
    text: advance,
    copy: (start, end) => {
      const startLine = lastNotAbove(generatedLines, start)
      const outLine = line
      const outColumn = column
      // The segment in force where the copy starts, so that its first characters map too.
      const first = lastNotAbove(offsets, start)
      for (let i = Math.max(first, 0); i < segments.length && segments[i]!.offset < end; i++) {
        const segment = segments[i]!
        const at = Math.max(segment.offset, start)
        const atLine = lastNotAbove(generatedLines, at)
        const generatedLine = outLine + (atLine - startLine)
        const generatedColumn = atLine === startLine ? outColumn + (at - start) : at - generatedLines[atLine]!
        if (segment.name === null) {
          addSegment(output, generatedLine, generatedColumn, segment.source, segment.line - 1, segment.column)
        } else {
          addSegment(
            output,
            generatedLine,
            generatedColumn,
            segment.source,
            segment.line - 1,
            segment.column,
            segment.name
          )
        }
      }
      advance(generated.slice(start, end))
    },
    withInlineMap: () => {
      const encoded = Buffer.from(JSON.stringify(toEncodedMap(output))).toString("base64")
      return `${parts.join("")}\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,${encoded}\n`
    }
  }
}
