/**
 * Scratch directories for nodes and commands: a fresh directory under the machine's temporary one, removed with
 * everything in it when the scope closes (a removal that fails is logged: `DiskOperations.removing`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as DiskOperations from "./DiskOperations.js"

/**
 * A fresh directory whose name starts with `prefix`, removed when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))),
    (dir) => DiskOperations.removing(dir, () => Fs.rmSync(dir, { recursive: true, force: true }))
  )
