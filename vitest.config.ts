import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "test"],
    maxWorkers: 2,
    minWorkers: 1
  }
})
