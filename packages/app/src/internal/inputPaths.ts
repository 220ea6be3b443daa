// The files an input path names, as Hadoop's FileInputFormat finds them: several paths separated by commas, each
// a file, a directory (its files, without the hidden `.name` and `_name` ones) or a glob pattern — `*` and `?`
// within a name, `[abc]` and `[a-z]`, `{a,b}` alternatives — whose matches are files or directories in turn.
import { type Disk, FilePaths } from "@kindling/data"
import * as DiskError from "@kindling/kernel/DiskError"
import * as CommaLists from "./commaLists.js"

export interface InputFile {
  readonly path: string
  readonly size: number
}

const isGlob = (text: string): boolean => /[*?[{]/.test(text)

const escape = (char: string) => (/[\\^$.|+()]/.test(char) ? `\\${char}` : char)

// One path segment's pattern as a regular expression over names.
const segmentPattern = (segment: string): RegExp => {
  let source = ""
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]!
    if (char === "*") source += "[^/]*"
    else if (char === "?") source += "[^/]"
    else if (char === "[") {
      const end = segment.indexOf("]", i + 1)
      if (end === -1) source += "\\["
      else {
        const body = segment.slice(i + 1, end)
        source += `[${body.startsWith("^") || body.startsWith("!") ? `^${body.slice(1)}` : body}]`
        i = end
      }
    } else if (char === "{") {
      const end = segment.indexOf("}", i + 1)
      if (end === -1) source += "\\{"
      else {
        const alternatives = segment.slice(i + 1, end).split(",")
        source += `(?:${alternatives.map((alternative) => [...alternative].map(escape).join("")).join("|")})`
        i = end
      }
    } else source += escape(char)
  }
  return new RegExp(`^${source}$`)
}

const visible = (name: string) => !name.startsWith(".") && !name.startsWith("_")

const notFound = (path: string, reason: string) =>
  new DiskError.DiskError({ operation: "stat", path, code: "ENOENT", reason })

// The paths a pattern matches, in order: each segment with a wildcard matched against its directory's entries.
const matches = (files: Disk.Files, pattern: string): Array<string> => {
  const { names, root } = FilePaths.segments(pattern)
  let found: Array<string> = [root]
  for (const segment of names) {
    if (!isGlob(segment)) {
      found = found.map((dir) => FilePaths.join(dir, segment)).filter((path) => files.stat(path) !== undefined)
      continue
    }
    const regex = segmentPattern(segment)
    found = found.flatMap((dir) =>
      files.stat(dir)?.kind === "directory"
        ? [...files.list(dir)].sort().filter((name) => visible(name) && regex.test(name)).map((name) =>
          FilePaths.join(dir, name)
        )
        : []
    )
  }
  return found
}

// A file as itself, a directory as its visible files.
const filesAt = (files: Disk.Files, path: string): Array<InputFile> => {
  const stat = files.stat(path)
  if (stat === undefined) return []
  if (stat.kind === "file") return [{ path, size: stat.size }]
  return [...files.list(path)].filter(visible).sort().flatMap((name) => {
    const file = FilePaths.join(path, name)
    const info = files.stat(file)
    return info?.kind === "file" ? [{ path: file, size: info.size }] : []
  })
}

/**
 * The files `paths` names; throws a `DiskError` when a path does not exist or a pattern matches nothing.
 */
export const expand = (files: Disk.Files, paths: string): Array<InputFile> =>
  CommaLists.split(paths, "{", "}").flatMap((path) => {
    if (!isGlob(path)) {
      const absolute = FilePaths.resolve(path)
      if (files.stat(absolute) === undefined) throw notFound(absolute, "no such file or directory")
      return filesAt(files, absolute)
    }
    const matched = matches(files, path)
    if (matched.length === 0) throw notFound(FilePaths.resolve(path), "the pattern matches no file")
    return matched.flatMap((match) => filesAt(files, match))
  })
