import { packageConfig, standalone } from "../../tsup.shared.js"

// An executor process starts from `main`, each of its task threads from `taskThread`, and a thread that reads or
// writes a bucket has an object-store thread from `objectStoreThread`.
export default packageConfig(["index", "main", "objectStoreThread", "taskThread", "tasks"], {
  onSuccess: standalone(["main", "objectStoreThread", "taskThread"])
})
