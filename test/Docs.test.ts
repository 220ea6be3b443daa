/**
 * The README and the pages of docs/ as a reader follows them: every relative link and image resolves (to a heading,
 * when it names one), every file under docs/ is linked from another page, every `pnpm` script and bench and every
 * `kindling` command they name exists (and the README names every script and bench), every configuration key they
 * name is one of docs/configuration.md's, the README's repository map holds the packages of docs/architecture.md in
 * their layers, its first commands are the two it promises, and every ```ts block type-checks against the packages —
 * or, when its first line names the file it shows, is that file (or, marked `(abridged)`, lines of it in order), the
 * file itself type-checked with the blocks.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))
const docsDir = Path.join(root, "docs")

interface Page {
  /** The page's path from the repository's root. */
  readonly path: string
  readonly text: string
}

const page = (path: string): Page => ({ path, text: Fs.readFileSync(Path.join(root, path), "utf8") })
const readme = page("README.md")
const docPages = Fs.readdirSync(docsDir).filter((name) => name.endsWith(".md")).map((name) => page(`docs/${name}`))
const pages = [readme, ...docPages]
// The pages `pnpm run docs` writes from the code (they say so): their words are the code's, which the generator's
// own tests check; here only their links are.
const written = pages.filter((p) => !/^Generated (from|by) .*`pnpm run docs`/m.test(p.text.slice(0, 500)))

interface Block {
  readonly lang: string
  readonly body: string
  /** The line of the opening fence, from 1. */
  readonly line: number
}

const fencedBlocks = (text: string): Array<Block> => {
  const blocks: Array<Block> = []
  let open: { lang: string; line: number; body: Array<string> } | undefined
  text.split("\n").forEach((line, index) => {
    if (open === undefined) {
      const fence = /^```(\S*)/.exec(line)
      if (fence !== null) open = { lang: fence[1]!, line: index + 1, body: [] }
    } else if (line.startsWith("```")) {
      blocks.push({ lang: open.lang, body: open.body.join("\n"), line: open.line })
      open = undefined
    } else open.body.push(line)
  })
  return blocks
}

// The page with its fenced blocks blanked, line for line, so that what is left is prose (with its code spans).
const prose = (text: string): string => {
  let inBlock = false
  return text.split("\n").map((line) => {
    if (line.startsWith("```")) {
      inBlock = !inBlock
      return ""
    }
    return inBlock ? "" : line
  }).join("\n")
}

// A code span: a run of backticks, then anything up to the same run (`` `a` `` and ``a `b` c`` alike).
const codeSpan = /(`+)([^`]|`(?!\1))*?\1/g
const codeSpans = (text: string): Array<string> =>
  [...prose(text).matchAll(codeSpan)].map((match) => match[0].replace(/^`+|`+$/g, ""))
// What a reader runs: the spans and the shell blocks.
const commandsText = (text: string): string =>
  [...codeSpans(text), ...fencedBlocks(text).filter((b) => ["sh", "bash", "shell"].includes(b.lang)).map((b) => b.body)]
    .join("\n")

const lineOf = (text: string, offset: number) => text.slice(0, offset).split("\n").length

interface Link {
  readonly target: string
  readonly line: number
}

// Inline links and images of the prose, not what code spans hold.
const links = (text: string): Array<Link> => {
  const outsideCode = prose(text).replace(codeSpan, (span) => span.replace(/[^\n]/g, " "))
  return [...outsideCode.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => ({
    target: match[1]!,
    line: lineOf(outsideCode, match.index)
  }))
}

/** A heading's anchor as GitHub makes it: lower case, punctuation and symbols gone, spaces as hyphens. */
const slug = (heading: string): string =>
  heading.trim().toLowerCase()
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

// Repeated headings get -1, -2, … as on GitHub.
const anchors = (text: string): Set<string> => {
  const found = new Set<string>()
  for (const match of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1]!)
    let anchor = base
    for (let n = 1; found.has(anchor); n++) anchor = `${base}-${n}`
    found.add(anchor)
  }
  return found
}

const external = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target)

/** Where each relative link of a page goes, as a path from the root, and what is wrong with it. */
const resolveLinks = (from: Page) =>
  links(from.text).filter((link) => !external(link.target)).map((link) => {
    const [rawPath, anchor] = link.target.split("#", 2) as [string, string | undefined]
    const path = rawPath === ""
      ? from.path
      : Path.relative(root, Path.resolve(root, Path.dirname(from.path), decodeURIComponent(rawPath)))
    const where = `${from.path}:${link.line}: ${link.target}`
    let problem: string | undefined
    if (rawPath !== "" && !Fs.existsSync(Path.join(root, path))) problem = `${where}: no such file`
    else if (anchor !== undefined && path.endsWith(".md")) {
      const text = path === from.path ? from.text : Fs.readFileSync(Path.join(root, path), "utf8")
      if (!anchors(text).has(anchor)) problem = `${where}: ${path} has no heading #${anchor}`
    }
    return { path, problem }
  })

