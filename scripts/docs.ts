// `pnpm docs`: regenerates the protocol reference from the schemas.
import { writeFileSync } from "node:fs"
import { renderJsonSchema, renderMarkdown } from "./protocol-docs.js"

const docs = new URL("../docs/", import.meta.url)
writeFileSync(new URL("protocol.md", docs), renderMarkdown())
writeFileSync(new URL("protocol.schema.json", docs), renderJsonSchema())
console.log("wrote docs/protocol.md and docs/protocol.schema.json")
