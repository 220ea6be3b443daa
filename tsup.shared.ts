import { defineConfig, type Options } from "tsup"

// Every package builds the same way: ESM for Node 20 with declarations; dependencies stay external.
export const packageConfig = (entry: Array<string>, overrides: Options = {}) =>
  defineConfig({
    entry: entry.map((name) => `src/${name}.ts`),
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: true,
    ...overrides
  })