const linkProblems = (from: Page): Array<string> => resolveLinks(from).flatMap(({ problem }) => problem ?? [])

// `pnpm build`, `pnpm -s build`, `pnpm run docs`, `pnpm bench tasks`: the script, and the word after it.
const pnpmCommand = /(?<![\w@/.-])pnpm(?:[ \t]+-{1,2}[\w-]+)*[ \t]+([a-z][\w:-]*)(?:[ \t]+([a-z][\w-]*))?/g
interface PnpmCommand {
  readonly script: string
  /** The word after the script: a bench's name. */
  readonly next: string | undefined
}

const pnpmCommands = (text: string): Array<PnpmCommand> =>
  [...commandsText(text).matchAll(pnpmCommand)].flatMap(([, first, second]): Array<PnpmCommand> => {
    if (first !== "run") return [{ script: first!, next: second }]
    return second === undefined ? [] : [{ script: second, next: undefined }]
  })

// pnpm's own commands, which are no scripts.
const pnpmBuiltIns = new Set(["install", "i", "add", "pack", "exec", "dlx", "deploy"])

const manifest = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")) as {
  readonly packageManager: string
  readonly scripts: Record<string, string>
}
const scripts = new Set(Object.keys(manifest.scripts))
// bench/run.ts's `const known = ["allocation", …]`.
const benchList = /const known = \[([^\]]*)\]/.exec(Fs.readFileSync(Path.join(root, "bench/run.ts"), "utf8"))![1]!
const benches = new Set([...benchList.matchAll(/"([a-z-]+)"/g)].map((match) => match[1]!))

const pnpmProblems = (from: Page): Array<string> =>
  pnpmCommands(from.text).flatMap(({ next, script }) => {
    if (pnpmBuiltIns.has(script)) return []
    if (!scripts.has(script)) return [`${from.path}: pnpm ${script}: no such script in package.json`]
    if (script === "bench" && next !== undefined && !benches.has(next)) {
      return [`${from.path}: pnpm bench ${next}: no such bench in bench/run.ts`]
    }
    return []
  })

// `kindling submit`, `bin/kindling master`, `npx kindling status`: the word after the command.
const kindlingCommands = (text: string): Array<string> =>
  [...commandsText(text).matchAll(/(?:(?<=bin\/)|(?<![\w.@/-]))kindling[ \t]+([a-z][\w-]*)/g)].map((match) => match[1]!)

// The commands as the CLI lists them (`  - master [--host text] …` under COMMANDS).
const subcommands = (help: string): Set<string> =>
  new Set([...help.slice(help.indexOf("COMMANDS")).matchAll(/^\s+- ([a-z][\w-]*)/gm)].map((match) => match[1]!))

const kindlingProblems = (from: Page, known: ReadonlySet<string>): Array<string> =>
  kindlingCommands(from.text).filter((command) => !known.has(command)).map((command) =>
    `${from.path}: kindling ${command}: no such command`
  )

// `kindling.worker.timeout`, not `org.kindling.…` (a class), nor `kindling.ssl.ui.*` (a family of keys).
const keysNamed = (text: string): Array<string> =>
  [...text.matchAll(/(?<![\w.])kindling(?:\.[A-Za-z0-9]+)+(\.\*)?/g)].flatMap((match) =>
    match[1] === undefined ? [match[0]] : []
  )

