import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // one temp folder per run, removed at its end (test/support/global-temp.ts)
    globalSetup: ["test/support/global-temp.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores on CI: keep forks few so end-to-end timing stays honest.
    pool: "forks",
    maxWorkers: 2,
    // a test run inside GitHub Actions must not append the CLI's job summaries to the real one;
    // children run through tsx keep no compile cache in the system's temp folder (/tmp/tsx-<uid>)
    env: { GITHUB_STEP_SUMMARY: "", TSX_DISABLE_CACHE: "1" },
  },
});
