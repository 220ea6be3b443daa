import { packageConfig, standalone } from "../../tsup.shared.js"

// An event log's thread starts from `eventLogThread`.
export default packageConfig(["index", "eventLogThread"], { onSuccess: standalone(["eventLogThread"]) })
