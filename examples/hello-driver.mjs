// A driver program for `kindling submit`: writes a greeting to the file named by its first argument.
// Any module whose default export is a function `(args) => void | Promise<void>` is a valid driver.
import { writeFileSync } from "node:fs"
import { hostname } from "node:os"

export default (args) => {
  const [out = "hello.txt", ...words] = args
  writeFileSync(out, `Hello from a Kindling driver on ${hostname()} (pid ${process.pid}): ${words.join(" ")}\n`)
}
