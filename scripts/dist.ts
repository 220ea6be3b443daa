// `pnpm dist`: Kindling as a binary distribution, as Spark ships one — `dist/kindling-<version>-<platform>.tar.gz`,
// which a host unpacks and runs with nothing but Node.js 20.19 or later:
//
//   bin/kindling      the command (packages/cli/distribution/bin)
//   sbin/             the launch scripts (packages/cli/distribution/sbin)
//   conf/             templates of kindling-defaults.conf, kindling-env.sh and workers, and systemd units
//   lib/              the command's package with the built JavaScript of every package it runs and only their
//                     production dependencies (`pnpm deploy --prod`), and release.json (version, commit)
//   docs/, examples/, README.md
//
// The platform is in the name because one dependency is native: esbuild, which `kindling submit` bundles apps with.
// Builds first (`pnpm build`); `--keep` leaves the unpacked tree beside the tarball.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const distribution = Path.join(root, "packages", "cli", "distribution")
const out = Path.join(root, "dist")

const run = (command: string, args: ReadonlyArray<string>, cwd = root) => {
  const result = ChildProcess.spawnSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status ?? result.signal}):\n${result.stderr}`)
  }
  return result.stdout.trim()
}

const version = (JSON.parse(Fs.readFileSync(Path.join(root, "packages", "cli", "package.json"), "utf8")) as {
  readonly version: string
}).version
const platform = `${process.platform}-${process.arch}`
const name = `kindling-${version}-${platform}`
const stage = Path.join(out, name)

// Everything under `dir` whose name `drop` picks, removed.
const prune = (dir: string, drop: (name: string, isDirectory: boolean) => boolean) => {
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    if (entry.isSymbolicLink()) continue
    if (drop(entry.name, entry.isDirectory())) Fs.rmSync(path, { recursive: true, force: true })
    else if (entry.isDirectory()) prune(path, drop)
  }
}

const size = (path: string): number => {
  const stat = Fs.lstatSync(path)
  if (!stat.isDirectory()) return stat.isSymbolicLink() ? 0 : stat.size
  return Fs.readdirSync(path).reduce((total, entry) => total + size(Path.join(path, entry)), 0)
}

const main = () => {
  const started = performance.now()
  run(process.execPath, [Path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/build.ts"])
  Fs.rmSync(stage, { recursive: true, force: true })
  Fs.mkdirSync(stage, { recursive: true })

  // The command's package and exactly its production dependencies, each package with what it publishes (`files`).
  run("pnpm", ["--filter", "@kindling/cli", "deploy", "--legacy", "--prod", Path.join(stage, "lib")])
  const lib = Path.join(stage, "lib")
  // What no host runs: the TypeScript sources of Kindling's packages (a checkout's; the built modules' source maps
  // carry their text), the build's own records, and the distribution's templates inside the command's package.
  for (const kindling of [lib, ...packagesIn(Path.join(lib, "node_modules", ".pnpm"))]) {
    Fs.rmSync(Path.join(kindling, "src"), { recursive: true, force: true })
    Fs.rmSync(Path.join(kindling, "distribution"), { recursive: true, force: true })
  }
  prune(lib, (entry) => entry === ".js-built" || entry.endsWith(".tsbuildinfo"))
  const commit = run("git", ["rev-parse", "--short", "HEAD"])
  Fs.writeFileSync(
    Path.join(lib, "dist", "release.json"),
    JSON.stringify({ version, commit, built: new Date().toISOString() }, null, 2) + "\n"
  )

  for (const dir of ["bin", "sbin", "conf"]) {
    const from = Path.join(distribution, dir)
    if (Fs.existsSync(from)) Fs.cpSync(from, Path.join(stage, dir), { recursive: true })
  }
  Fs.cpSync(Path.join(root, "docs"), Path.join(stage, "docs"), { recursive: true })
  Fs.cpSync(Path.join(root, "examples"), Path.join(stage, "examples"), { recursive: true })
  Fs.copyFileSync(Path.join(root, "README.md"), Path.join(stage, "README.md"))

  const unpacked = size(stage)
  const tarball = Path.join(out, `${name}.tar.gz`)
  run("tar", ["-czf", tarball, "-C", out, name])
  if (!process.argv.includes("--keep")) Fs.rmSync(stage, { recursive: true, force: true })
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`
  console.log(
    `${Path.relative(root, tarball)}: ${mib(Fs.statSync(tarball).size)}, ${mib(unpacked)} unpacked (${version}, ` +
      `commit ${commit}, ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s)`
  )
}

// The directories of the @kindling packages pnpm laid out under `.pnpm` (`<store name>/node_modules/@kindling/x`).
const packagesIn = (store: string): Array<string> =>
  Fs.readdirSync(store).filter((entry) => entry.startsWith("@kindling+")).flatMap((entry) => {
    const scope = Path.join(store, entry, "node_modules", "@kindling")
    return Fs.readdirSync(scope).map((name) => Path.join(scope, name)).filter((dir) =>
      !Fs.lstatSync(dir).isSymbolicLink()
    )
  })

main()
