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
 */
export const standalone = (entries: Array<string>): NonNullable<Options["onSuccess"]> => async () => {
  for (const name of entries) {
    await Esbuild.build({
      entryPoints: [`src/${name}.ts`],
      outfile: `dist/${name}.js`,
      allowOverwrite: true,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      sourcemap: true,
      logLevel: "warning",
      // Zstandard's compressor loads its WebAssembly from beside its own module: it stays a package.
      external: ["@bokuweb/zstd-wasm"],
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
