/**
 * Which Kindling this is: its version and the commit it was built from, as `kindling --version` prints them. A
 * distribution records them in `release.json` beside the command's modules when it is made (`pnpm dist`); a
 * checkout reads its commit from git's files (no process is started for it: the answer must be quick).
 *
 * This module imports nothing but Node's: `kindling --version` loads it alone.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * @since 0.1.0
 * @category models
 */
export interface Release {
  readonly version: string
  /** The commit, abbreviated as git abbreviates it; undefined when neither a release file nor git's files tell. */
  readonly commit: string | undefined
}

const readJson = (path: string): unknown => {
  try {
    return JSON.parse(Fs.readFileSync(path, "utf8"))
  } catch {
    return undefined
  }
}

// The commit checked out in the repository at or above `dir`: HEAD, through a branch's ref file or packed-refs.
const gitCommit = (dir: string): string | undefined => {
  for (let at = dir; at !== Path.dirname(at); at = Path.dirname(at)) {
    const git = Path.join(at, ".git")
    if (!Fs.existsSync(git)) continue
    try {
      const head = Fs.readFileSync(Path.join(git, "HEAD"), "utf8").trim()
      if (!head.startsWith("ref: ")) return head.slice(0, 7)
      const ref = head.slice("ref: ".length)
      const loose = Path.join(git, ref)
      if (Fs.existsSync(loose)) return Fs.readFileSync(loose, "utf8").trim().slice(0, 7)
      const packed = Fs.readFileSync(Path.join(git, "packed-refs"), "utf8").split("\n")
        .find((line) => line.endsWith(` ${ref}`))
      return packed?.slice(0, 7)
    } catch {
      return undefined
    }
  }
  return undefined
}

/**
 * The release of the installation whose modules are in `dir` (the directory of the command's built modules, of
 * its bundle, or of its sources): the nearest `release.json` or `package.json` at or above it tells.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (dir: string): Release => {
  for (let at = dir;; at = Path.dirname(at)) {
    const recorded = readJson(Path.join(at, "release.json")) as Partial<Release> | undefined
    if (recorded?.version !== undefined) return { version: recorded.version, commit: recorded.commit }
    const manifest = readJson(Path.join(at, "package.json")) as { readonly version?: string } | undefined
    if (manifest?.version !== undefined) return { version: manifest.version, commit: gitCommit(at) }
    if (at === Path.dirname(at)) return { version: "unknown", commit: undefined }
  }
}

/**
 * This command's release.
 *
 * @since 0.1.0
 * @category constants
 */
export const current = (): Release => of(Path.dirname(fileURLToPath(import.meta.url)))

/**
 * `0.1.0 (commit 1d96839)`, as `kindling --version` prints it.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describe = (release: Release): string =>
  release.commit === undefined ? release.version : `${release.version} (commit ${release.commit})`
