import * as Esbuild from "esbuild"
import { defineConfig, type Options } from "tsup"

// Every package's JavaScript builds the same way: ESM for Node 20; dependencies stay external. Its declarations are
// the TypeScript compiler's (`tsc -b tsconfig.build.json`, incremental), written into `dist` beside it: a build
// empties `dist` of the last one's JavaScript (its chunks are named by their content) and keeps them, and the
// compiler's record of them. (tsup's `clean` list names what to keep.)
export const packageConfig = (entry: Array<string>, overrides: Options = {}) =>
  defineConfig({
    entry: entry.map((name) => `src/${name}.ts`),
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: true,
    clean: ["!**/*.d.ts", "!**/*.d.ts.map", "!.tsbuildinfo"],
    splitting: true,
    ...overrides
  })

/**
 * Once built, each of these entries is bundled into `dist/<name>.js`, one file with everything it imports:
 * a process or thread that starts from it reads and compiles one file rather than hundreds of modules (Node 20 has
 * no compile cache to make those cheap). Only entries that share no objects with an app's artifact may be bundled —
 * the artifact imports `effect` and `@kindling/*` from the installation, and a second copy of them in the same
 * thread would not be the same module.
 *
 * An entry is a name (`src/<name>.ts` into `dist/<name>.js`) or `[source, bundle]` names. With `fromSources`, the
 * `@kindling/*` packages are read from their sources rather than their builds: a package's build is a few large
 * files, each kept whole once anything in it is used, where its sources let the bundle leave out every module
 * nothing reaches. `external` names what must stay a package (what has a native binary beside it, say).
 * `leftOut` names modules the entry loads lazily (`import("./X.js")`) that the bundle never needs, because whoever
 * starts it sends the work that would load them elsewhere: they are left out, and loading one fails loudly.
 * With `splitting`, the bundle is `dist/<name>/<name>.js` and what it loads lazily are files beside it, read only
 * when loaded: the entry compiles only what it needs at once.
 */
export const standalone = (
  entries: Array<string | readonly [string, string]>,
  options: {
    readonly fromSources?: boolean
    readonly external?: ReadonlyArray<string>
    readonly leftOut?: ReadonlyArray<string>
    readonly splitting?: boolean
  } = {}
): NonNullable<Options["onSuccess"]> =>
async () => {
  for (const entry of entries) {
    const [source, bundle] = typeof entry === "string" ? [entry, entry] : entry
    await Esbuild.build({
      ...(options.splitting === true
        ? { entryPoints: { [bundle]: `src/${source}.ts` }, outdir: `dist/${bundle}`, splitting: true }
        : { entryPoints: [`src/${source}.ts`], outfile: `dist/${bundle}.js` }),
      allowOverwrite: true,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      sourcemap: true,
      logLevel: "warning",
      plugins: [leaveOut(bundle, options.leftOut ?? [])],
      ...(options.fromSources === true ? { conditions: ["@kindling/source"] } : {}),
      // Zstandard's compressor loads its WebAssembly from beside its own module: it stays a package.
      external: ["@bokuweb/zstd-wasm", ...(options.external ?? [])],
      // The packages' builds import their shared chunks bare, and declare themselves free of side effects: true.
      logOverride: { "ignored-bare-import": "silent" },
      // Bundled CommonJS dependencies may call `require`: give them one.
      banner: {
        js: "import { createRequire as __kindlingRequire } from 'node:module'; " +
          "const require = __kindlingRequire(import.meta.url);"
      }
    })
  }
}

// A lazily loaded module that the bundle leaves out becomes one whose loading throws, naming it.
const leaveOut = (bundle: string, modules: ReadonlyArray<string>): Esbuild.Plugin => ({
  name: "leave-out",
  setup(build) {
    build.onResolve(
      { filter: /.*/ },
      (args) =>
        args.kind === "dynamic-import" && modules.includes(args.path)
          ? { path: args.path, namespace: "left-out" }
          : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "left-out" }, (args) => ({
      contents: `throw new Error(${
        JSON.stringify(`${args.path} is not in dist/${bundle}.js: whatever loads it must run unbundled`)
      })`,
      loader: "js"
    }))
  }
})
