// docs/protocol.md and docs/protocol.schema.json as `pnpm run docs` renders them: here rather than in
// @kindling/protocol's tests, since the reference documents the inputs of every role's core as well.
import { assert, describe, it } from "@effect/vitest"
import { AppClientInputs, DriverInputs } from "@kindling/driver"
import { ExecutorInputs } from "@kindling/executor"
import { KernelInputs } from "@kindling/kernel"
import { MasterInputs } from "@kindling/master"
import { Catalogue, Errors, States } from "@kindling/protocol"
import { WorkerInputs } from "@kindling/worker"
import { Option, SchemaAST } from "effect"
import { readFileSync } from "node:fs"
import { renderJsonSchema, renderMarkdown } from "../scripts/protocol-docs.js"

const committed = (name: string) => readFileSync(new URL(`../docs/${name}`, import.meta.url), "utf8")

describe("the generated protocol reference", () => {
  const markdown = renderMarkdown()

  it("docs/protocol.md is up to date (run `pnpm run docs`)", () => {
    assert.strictEqual(committed("protocol.md"), markdown)
  })

  it("docs/protocol.schema.json is up to date (run `pnpm run docs`)", () => {
    assert.strictEqual(committed("protocol.schema.json"), renderJsonSchema())
  })

  it("documents every message, reply, enum value and error", () => {
    for (const union of [...Catalogue.conversations.map((c) => c.union), ...Catalogue.replies]) {
      for (const member of Catalogue.members(union)) {
        assert.include(markdown, `#### ${(member as unknown as { _tag: string })._tag}\n`)
      }
    }
    for (const [name, schema] of Object.entries(States.all)) {
      assert.include(markdown, `### ${name}\n`)
      for (const value of schema.literals) assert.include(markdown, `| \`${value}\` |`)
    }
    for (const name of Object.keys(Errors.all)) assert.include(markdown, `### ${name}\n`)
  })

  it("documents the kernel's inputs and each role's local inputs, with their descriptions", () => {
    const unions = [
      KernelInputs.Input,
      MasterInputs.Local,
      WorkerInputs.Local,
      DriverInputs.Local,
      AppClientInputs.Local,
      ExecutorInputs.Local
    ]
    const section = markdown.slice(markdown.indexOf("## Inputs of each role\n"), markdown.indexOf("## Artifacts\n"))
    for (const union of unions) {
      for (const { ast } of union.members) {
        const tag = SchemaAST.getPropertySignatures(ast).find((property) => property.name === "_tag")!.type
        const description = Option.getOrThrow(SchemaAST.getDescriptionAnnotation(ast))
        assert.include(section, `#### ${(tag as SchemaAST.Literal).literal}\n\n${description}\n`)
      }
    }
  })

  it("the JSON Schema is usable: no definition refers to itself, and every envelope has its own", () => {
    const schema = JSON.parse(renderJsonSchema()) as { $defs: Record<string, { $ref?: string; anyOf?: unknown }> }
    for (const [name, definition] of Object.entries(schema.$defs)) {
      assert.notStrictEqual(definition.$ref, `#/$defs/${name}`, `$defs.${name} refers to itself`)
    }
    assert.deepStrictEqual(
      (schema.$defs.Envelope!.anyOf as ReadonlyArray<{ $ref: string }>).map((member) => member.$ref),
      [
        "Hello",
        "Challenge",
        "Proof",
        "Welcome",
        "Reject",
        "Send",
        "Ask",
        "Reply",
        "Failure",
        "Ping",
        "Fetch",
        "Chunk",
        "Credit",
        "End",
        "Cancel",
        "FetchFailed"
      ].map((name) => `#/$defs/${name}`)
    )
    assert.deepStrictEqual((schema.$defs.Reply as { properties: { _tag: unknown } }).properties._tag, {
      type: "string",
      enum: ["reply"]
    })
  })

  it("the JSON Schema defines the envelope and every message", () => {
    const schema = JSON.parse(renderJsonSchema()) as { $defs: Record<string, unknown> }
    assert.property(schema.$defs, "Envelope")
    for (const conversation of Catalogue.conversations) {
      for (const member of Catalogue.members(conversation.union)) {
        assert.property(schema.$defs, (member as unknown as { _tag: string })._tag)
      }
    }
  })
})
