// Mutation testing of the safety core (issue 19): `npm run test:mutation`. Not part of `npm test`.
// Each module below decides whether to send, resend, skip or refuse a command; a rule no test pins
// is a rule the next change breaks. docs/testing.md has the scores and the budget.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts" },
  coverageAnalysis: "perTest",
  mutate: [
    "src/api/commands.ts",
    "src/fleet/conditions.ts",
    "src/fleet/identity.ts",
    "src/journal/reconcile.ts",
    "src/journal/state.ts",
    "src/steps/kit/fleet-ops.ts",
    "src/steps/start.ts",
    "src/steps/commit.ts",
    "src/steps/lifecycle.ts",
    "src/steps/verify.ts",
    "src/steps/kit/verifier.ts",
    "src/steps/kit/targets.ts",
    "src/steps/kit/writes-check.ts",
    // issue 42: whether writes may go back on (the fleet read before every undo of a write stop),
    // and whether an earlier run's hook process may still run (commit's hook-processes interlock)
    "src/steps/kit/writes-on.ts",
    "src/run/orphans.ts",
    // issue 36: whether a verifier answer is this cutover's check and result, and "verified"
    "src/steps/kit/earned.ts",
    // --resume's decision from its journal: which write stops run again, the undos owed, the
    // commit of the sync that runs now (src/run/resume.ts reads the journal and the fleet)
    "src/run/resume-decide.ts",
    // no writes-on hook and no verify once an instance stopped during the commit (the migration
    // must be restarted to be verified)
    "src/steps/kit/stopped-in-commit.ts",
    // why a cutover is not verified, as every reader says it (the verdict's words are its safety too)
    "src/model/verify-failed.ts",
  ],
  thresholds: { high: 95, low: 90, break: 95 },
  // three workers on 2 cores: a third fills the time the others spend waiting out a timeout and
  // restarting (14.5 min for the whole set, against 16.5 with two)
  concurrency: 3,
  reporters: ["clear-text", "progress", "json", "html"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/index.html" },
  tempDirName: ".stryker-tmp",
  // not copied into the sandboxes: build output, reports, and other runs' sandboxes (one per module
  // when they run side by side, each with its own --tempDirName)
  ignorePatterns: ["dist", "reports", "coverage", ".stryker-tmp*", ".syncbook", "out"],
  cleanTempDir: "always",
  ignoreStatic: true,
  // the tests take milliseconds: a mutant that makes a poll wait forever is a timeout (detected)
  // after 3 s, not 20 (dozens of them did; they made most of the run)
  timeoutMS: 3_000,
};
