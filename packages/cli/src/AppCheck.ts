/**
 * `kindling submit --check`: the app type-checked before anything starts, as an editor with Effect's language
 * service shows it — TypeScript's errors and the diagnostics of `@effect/language-service`, which catch what
 * type-checks and still does nothing, an Effect made and never run (a forgotten `yield*`: `floatingEffect`) among
 * them. Bundling only strips types, so without it a type error is found when the code runs, if ever.
 *
 * TypeScript and the language service are the app project's own, as its editor uses them (resolved from the app's
 * folder), else those beside Kindling; the options are those of the app's nearest `tsconfig.json` (with its
 * `@effect/language-service` plugin's settings), type-checking only, or TypeScript's strict defaults for modules
 * when it has none. The app's own files are checked, not its dependencies'.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import * as Path from "node:path"
import type * as Ts from "typescript"

/**
 * The app does not type-check: `errors` of its diagnostics (printed on stderr, each as `file:line:col …`) are
 * errors. Or the checker could not run (`reason`).
 *
 * @since 0.1.0
 * @category errors
 */
export class AppCheckFailed extends Data.TaggedError("AppCheckFailed")<{
  readonly app: string
  readonly reason: string
}> {
  override get message() {
    return `${this.app} was not submitted: ${this.reason}`
  }
}

// The app project's module, else Kindling's own.
const load = <A>(app: string, specifier: string): A | undefined => {
  for (const from of [Path.resolve(app), import.meta.filename]) {
    try {
      return createRequire(from)(specifier) as A
    } catch {
      // not there: the next
    }
  }
  return undefined
}

type LanguageServicePlugin = (modules: { readonly typescript: typeof Ts }) => {
  readonly create: (info: {
    readonly languageService: Ts.LanguageService
    readonly languageServiceHost: Ts.LanguageServiceHost
    readonly config: unknown
    readonly project: { readonly log: (message: string) => void }
  }) => Ts.LanguageService
}

const pluginName = "@effect/language-service"

// The compiler options of the app's project for a check: its tsconfig's, with nothing emitted (a composite
// project's `rootDir` would refuse a file outside it), and the plugin's settings.
const projectOptions = (ts: typeof Ts, app: string) => {
  const defaults: Ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    types: ["node"]
  }
  const file = ts.findConfigFile(Path.dirname(Path.resolve(app)), ts.sys.fileExists)
  const parsed = file === undefined ? undefined : ts.getParsedCommandLineOfConfigFile(file, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => undefined
  })
  const { outDir: _outDir, rootDir: _rootDir, tsBuildInfoFile: _tsBuildInfoFile, ...own } = parsed?.options ?? defaults
  const options: Ts.CompilerOptions = {
    ...own,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    declarationMap: false,
    emitDeclarationOnly: false
  }
  const plugins = (options.plugins ?? []) as ReadonlyArray<{ readonly name?: string }>
  const plugin = plugins.find((entry) => entry.name === pluginName) ?? {}
  return { options, plugin, configErrors: parsed?.errors ?? [] }
}

// A diagnostic as tsc writes it without colours, the place first: `app.ts:6:5 error TS2322: …`; the language
// service's by their rule (`error effect(floatingEffect): …`), which it writes after the message.
const format = (ts: typeof Ts, diagnostic: Ts.Diagnostic): string => {
  const category = ts.DiagnosticCategory[diagnostic.category].toLowerCase()
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")
  const rule = diagnostic.source === "effect" ? /\s+(effect\(\w+\))$/.exec(message) : null
  const text = rule === null
    ? `${category} TS${diagnostic.code}: ${message}`
    : `${category} ${rule[1]}: ${message.slice(0, rule.index)}`
  if (diagnostic.file === undefined || diagnostic.start === undefined) return text
  const { character, line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
  return `${Path.relative(process.cwd(), diagnostic.file.fileName)}:${line + 1}:${character + 1} ${text}`
}

/**
 * Type-checks `app` with TypeScript and the Effect language service; prints each diagnostic of its own files (errors
 * and warnings) on stderr, and fails if any is an error.
 *
 * @since 0.1.0
 * @category running
 */
export const check = (app: string): Effect.Effect<void, AppCheckFailed> =>
  Effect.gen(function*() {
    const ts = load<typeof Ts>(app, "typescript")
    // The module itself: the package's `main` names a file it does not have, which Node warns of.
    const plugin = load<LanguageServicePlugin>(app, `${pluginName}/index.js`)
    if (ts === undefined || plugin === undefined) {
      return yield* new AppCheckFailed({
        app,
        reason: `--check needs typescript and ${pluginName} in the app's project (npm i -D typescript ` +
          `${pluginName}); neither is installed with Kindling`
      })
    }
    const { configErrors, options, plugin: settings } = projectOptions(ts, app)
    const file = Path.resolve(app)
    const host: Ts.LanguageServiceHost = {
      getScriptFileNames: () => [file],
      getScriptVersion: () => "0",
      getScriptSnapshot: (name) => {
        const text = ts.sys.readFile(name)
        return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text)
      },
      getCurrentDirectory: () => process.cwd(),
      getCompilationSettings: () => options,
      getDefaultLibFileName: ts.getDefaultLibFilePath,
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
      realpath: ts.sys.realpath!
    }
    const plain = ts.createLanguageService(host, ts.createDocumentRegistry())
    const service = plugin({ typescript: ts }).create({
      languageService: plain,
      languageServiceHost: host,
      config: settings,
      project: { log: () => undefined }
    })
    const program = service.getProgram()!
    const own = program.getSourceFiles().filter((source) =>
      !source.isDeclarationFile && !program.isSourceFileFromExternalLibrary(source) &&
      !source.fileName.includes("/node_modules/")
    )
    const diagnostics = [
      ...configErrors,
      ...program.getOptionsDiagnostics(),
      ...own.flatMap((source) => [
        ...service.getSyntacticDiagnostics(source.fileName),
        ...service.getSemanticDiagnostics(source.fileName)
      ])
    ].filter((diagnostic) =>
      diagnostic.category === ts.DiagnosticCategory.Error || diagnostic.category === ts.DiagnosticCategory.Warning
    )
    for (const diagnostic of diagnostics) process.stderr.write(`${format(ts, diagnostic)}\n`)
    const errors = diagnostics.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error).length
    if (errors > 0) {
      return yield* new AppCheckFailed({
        app,
        reason: `${errors} error${errors === 1 ? "" : "s"} above (kindling submit --check)`
      })
    }
  })
