import { assert, describe, it } from "@effect/vitest"
import { Reference } from "@kindling/conf"
import { registry } from "./fixtures/keys.js"

describe("Reference", () => {
  const markdown = Reference.markdown(registry)

  it("lists every key, group by group, with its type and default", () => {
    for (const key of registry.keys) assert.include(markdown, `| \`${key.name}\` |`)
    assert.isBelow(markdown.indexOf("## Timing\n\nDurations."), markdown.indexOf("## Resources\n\nEverything else."))
    assert.include(markdown, "| `kindling.example.timeout` | duration (bare number: s) | `60s` |")
    assert.include(markdown, "| `kindling.example.pollInterval` | duration (bare number: ms) | `10s` |")
    assert.include(
      markdown,
      "| `kindling.example.recoveryTimeout` | duration (bare number: s) | `kindling.example.timeout` |"
    )
    assert.include(markdown, "| `kindling.example.recoveryMode` | `NONE` \\| `FILESYSTEM` | `NONE` |")
    assert.include(markdown, "| `kindling.example.ui.port` | int 0–65535 | `8080` |")
    assert.include(markdown, "| `kindling.example.cores` | int ≥ 1 | unset |")
    assert.include(markdown, "| `kindling.example.directory` | string | `\"\"` |")
    assert.include(markdown, "| int ≥ 1 or `infinite` | `infinite` | Cores or infinite \\| with a pipe. |")
  })
})
