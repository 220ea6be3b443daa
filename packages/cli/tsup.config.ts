import { packageConfig, standalone } from "../../tsup.shared.js"

// `kindling` runs its modules as they are built (an app run in this process must share them), and the commands
// that run no app — status, kill, decommission, a cluster-mode submission — from one bundle of them as well
// (`dist/commands/`), which starts several times quicker: bin.ts picks. esbuild stays a package (its binary is
// found beside it), and so does TypeScript (`submit --check` loads the app project's own). What the bundle is never
// asked to run (Routing.bundleServes) is left out of it: the roles' commands and the app runner.
export default packageConfig(["index", "bin", "DriverProcess"], {
  onSuccess: standalone([["main", "commands"]], {
    fromSources: true,
    splitting: true,
    external: ["esbuild", "typescript"],
    leftOut: [
      "./MasterCommand.js",
      "./WorkerCommand.js",
      "./HistoryCommand.js",
      "./ConformanceCommand.js",
      "./AppRunner.js"
    ]
  })
})
