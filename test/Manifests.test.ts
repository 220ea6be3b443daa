/**
 * What installing the workspace needs of the packages' manifests: every command a package declares (`bin`) is a
 * file of the repository, so that installing a fresh clone, before any build, links it without a warning.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const committed = new Set(ChildProcess.execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" }).split("\n"))

describe("the packages' manifests", () => {
  it("every bin is a file the repository holds, executable", () => {
    const packagesDir = Path.join(root, "packages")
    const bins = Fs.readdirSync(packagesDir).flatMap((name) => {
      const manifest = Path.join(packagesDir, name, "package.json")
      if (!Fs.existsSync(manifest)) return []
      const { bin } = JSON.parse(Fs.readFileSync(manifest, "utf8")) as { readonly bin?: Record<string, string> }
      return Object.values(bin ?? {}).map((file) => Path.posix.join("packages", name, file))
    })
    assert.isNotEmpty(bins)
    for (const bin of bins) {
      assert.isTrue(committed.has(bin), `${bin} is not in the repository: a fresh clone's install cannot link it`)
      assert.isTrue((Fs.statSync(Path.join(root, bin)).mode & 0o111) !== 0, `${bin} is not executable`)
    }
  })
})
