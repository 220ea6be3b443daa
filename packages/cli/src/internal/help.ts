// Help as a person reads it: @effect/cli's says of every option, in a paragraph of its own, what kind of value it
// takes and that it may be left out ("A user-defined piece of text.", "This setting is optional.") — what the usage
// line already shows (`[--name text]`) — and heads every page with the command's name above its name and version.
// Those lines go; a default it states stays, said shortly. Colour codes go too, where no terminal shows them.

// eslint-disable-next-line no-control-regex -- an escape character is exactly what it looks for
const colourCodes = /\u001b\[[0-9;]*m/g

const boilerplate = new RegExp(
  "^(" + [
    "A user-defined piece of text( that is confidential)?\\.",
    "An integer\\.",
    "A floating point number\\.",
    "A true or false value\\.",
    "One of the following: .*",
    "An? (existing )?(file|directory|file or directory)( that must not exist)?\\.",
    "This setting is optional\\.",
    "This (argument|option) may be repeated zero or more times\\.",
    // `--conf`'s: its own description says how it repeats.
    "This setting is a property argument which:",
    "- May be specified (a single time|multiple times): .*"
  ].join("|") + ")$"
)

/**
 * `text` without the boilerplate, and without colour codes unless `colours`; its usage lines name the command as
 * it is typed, `command` first (`$ kindling submit …`, where @effect/cli writes `$ submit …`).
 */
export const tidy = (text: string, colours: boolean, command: string): string => {
  const lines = text.split("\n")
  const plain = lines.map((line) => line.replace(colourCodes, "").trim())
  const kept: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    // The banner: the command's name alone, above the line that names it with its version.
    if (i === 0 && plain[2]?.startsWith(`${plain[0]} `) === true && plain[1] === "") {
      i++
      continue
    }
    if (boilerplate.test(plain[i]!)) {
      if (plain[i + 1] === "") i++
      continue
    }
    const said = lines[i]!.replace("This setting is optional. Defaults to: ", "Default: ")
    const line = plain[i]!.startsWith("$ ") && !plain[i]!.startsWith(`$ ${command}`)
      ? said.replace("$ ", `$ ${command} `)
      : said
    kept.push(colours ? line : line.replace(colourCodes, ""))
  }
  return kept.join("\n")
}
