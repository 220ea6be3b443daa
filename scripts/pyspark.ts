// Real Spark for the opt-in checks that run it (`pnpm test:spark-compat`, `pnpm bench spark`): pyspark from PyPI
// bundles Spark's jars, scripts and History Server, and needs Java 17 on the PATH.
import * as ChildProcess from "node:child_process"

export const pysparkVersion = "4.3.0"

/** Spark's home (pyspark's package folder), installing pyspark from PyPI when it cannot be imported. */
export const sparkHome = (): string => {
  const find = () =>
    ChildProcess.spawnSync("python3", ["-c", "import pyspark, os; print(os.path.dirname(pyspark.__file__))"], {
      encoding: "utf8"
    })
  let found = find()
  if (found.status !== 0) {
    console.log(`Installing pyspark ${pysparkVersion} from PyPI…`)
    const install = (flags: ReadonlyArray<string>) =>
      ChildProcess.spawnSync("python3", ["-m", "pip", "install", "--quiet", ...flags, `pyspark==${pysparkVersion}`], {
        stdio: "inherit"
      }).status === 0
    // A system Python (Debian's, say) refuses installs outside a virtual environment: then into the user's site.
    if (!install([])) install(["--user", "--break-system-packages"])
    found = find()
  }
  if (found.status !== 0) throw new Error(`pyspark cannot be imported:\n${found.stderr}`)
  const java = ChildProcess.spawnSync("java", ["-version"], { encoding: "utf8" })
  if (java.status !== 0) throw new Error("Spark needs Java (17) on the PATH: `java -version` failed")
  return found.stdout.trim()
}
