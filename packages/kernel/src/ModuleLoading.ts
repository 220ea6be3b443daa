/**
 * How this process loads its modules, for the processes and threads it starts: a role started from the
 * TypeScript sources (in development and tests, through a loader such as tsx and the `@kindling/source` export
 * condition) starts its children the same way; one started from its build passes nothing.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { SHARE_ENV, type TransferListItem, Worker, type WorkerOptions } from "node:worker_threads"

const loading = /^--(import|require|loader|experimental-loader|conditions)$/
const loadingWithValue = /^--(import|require|loader|experimental-loader|conditions)=/

/**
 * The flags of this process that decide how modules load — `--import`, `--require`, `--loader`,
 * `--conditions` and their short forms, with their values — and nothing else (a memory limit, say, is the
 * child's own). Specifiers are passed on as they are, so they must be absolute for a child in another directory.
 *
 * @since 0.1.0
 */
export const flags = (argv: ReadonlyArray<string> = process.execArgv): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    if (loading.test(flag) || flag === "-r" || flag === "-C") found.push(flag, argv[++i] ?? "")
    else if (loadingWithValue.test(flag)) found.push(flag)
  }
  return found
}

// In development and tests a package runs from its TypeScript sources, which a thread cannot load by itself: it
// first registers tsx's loader (found from here, where the workspace has it), and resolves packages to their
// sources as its parent does.
const boot = `const { workerData } = require("node:worker_threads")
import(workerData.__loader).then((tsx) => tsx.register()).then(() => import(workerData.__entry))`

// tsx's ESM entry, read off its package manifest (resolving it as `require` would gives the CommonJS one).
const tsxLoader = (): string => {
  const manifestPath = createRequire(import.meta.url).resolve("tsx/package.json")
  const manifest = JSON.parse(Fs.readFileSync(manifestPath, "utf8")) as {
    readonly exports: Record<string, { readonly import: { readonly default: string } }>
  }
  return pathToFileURL(Path.join(Path.dirname(manifestPath), manifest.exports["./esm/api"]!.import.default)).href
}

/**
 * Starts a thread from the module `name` beside the caller (`from` is the caller's `import.meta.url`): its
 * `name.js` when the caller runs built, its `name.ts` through tsx when the caller runs from its sources. The
 * thread loads modules as this process does (`flags()`); `workerData` must not use the keys `__loader` and
 * `__entry`. `transferList` names what `workerData` holds that is handed over rather than copied (a
 * `MessagePort`); with `shareEnvironment` the thread sees this process's environment as it changes (Node's
 * `SHARE_ENV`) rather than a copy of it as it is now.
 *
 * @since 0.1.0
 */
export const thread = (
  from: string,
  name: string,
  workerData: Record<string, unknown> = {},
  options: { readonly transferList?: ReadonlyArray<Transferable>; readonly shareEnvironment?: boolean } = {}
): Worker => {
  const fromSources = from.endsWith(".ts")
  const entry = new URL(`./${name}.${fromSources ? "ts" : "js"}`, from)
  const common: Pick<WorkerOptions, "transferList" | "env"> = {
    transferList: [...options.transferList ?? []] as Array<TransferListItem>,
    ...(options.shareEnvironment === true ? { env: SHARE_ENV } : {})
  }
  return fromSources
    ? new Worker(boot, {
      eval: true,
      workerData: { ...workerData, __entry: entry.href, __loader: tsxLoader() },
      execArgv: [...flags(), "--conditions=@kindling/source"],
      ...common
    })
    : new Worker(entry, { workerData, execArgv: [...flags()], ...common })
}
