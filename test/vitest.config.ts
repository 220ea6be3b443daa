import { defineConfig, mergeConfig } from "vitest/config"
import shared from "../vitest.shared.js"

// Tests of the repository as a whole, beside the packages' own.
export default mergeConfig(shared, defineConfig({ test: { name: "repository", include: ["*.test.ts"] } }))
