// Options objects as apps pass them to readers and writers: a name one does not have is refused, with the nearest
// it has — an app is not type-checked when it is submitted, and a misspelt option (`multiline`, `inferschema`)
// would otherwise be ignored without a word.
import { Spelling } from "@kindling/conf"
import { InvalidArgument } from "../AppErrors.js"

/** The names of an options interface, every one of them: the compiler refuses a list that leaves one out. */
export const names = <T>() =>
<const N extends ReadonlyArray<keyof T & string>>(
  ...names:
    & N
    & ([Exclude<keyof T, N[number]>] extends [never] ? unknown : { readonly missing: Exclude<keyof T, N[number]> })
): ReadonlyArray<string> => names

/** Throws `InvalidArgument` for an option of `options` that is not among `known`, naming the nearest one. */
export const check = (operation: string, options: object, known: ReadonlyArray<string>): void => {
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue
    const near = Spelling.nearest(known, name.toLowerCase(), (candidate) => candidate.toLowerCase())
    throw new InvalidArgument({
      reason: `${operation} has no option ${name}${near === undefined ? "" : ` (did you mean ${near}?)`}; ` +
        `its options are ${known.join(", ")}`
    })
  }
}