const configurationKeys = new Set(
  [...Fs.readFileSync(Path.join(docsDir, "configuration.md"), "utf8").matchAll(/^\| `(kindling\.[^`]+)` \|/gm)]
    .map((match) => match[1]!)
)

const keyProblems = (from: Page): Array<string> =>
  [...new Set(keysNamed(from.text))].filter((key) => !configurationKeys.has(key)).map((key) =>
    `${from.path}: ${key} is no key of docs/configuration.md`
  )

// --- The ```ts blocks ---

const compilerOptions = (() => {
  const base = ts.readConfigFile(Path.join(root, "tsconfig.base.json"), (file) => ts.sys.readFile(file))
  const { options } = ts.parseJsonConfigFileContent(base.config, ts.sys, root)
  // A snippet may declare what it shows and not use it.
  return { ...options, noEmit: true, noUnusedLocals: false, declaration: false, sourceMap: false }
})()

// `// examples/latency.ts (abridged); …`: the file a block shows.
const shownFile = (block: Block) => /^\/\/ ([\w./-]+\.(?:ts|mts|js|mjs))\b(.*)$/.exec(block.body.split("\n")[0]!)

// Code as compared: comments gone, whitespace gone, one entry per line that holds any.
const codeLines = (text: string): Array<string> =>
  text.split("\n").map((line) => line.replace(/(^|\s)\/\/(\s.*)?$/, "").replace(/\s+/g, "")).filter((line) =>
    line !== ""
  )

const excerptProblem = (where: string, block: Block, file: string, abridged: boolean): string | undefined => {
  const shown = codeLines(block.body.split("\n").slice(1).join("\n"))
  const source = codeLines(Fs.readFileSync(Path.join(root, file), "utf8"))
  if (!abridged) {
    return shown.join("\n") === source.join("\n")
      ? undefined
      : `${where}: differs from ${file} (mark it "(abridged)" if it shows only part of it)`
  }
  const whole = source.join("")
  let from = 0
  for (const line of shown) {
    const at = whole.indexOf(line, from)
    if (at < 0) return `${where}: ${file} has no ${JSON.stringify(line)} after the lines before it`
    from = at + line.length
  }
  return undefined
}

// The packages' and libraries' files, parsed once for every program made here.
const parsedFiles = new Map<string, ts.SourceFile>()

/** Type-checks the blocks of a page (in memory, beside the page's root) and the files they show. */
const typeProblems = (from: Page): Array<string> => {
  const problems: Array<string> = []
  const snippets = new Map<string, { readonly text: string; readonly where: string }>()
  const shown = new Set<string>()
  fencedBlocks(from.text).filter((block) => block.lang === "ts").forEach((block) => {
    const where = `${from.path}:${block.line}`
    const file = shownFile(block)
    if (file === null) {
      // Beside the repository's tests, so `@kindling/*` resolves through the workspace as theirs do.
      snippets.set(Path.join(root, "test", `${from.path.replace(/\W/g, "-")}-${block.line}.ts`), {
        text: block.body,
        where
      })
    } else if (!Fs.existsSync(Path.join(root, file[1]!))) problems.push(`${where}: shows ${file[1]}, which is no file`)
    else {
      shown.add(Path.join(root, file[1]!))
      const problem = excerptProblem(where, block, file[1]!, file[2]!.includes("(abridged)"))
      if (problem !== undefined) problems.push(problem)
    }
  })
  const host = ts.createCompilerHost(compilerOptions)
  const readSource = host.getSourceFile.bind(host)
  const exists = host.fileExists.bind(host)
  host.getSourceFile = (file, language, ...rest) => {
    const snippet = snippets.get(file)
    if (snippet !== undefined) return ts.createSourceFile(file, snippet.text, language)
    if (!parsedFiles.has(file)) {
      const source = readSource(file, language, ...rest)
      if (source === undefined) return undefined
      parsedFiles.set(file, source)
    }
    return parsedFiles.get(file)
  }
  host.fileExists = (file) => snippets.has(file) || exists(file)
  const program = ts.createProgram([...snippets.keys(), ...shown], compilerOptions, host)
  for (const file of [...snippets.keys(), ...shown]) {
    const source = program.getSourceFile(file)!
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
      const where = snippets.get(file)?.where ?? Path.relative(root, file)
      problems.push(
        `${where}: line ${line + 1} of the block: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`
      )
    }
  }
  return problems
}

