import { packageConfig, standalone } from "../../tsup.shared.js"

// An executor process starts from `main`, each of its task threads from `taskThread` (bundled beside the pool that
// starts it, at the top of `dist`). Both bundles hold the data package's object storage, which starts a thread from
// `objectStoreThread` beside the module it runs in: that entry of `@kindling/data` is bundled here too. Zstandard's
// compressor stays a package outside every bundle (it loads its WebAssembly from beside itself), so the executor
// depends on it as well as `data` does. A worker runs `shuffle/ExternalShuffleService`. The bundles read the
// `@kindling/*` packages from their sources, which leaves out what the executor never reaches (the data package's
// Parquet writer and object-store signing, some 0.6 MB of its build): its process compiles and runs that much less
// before it registers.
export default packageConfig(["index", "shuffle/ExternalShuffleService", "main"], {
  onSuccess: standalone([
    ["../../data/src/objectStoreThread", "objectStoreThread"],
    "main",
    ["tasks/taskThread", "taskThread"]
  ], { fromSources: true })
})
