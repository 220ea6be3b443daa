// Which Kindling this is, as `kindling --version` and `--help` say it, from wherever the command's modules are:
// the built modules (dist/), the commands' bundle (dist/commands/), a distribution's lib/dist/ with release.json.
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Release from "../src/Release.js"

const tree = (files: Record<string, string>): string => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-release-"))
  for (const [path, text] of Object.entries(files)) {
    Fs.mkdirSync(Path.dirname(Path.join(root, path)), { recursive: true })
    Fs.writeFileSync(Path.join(root, path), text)
  }
  return root
}

describe("Release", () => {
  it("a distribution's release.json names the version and the commit, from the bundle's folder too", () => {
    const root = tree({
      "lib/package.json": JSON.stringify({ version: "0.0.9" }),
      "lib/dist/release.json": JSON.stringify({ version: "0.1.0", commit: "abc1234" }),
      "lib/dist/commands/commands.js": ""
    })
    for (const dir of ["lib/dist", "lib/dist/commands"]) {
      assert.deepStrictEqual(Release.of(Path.join(root, dir)), { version: "0.1.0", commit: "abc1234" }, dir)
    }
  })

  it("a checkout's package.json names the version, git's files the commit, through a branch or packed refs", () => {
    const commit = "0123456789abcdef0123456789abcdef01234567"
    const loose = tree({
      "package.json": JSON.stringify({ version: "0.2.0" }),
      ".git/HEAD": "ref: refs/heads/main\n",
      [".git/refs/heads/main"]: `${commit}\n`,
      "dist/commands/commands.js": ""
    })
    assert.deepStrictEqual(Release.of(Path.join(loose, "dist", "commands")), { version: "0.2.0", commit: "0123456" })
    const packed = tree({
      "package.json": JSON.stringify({ version: "0.2.0" }),
      ".git/HEAD": "ref: refs/heads/main\n",
      ".git/packed-refs": `# pack-refs\n${commit} refs/heads/main\n`,
      "dist/x.js": ""
    })
    assert.deepStrictEqual(Release.of(Path.join(packed, "dist")), { version: "0.2.0", commit: "0123456" })
    assert.strictEqual(Release.describe(Release.of(Path.join(packed, "dist"))), "0.2.0 (commit 0123456)")
  })

  it("without git, the version alone", () => {
    const root = tree({ "package.json": JSON.stringify({ version: "0.3.0" }), "dist/x.js": "" })
    assert.strictEqual(Release.describe(Release.of(Path.join(root, "dist"))), "0.3.0")
  })
})