describe("the README and docs/", () => {
  it("every relative link and image resolves, to a heading when it names one", () => {
    assert.deepStrictEqual(pages.flatMap(linkProblems), [])
  })

  it("every file under docs/ is linked from the README or another page", () => {
    const filesUnder = (dir: string): Array<string> =>
      Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? filesUnder(Path.join(dir, entry.name))
          : [Path.relative(root, Path.join(dir, entry.name))]
      )
    const linked = new Set(
      pages.flatMap((from) => resolveLinks(from).filter(({ path }) => path !== from.path).map(({ path }) => path))
    )
    assert.deepStrictEqual(filesUnder(docsDir).filter((file) => !linked.has(file)), [])
  })

  it("every pnpm script and bench named exists, and the README names every one", () => {
    assert.deepStrictEqual(written.flatMap(pnpmProblems), [])
    const named = pnpmCommands(readme.text)
    assert.deepStrictEqual([...scripts].filter((script) => !named.some((c) => c.script === script)), [])
    assert.deepStrictEqual(
      [...benches].filter((bench) => !named.some((c) => c.script === "bench" && c.next === bench)),
      []
    )
  })

  it("every kindling command named is one of `kindling --help`", () => {
    const help = ChildProcess.execFileSync(Path.join(root, "bin", "kindling"), ["--help"], { encoding: "utf8" })
    const known = subcommands(help)
    assert.includeMembers([...known], ["master", "worker", "submit", "status", "kill"])
    assert.deepStrictEqual(written.flatMap((from) => kindlingProblems(from, known)), [])
  }, 120_000)

  it("every configuration key named is one of docs/configuration.md", () => {
    assert.isBelow(written.length, pages.length)
    assert.deepStrictEqual(written.flatMap(keyProblems), [])
  })

  it("the README's first commands install and run the main job, then the tests", () => {
    const [first] = fencedBlocks(readme.text)
    assert.deepStrictEqual(first?.body.split("\n"), [
      `npm i -g ${manifest.packageManager} && pnpm install && pnpm demo`,
      "pnpm test"
    ])
  })

  it("the README's repository map holds every package of docs/architecture.md, in its layer", () => {
    const architecture = Fs.readFileSync(Path.join(docsDir, "architecture.md"), "utf8")
    const layered = [...architecture.matchAll(/^\| (\d+) \| `(@kindling\/[a-z]+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`)
    const mapped = [...readme.text.matchAll(/^\| (\d+) \| \[`(@kindling\/([a-z]+))`\]\(packages\/([a-z]+)\) \|/gm)]
      .map((m) => m[3] === m[4] ? `${m[1]} ${m[2]}` : `${m[2]} links packages/${m[4]}`)
    assert.isAbove(layered.length, 0)
    assert.deepStrictEqual(mapped.sort(), layered.sort())
  })

  it("every ts block of the README type-checks, or is the file it shows", () => {
    assert.isAbove(fencedBlocks(readme.text).filter((block) => block.lang === "ts").length, 0)
    assert.deepStrictEqual(typeProblems(readme), [])
  }, 120_000)

  it("catches what it is there to catch", () => {
    // The checks above pass on the real pages; these make sure they could fail.
    const broken: Page = {
      path: "docs/broken.md",
      text: [
        "# A page",
        "[fine](../README.md#write-an-app) [here](#a-page) [gone](missing.md) [anchor](architecture.md#nowhere)",
        "`[not a link](nowhere.md)` ![image](perf/gone.svg)",
        "```sh",
        "[nor this](nowhere.md)",
        "pnpm bench nope && pnpm run nothing && pnpm -s build && kindling submit && bin/kindling execute",
        "```",
        "Keys: `kindling.worker.timeout`, `kindling.worker.timeoutt`, `kindling.ssl.ui.*`, org.kindling.scheduler.X."
      ].join("\n")
    }
    assert.deepStrictEqual(linkProblems(broken), [
      "docs/broken.md:2: missing.md: no such file",
      "docs/broken.md:2: architecture.md#nowhere: docs/architecture.md has no heading #nowhere",
      "docs/broken.md:3: perf/gone.svg: no such file"
    ])
    assert.deepStrictEqual(pnpmProblems(broken), [
      "docs/broken.md: pnpm bench nope: no such bench in bench/run.ts",
      "docs/broken.md: pnpm nothing: no such script in package.json"
    ])
    assert.deepStrictEqual(kindlingProblems(broken, new Set(["submit"])), [
      "docs/broken.md: kindling execute: no such command"
    ])
    assert.deepStrictEqual(keyProblems(broken), [
      "docs/broken.md: kindling.worker.timeoutt is no key of docs/configuration.md"
    ])
    assert.strictEqual(
      slug("Data in files: CSV, JSON lines, Parquet, and object storage"),
      "data-in-files-csv-json-lines-parquet-and-object-storage"
    )
    assert.strictEqual(slug("Worker → Master"), "worker--master")
    assert.strictEqual(slug("`kindling.x` and [a link](y.md)"), "kindlingx-and-a-link")
  })

  it("catches a block that does not type-check, or that is no longer the file it shows", () => {
    const blocks: Page = {
      path: "docs/blocks.md",
      text: [
        "```ts",
        "import { App } from \"@kindling/app\"",
        "const n: number = App.make",
        "```",
        "```ts",
        "// examples/line-count.ts",
        "import { App } from \"@kindling/app\"",
        "```",
        "```ts",
        "// examples/latency.ts (abridged)",
        "const isSlow = (entry: Entry) => entry.millis > 200",
        "const logLine = (i: number) => i",
        "```"
      ].join("\n")
    }
    const problems = typeProblems(blocks)
    assert.strictEqual(problems.length, 3, problems.join("\n"))
    assert.match(problems[0]!, /^docs\/blocks\.md:5: differs from examples\/line-count\.ts/)
    assert.match(problems[1]!, /^docs\/blocks\.md:9: examples\/latency\.ts has no "constlogLine=\(i:number\)=>i"/)
    assert.match(problems[2]!, /^docs\/blocks\.md:1: line 2 of the block: Type .* is not assignable to type 'number'/)
  }, 120_000)
})
