import { packageConfig, standalone } from "../../tsup.shared.js"

// An executor process starts from `main`, and each of its task threads from `taskThread`.
export default packageConfig(["index", "main", "taskThread", "tasks"], {
  onSuccess: standalone(["main", "taskThread"])
})
