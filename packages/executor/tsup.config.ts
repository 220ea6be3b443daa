import { packageConfig, standalone } from "../../tsup.shared.js"

// An executor process starts from `main`, each of its task threads from `taskThread`, and a thread that reads or
// writes a bucket has an object-store thread from `objectStoreThread`; a driver's file thread starts from
// `fileThread`. A worker runs `ExternalShuffleService` over `NodeDisk`.
export default packageConfig([
  "index",
  "ExternalShuffleService",
  "fileThread",
  "main",
  "NodeDisk",
  "objectStoreThread",
  "taskThread",
  "tasks"
], {
  onSuccess: standalone(["fileThread", "main", "objectStoreThread", "taskThread"])
})
