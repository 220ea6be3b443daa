import { assert, describe, it } from "@effect/vitest"
import { EffectImports } from "@kindling/cli"
import { createRequire } from "node:module"
import * as Path from "node:path"

const modules = EffectImports.modulesOf(Path.dirname(createRequire(import.meta.url).resolve("effect/package.json")))

describe("an app's imports of effect's index", () => {
  it("are made imports of the modules they name, each line where it was", () => {
    const source = [
      `import { Console, Effect as E, pipe } from "effect"`,
      `import { Schema } from 'effect';`,
      `import {`,
      `  Stream,`,
      `  identity as id,`,
      `} from "effect"`,
      `const x = 1`
    ].join("\n")
    assert.strictEqual(
      EffectImports.rewrite(source, modules),
      [
        `import * as Console from "effect/Console"; import * as E from "effect/Effect"; ` +
        `import { pipe } from "effect/Function";`,
        `import * as Schema from "effect/Schema";`,
        `import * as Stream from "effect/Stream"; import { identity as id } from "effect/Function";`,
        `const x = 1`
      ].join("\n")
    )
  })

  it("are left as they are when a name is not one it knows, or is type-only", () => {
    for (
      const source of [
        `import { Effect, NotAModule } from "effect"`,
        `import { type Context, Effect } from "effect"`,
        `import type { Effect } from "effect"`,
        `import * as effect from "effect"`,
        `import { Effect } from "effect/Effect"`
      ]
    ) {
      assert.strictEqual(EffectImports.rewrite(source, modules), source)
    }
  })

  it("knows effect's modules from its manifest", () => {
    for (const name of ["Effect", "Schema", "Stream", "Function", "FastCheck"]) assert.isTrue(modules.has(name), name)
  })
})
