// `pnpm docs`: regenerates the protocol reference from the schemas and the configuration reference from the keys.
import { Conf } from "@kindling/protocol"
import { writeFileSync } from "node:fs"
import { renderJsonSchema, renderMarkdown } from "./protocol-docs.js"

const docs = new URL("../docs/", import.meta.url)
writeFileSync(new URL("protocol.md", docs), renderMarkdown())
writeFileSync(new URL("protocol.schema.json", docs), renderJsonSchema())
writeFileSync(new URL("configuration.md", docs), Conf.describe())
console.log("wrote docs/protocol.md, docs/protocol.schema.json and docs/configuration.md")
