// `pnpm build`: every package's JavaScript (esbuild, through tsup) and type declarations (`tsc -b`), each redone
// only when what it is made from changed — a package's sources, its build settings, or a package it depends on.
// Declarations come from the TypeScript compiler's own incremental build over the packages' project references;
// JavaScript is rebuilt for the packages whose sources are newer than their last build, then for those depending on
// them (a thread's standalone bundle holds its dependencies' code). Nothing is cleaned first: `--clean` does that.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const packagesDir = Path.join(root, "packages")
const stampName = ".js-built"

interface Package {
  readonly name: string
  readonly dir: string
  readonly dependencies: ReadonlyArray<string>
}

const packages: ReadonlyArray<Package> = Fs.readdirSync(packagesDir).sort().map((name) => {
  const dir = Path.join(packagesDir, name)
  const manifest = JSON.parse(Fs.readFileSync(Path.join(dir, "package.json"), "utf8")) as Record<
    string,
    Record<string, string> | undefined
  >
  const dependencies = Object.keys({ ...manifest["dependencies"], ...manifest["peerDependencies"] })
    .filter((dependency) => dependency.startsWith("@kindling/"))
    .map((dependency) => dependency.slice("@kindling/".length))
  return { name, dir, dependencies }
})

// Dependencies before the packages that need them.
const ordered = (): Array<Package> => {
  const done = new Set<string>()
  const order: Array<Package> = []
  const visit = (pkg: Package) => {
    if (done.has(pkg.name)) return
    done.add(pkg.name)
    for (const dependency of pkg.dependencies) visit(packages.find((other) => other.name === dependency)!)
    order.push(pkg)
  }
  packages.forEach(visit)
  return order
}

const newest = (path: string): number => {
  const stat = Fs.statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Fs.readdirSync(path).reduce((latest, entry) => Math.max(latest, newest(Path.join(path, entry))), 0)
}

const stampOf = (pkg: Package): number => {
  try {
    return Fs.statSync(Path.join(pkg.dir, "dist", stampName)).mtimeMs
  } catch {
    return 0
  }
}

const inputsOf = (pkg: Package): number =>
  Math.max(
    newest(Path.join(pkg.dir, "src")),
    newest(Path.join(pkg.dir, "package.json")),
    newest(Path.join(pkg.dir, "tsup.config.ts")),
    newest(Path.join(root, "tsup.shared.ts"))
  )

// A process of its own, started in the package's folder: exactly the package's own `pnpm build`.
const run = (args: ReadonlyArray<string>, cwd: string, output: "inherit" | "ignore") =>
  new Promise<void>((resolve, reject) => {
    const child = ChildProcess.spawn(process.execPath, args, { cwd, stdio: ["ignore", output, "inherit"] })
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(" ")} exited with ${code}`))))
  })

const buildJavaScript = async (pkg: Package) => {
  // What tsup says of a build that succeeds is a list of files: only its errors are shown.
  await run([Path.join(root, "node_modules", "tsup", "dist", "cli-default.js")], pkg.dir, "ignore")
  Fs.writeFileSync(Path.join(pkg.dir, "dist", stampName), "")
}

const declarations = () =>
  run(
    [Path.join(root, "node_modules", "typescript", "bin", "tsc"), "-b", Path.join(root, "tsconfig.build.json")],
    root,
    "inherit"
  )

const main = async () => {
  const started = performance.now()
  if (process.argv.includes("--clean")) {
    for (const pkg of packages) Fs.rmSync(Path.join(pkg.dir, "dist"), { recursive: true, force: true })
  }
  // The declarations build alongside: tsc has its own process and its own record of what is up to date.
  const types = declarations()
  const built = new Map<string, number>()
  const rebuilt: Array<string> = []
  for (const pkg of ordered()) {
    const stamp = stampOf(pkg)
    const stale = inputsOf(pkg) > stamp || pkg.dependencies.some((dependency) => built.get(dependency)! > stamp)
    if (stale) {
      await buildJavaScript(pkg)
      rebuilt.push(pkg.name)
    }
    built.set(pkg.name, stampOf(pkg))
  }
  await types
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  console.log(
    rebuilt.length === 0
      ? `Everything was up to date (${seconds} s).`
      : `Built ${rebuilt.join(", ")} (${seconds} s).`
  )
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
