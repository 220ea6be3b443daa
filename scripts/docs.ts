// `pnpm run docs`: regenerates the protocol reference from the schemas and the configuration reference from the keys
// the `kindling` command knows.
import { Settings } from "@kindling/cli"
import { Reference } from "@kindling/conf"
import { writeFileSync } from "node:fs"
import { renderJsonSchema, renderMarkdown } from "./protocol-docs.js"

const docs = new URL("../docs/", import.meta.url)
writeFileSync(new URL("protocol.md", docs), renderMarkdown())
writeFileSync(new URL("protocol.schema.json", docs), renderJsonSchema())
writeFileSync(new URL("configuration.md", docs), Reference.markdown(Settings.registry))
console.log("wrote docs/protocol.md, docs/protocol.schema.json and docs/configuration.md")
