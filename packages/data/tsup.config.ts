import { packageConfig, standalone } from "../../tsup.shared.js"

// A thread that reads or writes a bucket starts an object-store thread from `objectStoreThread`; a driver's file
// thread starts from `fileThread`. A worker's shuffle service runs over `NodeDisk`.
export default packageConfig(["index", "fileThread", "NodeDisk", "objectStoreThread"], {
  onSuccess: standalone(["fileThread", "objectStoreThread"])
})
