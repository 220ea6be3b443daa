import { packageConfig } from "../../tsup.shared.js"

export default packageConfig(["index", "testing", "Records", "PlanNodes", "Endpoints"])
