// `pnpm test:packed`: Kindling as a user outside this repository gets it. Every package is packed (`pnpm pack`, which
// writes the versions its workspace and catalog references stand for), the tarballs are installed with npm into a
// fresh project in the temporary directory, with the npm registry's dependencies (and TypeScript and Node's types, as
// a TypeScript project has them), and there an app of two modules — a class, a helper module — is type-checked
// against the packed declarations, libraries' included (what an editor shows), and submitted
// with `npx kindling submit` to local[2] and to local-cluster. Needs `pnpm build` first. Exits 1 on any failure.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-packed-"))
const tarballs = Path.join(work, "tarballs")
const project = Path.join(work, "project")

const run = (command: string, args: ReadonlyArray<string>, cwd: string): string => {
  const result = ChildProcess.spawnSync(command, args, { cwd, encoding: "utf8", timeout: 600_000 })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status ?? result.signal}):\n${result.stderr}`)
  }
  return result.stdout
}

// The versions this repository builds with, for the project's own TypeScript and Node types.
const versionOf = (name: string) =>
  (JSON.parse(Fs.readFileSync(Path.join(root, "node_modules", name, "package.json"), "utf8")) as {
    readonly version: string
  }).version

const app = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
import { words } from "./words.js"

class Tally {
  constructor(readonly count: number) {}
  plus(other: Tally): Tally {
    return new Tally(this.count + other.count)
  }
}
App.registerClass(Tally)

export default App.make(([text = ""]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const minimum = 2
    const counts = yield* kc.parallelize(text.split("/"), 2)
      .flatMap(words)
      .filter((word) => word.length >= minimum)
      .map((word) => [word, new Tally(1)] as const)
      .reduceByKey((a, b) => a.plus(b))
      .collect()
    const sorted = counts.map(([word, tally]) => \`\${word}=\${tally.count}\`).sort()
    yield* Console.log(sorted.join(" "))
  }))
`

const words =
  `export const words = (line: string): Array<string> => line.toLowerCase().split(/\\W+/).filter((w) => w !== "")
`

const main = () => {
  Fs.mkdirSync(tarballs)
  Fs.mkdirSync(project)
  const packages = Fs.readdirSync(Path.join(root, "packages")).sort()
  for (const name of packages) {
    run("pnpm", ["pack", "--pack-destination", tarballs], Path.join(root, "packages", name))
  }
  Fs.writeFileSync(
    Path.join(project, "package.json"),
    JSON.stringify({ name: "packed-check", private: true, type: "module" }, null, 2)
  )
  Fs.writeFileSync(Path.join(project, "app.ts"), app)
  Fs.writeFileSync(Path.join(project, "words.ts"), words)
  Fs.writeFileSync(
    Path.join(project, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"]
        },
        include: ["app.ts", "words.ts"]
      },
      null,
      2
    )
  )
  const files = Fs.readdirSync(tarballs).map((file) => Path.join(tarballs, file))
  console.log(`Installing ${files.length} packed packages into ${project}…`)
  const tools = [`typescript@${versionOf("typescript")}`, `@types/node@${versionOf("@types/node")}`]
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...files, ...tools], project)
  // What an editor shows: the app type-checks against the packed declarations, libraries included.
  run("npx", ["tsc", "-p", "."], project)
  console.log("The app type-checks against the packed declarations.")
  const text = "the cat/The dog and the cat/a dog"
  const expected = "and=1 cat=2 dog=2 the=3"
  for (const master of ["local[2]", "local-cluster[2,1,1024]"]) {
    const output = run("npx", ["kindling", "submit", "--master", master, "app.ts", text], project).trim()
    if (output !== expected) throw new Error(`On ${master} the app printed ${JSON.stringify(output)}, not ${expected}`)
    console.log(`npx kindling submit --master ${master} app.ts: ${output}`)
  }
}

try {
  main()
  Fs.rmSync(work, { recursive: true, force: true })
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  console.error(`(left in ${work})`)
  process.exit(1)
}
