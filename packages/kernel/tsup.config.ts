import { packageConfig } from "../../tsup.shared.js"

export default packageConfig(["index", "DiskError", "testing", "web"])
