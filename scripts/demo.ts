/**
 * The README's main job: word count on `local-cluster[2,1,1024]` (a master, two workers and their executor
 * processes, all started for the run) over a generated text of 20 MB, with the console progress bar when stderr is
 * a terminal (as `kindling submit` draws it by default). The output goes to a fresh directory under the machine's
 * temporary one, which the app names at the end.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import * as Corpus from "./corpus.js"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const input = Corpus.ensure(20 * 1024 * 1024)
const output = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-wordcount-")), "counts")
const result = ChildProcess.spawnSync(
  process.execPath,
  [
    // This script runs under tsx: the CLI runs from its sources the same way (tsx's loader, by absolute path,
    // which the executors it starts inherit).
    ...process.execArgv,
    "--conditions=@kindling/source",
    Path.join(root, "packages/cli/src/bin.ts"),
    "submit",
    "--master",
    "local-cluster[2,1,1024]",
    Path.join(root, "examples/wordcount.ts"),
    input,
    output
  ],
  { stdio: "inherit", cwd: root }
)
process.exit(result.status ?? 1)
