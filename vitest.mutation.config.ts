import { defineConfig } from "vitest/config";

/**
 * The unit tests that pin the safety core, for mutation testing (`npm run test:mutation`,
 * stryker.config.mjs). In-process and fast only (the whole set runs in about 15 s): a test that
 * drives the built CLI never sees a mutant, and one that runs the simulator would make each of
 * thousands of mutants wait on it. test/run/interlocks.e2e.test.ts pins the same rules end to end.
 * `SYNCBOOK_MUTATION_TESTS` (comma-separated files) narrows it, to iterate on one module with
 * its own fast tests: `SYNCBOOK_MUTATION_TESTS=test/fleet/conditions.test.ts npx stryker run
 * --mutate src/fleet/conditions.ts`.
 */
const only = process.env.SYNCBOOK_MUTATION_TESTS?.split(",").filter(Boolean);
export default defineConfig({
  test: {
    include: only ?? [
      "test/api/commands.test.ts",
      "test/fleet/conditions.test.ts",
      "test/fleet/identity.test.ts",
      "test/journal/{reconcile,reconcile-rules,state,state-rules,verifier,chain,fanout-proof}.test.ts",
      "test/steps/*.test.ts",
      // the retry policies, the fleet read's among them (src/retry.ts, fleet-ops.ts)
      "test/retry.test.ts",
      // the hook processes earlier runs left (src/run/orphans.ts)
      "test/run/orphans.test.ts",
      // --resume's decision from its journal (src/run/resume-decide.ts)
      "test/run/resume-decide.test.ts",
      // the last verify step's failure, the why of "not verified" (src/model/verify-failed.ts)
      "test/model/fold.test.ts",
      // lint's side of the command steps (their `sequence`)
      "test/lint/{sequence,rules,command-sequence}.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    globalSetup: ["test/support/global-temp.ts"],
    env: { TSX_DISABLE_CACHE: "1" },
  },
});
