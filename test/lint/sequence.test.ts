/**
 * The fleet state model behind the step-order rules: commands are judged against the states
 * they can meet, not against a fixed script (DESIGN.md: "A runbook need not start the sync:
 * a cutover-only runbook ... begins with `waitFor` on a fleet that is already RUNNING. Lint
 * judges commands against the states they can meet").
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  COMMIT,
  FIXTURES,
  READY,
  START,
  STOP,
  atVersion,
  findings,
  lintFile,
  lintYaml,
  notAside,
  runbook,
} from "../support/lint.js";

const CHECK = "  - startVerification: {}\n";
const VERIFY = "  - verify: {}\n";

async function problems(yaml: string): Promise<string[]> {
  const { loader, rules } = await lintYaml(yaml);
  expect(loader).toEqual([]);
  // (old versions here are on purpose: their end-of-life warning is tested in versions.test.ts)
  return findings(rules.filter((d) => d.severity !== "info" && notAside(d))).map((f) => f.replace(/@\d+$/, ""));
}

describe("state model", () => {
  it("preflight first lints clean; a preflight after start is a warning (the sync writes to the destination by then)", async () => {
    expect(await problems(runbook("  - preflight: {}\n" + START + READY + STOP + COMMIT))).toEqual([]);
    expect(await problems(runbook(START + "  - preflight: { failOn: warning }\n" + READY + STOP + COMMIT))).toEqual([
      "preflight-after-start",
    ]);
  });

  it("a cutover-only runbook (no start) on a fleet already RUNNING lints clean", async () => {
    expect(await problems(runbook(READY + CHECK + STOP + COMMIT + VERIFY))).toEqual([]);
  });

  it("judges nothing it cannot know: without start, resume or reverse at the top may be valid", async () => {
    expect(await problems(runbook("  - resume: {}\n" + READY + STOP + COMMIT))).toEqual([]);
  });

  it('"resume: only in PAUSED": resume after pause is fine, and canCommit must be awaited again', async () => {
    expect(await problems(runbook(START + READY + "  - pause: {}\n  - resume: {}\n" + READY + STOP + COMMIT))).toEqual(
      [],
    );
    expect(await problems(runbook(START + READY + "  - pause: {}\n  - resume: {}\n" + STOP + COMMIT))).toEqual([
      "commit-without-can-commit-wait",
    ]);
  });

  it('"pause: only in RUNNING": pause after commit is impossible', async () => {
    expect(await problems(runbook(START + READY + STOP + COMMIT + "  - pause: {}\n"))).toEqual([
      "command-impossible-state",
    ]);
  });

  it('a `writesOn` hook comes after the destination takes writes ("Do not write to the destination while `canWrite` is false")', async () => {
    const on = "  - hook: { use: shell, with: { command: [app-on] }, writesOn: true }\n";
    const commitOnly = "  - commit: {}\n";
    const canWrite = "  - waitFor: { canWrite: true }\n";
    // after the wait for COMMITTED (COMMIT), or for canWrite: fine
    expect(await problems(runbook(START + READY + STOP + COMMIT + on))).toEqual([]);
    expect(
      await problems(
        runbook(START + READY + STOP + commitOnly + canWrite + on + "  - waitFor: { state: COMMITTED }\n"),
      ),
    ).toEqual([]);
    // right after commit, or before it
    expect(
      await problems(runbook(START + READY + STOP + commitOnly + on + "  - waitFor: { state: COMMITTED }\n")),
    ).toEqual(["writes-on-before-can-write"]);
    // (before the commit the embedded verifier, on by default from 1.9, still checks: a hook there is warned about)
    expect(await problems(runbook(START + READY + STOP + on + COMMIT))).toEqual([
      "hook-during-verify",
      "writes-on-before-can-write",
    ]);
    // the same wait written as an `expect` on canWrite counts; one that expects false does not
    const byExpect = "  - waitFor: { expect: [{ path: canWrite, equals: true }] }\n";
    expect(
      await problems(
        runbook(START + READY + STOP + commitOnly + byExpect + on + "  - waitFor: { state: COMMITTED }\n"),
      ),
    ).toEqual([]);
    const notTrue = "  - waitFor: { expect: [{ path: canWrite, equals: false }] }\n";
    expect(
      await problems(runbook(START + READY + STOP + commitOnly + notTrue + on + "  - waitFor: { state: COMMITTED }\n")),
    ).toEqual(["writes-on-before-can-write"]);
    // a canWrite wait that may fail does not count
    const mayFail = "  - continueOnError: true\n    waitFor: { canWrite: true }\n";
    expect(
      await problems(runbook(START + READY + STOP + commitOnly + mayFail + on + "  - waitFor: { state: COMMITTED }\n")),
    ).toEqual(["writes-on-before-can-write"]);
  });

  it("writesStoppedExternally satisfies the stopWrites requirement of commit", async () => {
    expect(await problems(runbook(START + READY + COMMIT))).toEqual(["commit-without-stop-writes"]);
    expect(await problems(runbook(START + READY + COMMIT, "writesStoppedExternally: true\n"))).toEqual([]);
  });

  it("a stopWrites that may fail (continueOnError) does not count as writes stopped", async () => {
    const stop = STOP.replace("  - stopWrites:", "  - continueOnError: true\n    stopWrites:");
    // and the flag itself is refused there: a failed write stop must end the run
    expect(await problems(runbook(START + READY + stop + COMMIT))).toEqual([
      "commit-without-stop-writes",
      "continue-on-error-unsafe",
    ]);
  });

  it("an assert that may fail on purpose (continueOnError) is not reported", async () => {
    const a = "  - assert: { state: COMMITTED }\n    continueOnError: true\n";
    expect(await problems(runbook(START + READY + a + STOP + COMMIT))).toEqual([]);
  });

  it("a literal `when: false` step never runs; an interpolated `when` may or may not", async () => {
    const never = "  - commit: {}\n    when: false\n";
    expect(await problems(runbook(START + never + READY + STOP + COMMIT))).toEqual([]);
    // the start may not run, so the top is unknown: commands after it are not judged against IDLE
    const maybeStart = "  - start: { source: cluster0, destination: cluster1 }\n    when: ${vars.fresh}\n";
    expect(await problems(runbook(maybeStart + READY + STOP + COMMIT, "vars: { fresh: true }\n"))).toEqual([]);
  });

  it("commit, reverse, then commit again: the reversed sync is a new one", async () => {
    const start = "  - start: { source: cluster0, destination: cluster1, reversible: true }\n";
    expect(
      await problems(runbook(start + READY + STOP + COMMIT + "  - reverse: {}\n" + READY + STOP + COMMIT)),
    ).toEqual([]);
    // the reversed sync needs its own stopWrites and canCommit wait
    expect(
      await problems(
        runbook(start + READY + STOP + COMMIT + "  - reverse: {}\n  - commit: {}\n  - waitFor: { state: COMMITTED }\n"),
      ),
    ).toEqual(["commit-without-can-commit-wait", "commit-without-stop-writes"]);
  });

  it("a verification after a reverse, where the verifier may hold the one before it: verify-after-reverse", async () => {
    const start = "  - start: { source: cluster0, destination: cluster1, reversible: true }\n";
    const first = start + READY + CHECK + STOP + COMMIT + VERIFY + "  - reverse: {}\n" + READY + STOP + COMMIT;
    // a check, or a verify (which starts one), after the reverse: warned once, at the first
    expect(await problems(runbook(first + CHECK + VERIFY))).toEqual(["verify-after-reverse"]);
    expect(await problems(runbook(first + VERIFY))).toEqual(["verify-after-reverse"]);
    // no check before the reverse: nothing to hold
    const verifies = async (yaml: string) => {
      const { rules } = await lintYaml(yaml);
      return findings(rules.filter((d) => d.rule === "commit-without-verify" || d.rule === "verify-after-reverse"));
    };
    const second = "  - reverse: {}\n" + READY + CHECK + STOP + COMMIT + VERIFY;
    expect(await verifies(runbook(start + READY + STOP + COMMIT + second))).toEqual([
      expect.stringMatching(/^commit-without-verify@\d+$/),
    ]);
    // commit-without-verify per sync: the reversed sync's commit needs a verify after the reverse
    const [mark] = await verifies(runbook(first));
    expect(mark).toMatch(/^commit-without-verify@\d+$/);
    const [firstCommit] = await verifies(runbook(start + READY + CHECK + STOP + COMMIT));
    expect(Number(mark!.split("@")[1])).toBeGreaterThan(Number(firstCommit!.split("@")[1]));
    expect(await verifies(runbook(start + READY + CHECK + STOP + COMMIT + VERIFY + second))).toEqual([
      expect.stringMatching(/^verify-after-reverse@\d+$/),
    ]);
    // after the reverse nothing of the verification before it counts, in lint as in the run: a
    // verifier result read there is not earned, and a check of the reversed sync paused before it
    // reached change event application cannot begin
    const after = start + READY + CHECK + STOP + COMMIT + VERIFY + "  - reverse: {}\n";
    expect(await problems(runbook(after + "  - assert: { phase: idle, failedTasks: 0 }\n"))).toEqual([
      "verifier-condition-not-earned",
    ]);
    expect(await problems(runbook(after + "  - pause: {}\n" + CHECK))).toEqual([
      "verify-after-reverse",
      "verify-before-cea",
      "verify-without-writes-off",
    ]);
    // a hook between the reverse and the check may restart the verifier (the rule's own hint): no warning
    const restart = "  - hook: { use: shell, with: { command: [restart-verifier] } }\n";
    expect(await problems(runbook(first + restart + CHECK + VERIFY))).toEqual([]);
    // a reverse that may not run (its `when` a variable): the check after it may meet the old verification
    const maybe = start + READY + CHECK + STOP + COMMIT + VERIFY + '  - reverse: {}\n    when: "${vars.rollback}"\n';
    expect(await problems(runbook(maybe + CHECK + VERIFY, "vars: { rollback: false }\n"))).toEqual([
      "verify-after-reverse",
      // the reversed sync's verify, with neither its write stop nor its commit before it
      "verify-writes-off-early",
      "writes-off-before-commit",
    ]);
    // a rollback plan (reverse, no second commit) needs none
    expect(await verifies(runbook(start + READY + CHECK + STOP + COMMIT + VERIFY + "  - reverse: {}\n"))).toEqual([]);
  });

  it("reverse needs COMMITTED: a commit not awaited before reverse is reported", async () => {
    const start = "  - start: { source: cluster0, destination: cluster1, reversible: true }\n";
    expect(await problems(runbook(start + READY + STOP + "  - commit: {}\n  - reverse: {}\n"))).toEqual([
      "commit-without-committed-wait",
    ]);
  });

  it('"IDLE, INITIALIZING (1.20)": "the service rejects `start` while in it", so it comes before IDLE, never after a start', async () => {
    const wait = "  - waitFor: { state: INITIALIZING }\n";
    const idle = "  - waitFor: { state: IDLE }\n";
    // before the start, on 1.20+: the services may still be initializing; before 1.20 there is no such state
    expect(await problems(atVersion(runbook(wait + idle + START + READY + STOP + COMMIT), "1.19.0"))).toEqual([
      "wait-never-holds",
    ]);
    expect(await problems(atVersion(runbook(wait + idle + START + READY + STOP + COMMIT), "1.20.0"))).toEqual([]);
    expect(await problems(runbook(wait + idle + START + READY + STOP + COMMIT))).toEqual([]);
    // after it, on any version: a started sync never goes back to INITIALIZING
    expect(await problems(atVersion(runbook(START + wait + READY + STOP + COMMIT), "1.19.0"))).toEqual([
      "wait-never-holds",
    ]);
    expect(await problems(runbook(START + wait + READY + STOP + COMMIT))).toEqual(["wait-never-holds"]);
  });

  // facts, States: "IDLE, INITIALIZING (1.20), RUNNING, …": a known state from 1.20, none before
  it("INITIALIZING is a state of 1.20+: waited for, asserted or expected on 1.18 it is flagged, with the version", async () => {
    const idle = "  - waitFor: { state: IDLE }\n";
    const msg = async (yaml: string, rule: string) =>
      (await lintYaml(yaml)).rules.filter((d) => d.rule === rule).map((d) => d.message);
    for (const cond of [
      "waitFor: { state: INITIALIZING }",
      "waitFor: { expect: [{ path: state, equals: INITIALIZING }] }",
      "waitFor: { expect: [{ path: state, in: [INITIALIZING] }] }",
    ]) {
      // (before a start: then IDLE; in a cutover-only runbook: straight on to the cutover)
      const yaml = (v: string, steps = idle + START + READY + STOP + COMMIT) =>
        atVersion(runbook(`  - ${cond}\n` + steps), v);
      expect(await msg(yaml("1.18.0"), "wait-never-holds"), cond).toEqual([
        "This waitFor can never be satisfied here: state INITIALIZING exists from service 1.20 (the runbook declares 1.18.0). It would wait until its timeout and fail.",
      ]);
      // a cutover-only runbook on 1.18 too: the fleet can be in any state of its version, not that one
      expect(await msg(yaml("1.18.0", READY + STOP + COMMIT), "wait-never-holds"), cond).toHaveLength(1);
      expect(await problems(yaml("1.20.0")), cond).toEqual([]);
      // on 1.22 without a start: INITIALIZING may be a restart, which returns to "the state it had before the
      // crash" [progress 1.20], so the cutover after it can still run
      expect(await problems(yaml("1.22.0", READY + STOP + COMMIT)), cond).toEqual([]);
    }
    // an assert: the steps after it never run
    const assert = (v: string) =>
      atVersion(runbook("  - assert: { state: INITIALIZING }\n" + START + READY + STOP + COMMIT), v);
    expect(await msg(assert("1.19.9"), "unreachable-after-assert")).toEqual([
      "This assert can never hold here: state INITIALIZING exists from service 1.20 (the runbook declares 1.19.9). The run fails at it, so the 5 steps after it never run.",
    ]);
    expect(await problems(assert("1.20.0"))).toEqual([]);
    // IDLE or INITIALIZING on 1.18: IDLE can hold, so nothing to say
    expect(
      await problems(
        atVersion(runbook("  - waitFor: { state: [INITIALIZING, IDLE] }\n" + START + READY + STOP + COMMIT), "1.18.0"),
      ),
    ).toEqual([]);
    // without a serviceVersion lint cannot tell: not flagged
    expect(
      (
        await lintYaml(
          runbook("  - waitFor: { state: INITIALIZING }\n" + START + READY + STOP + COMMIT).replace(
            /serviceVersion: .*\n/,
            "",
          ),
        )
      ).rules.filter((d) => d.rule === "wait-never-holds"),
    ).toEqual([]);
  });

  it('"COMMITTED → REVERSING → RUNNING in the opposite direction": a reverse can be waited out', async () => {
    const rb = (extra: string) =>
      runbook(START + READY + STOP + COMMIT + "  - reverse: {}\n" + extra).replace(
        "destination: cluster1",
        "destination: cluster1, reversible: true",
      );
    expect(await problems(rb("  - waitFor: { state: REVERSING }\n  - waitFor: { state: RUNNING }\n"))).toEqual([]);
    // REVERSING is over by itself: nothing follows it but RUNNING (and what a RUNNING sync can do)
    expect(await problems(rb("  - waitFor: { state: COMMITTING }\n"))).toEqual(["wait-never-holds"]);
  });

  it('"In state IDLE, all fields except state and canCommit are null": waiting for canCommit before start never ends', async () => {
    expect(await problems(runbook(READY + START + READY + STOP + COMMIT))).toEqual(["wait-never-holds"]);
  });

  it("reports one mistake once: an impossible command does not cascade", async () => {
    // resume never paused: reported once; the commit after it is judged as if the author's plan held
    expect(await problems(runbook(START + READY + "  - resume: {}\n" + STOP + COMMIT))).toEqual([
      "command-impossible-state",
    ]);
  });

  it("a check while paused before change event application is reported; after CEA was seen it is not", async () => {
    const early = START + "  - pause: {}\n" + CHECK + "  - resume: {}\n" + READY + STOP + COMMIT + VERIFY;
    expect(await problems(runbook(early))).toEqual(["verify-before-cea"]);
    const late = START + READY + "  - pause: {}\n" + CHECK + "  - resume: {}\n" + READY + STOP + COMMIT + VERIFY;
    expect(await problems(runbook(late))).toEqual([]);
  });

  // facts, States: "INITIALIZING: the service rejects `start` while in it; once initialization completes it reports
  // IDLE" [progress 1.20]: no sync runs there either, so a check before the start never begins
  it("a check before the start is reported on every version: the fleet is IDLE, or INITIALIZING then IDLE from 1.20", async () => {
    const before = CHECK + START + READY + STOP + COMMIT + VERIFY;
    for (const v of ["1.19.0", "1.20.0", "1.22.0"]) {
      const { rules } = await lintYaml(atVersion(runbook(before), v));
      const d = rules.filter((x) => x.rule === "verify-before-cea");
      expect(d, v).toHaveLength(1);
      expect(d[0]?.message, v).toContain(
        v === "1.19.0" ? "(the fleet is IDLE until start)" : "(the fleet is INITIALIZING or IDLE until start)",
      );
    }
    // paused before change event application, with INITIALIZING possible before the start: still reported
    const paused = START + "  - pause: {}\n" + CHECK + "  - resume: {}\n" + READY + STOP + COMMIT + VERIFY;
    const { rules } = await lintYaml(runbook(paused));
    expect(rules.filter((x) => x.rule === "verify-before-cea")).toHaveLength(1);
  });

  it("hooks are fine once verification has completed, and with the embedded verifier turned off", async () => {
    const hook = "  - hook: { use: shell, with: { command: [mongosh, --eval, 'db.x.createIndex({a: 1})'] } }\n";
    expect(await problems(runbook(START + READY + CHECK + STOP + COMMIT + VERIFY + hook))).toEqual([]);
    // while the check runs (from startVerification to verify), the same hook is DDL during verification
    expect(await problems(runbook(START + READY + CHECK + hook + STOP + COMMIT + VERIFY))).toEqual([
      "ddl-during-verify",
    ]);
    // `ddl` only as a word of its own (a test's temp folder `…-ddLNqZ` made a hook an error)
    const during = async (command: string): Promise<string[]> =>
      problems(
        runbook(
          START + READY + CHECK + `  - hook: { use: shell, with: { command: ${command} } }\n` + STOP + COMMIT + VERIFY,
        ),
      );
    for (const c of ["[/opt/middleware/flag.sh]", "[/tmp/syncbook-crash-ddLNqZ/probe.mjs]", "[add, lock]"])
      expect(await during(c), c).not.toContain("ddl-during-verify");
    for (const c of ["[./run-ddl.sh]", "[applyDDL]", "[node, ddl.mjs]", "[mongosh, --eval, 'db.x.drop_index()']"])
      expect(await during(c), c).toContain("ddl-during-verify");
    const off = "  - start: { source: cluster0, destination: cluster1, verification: { enabled: false } }\n";
    expect(
      await problems(
        atVersion(
          runbook(off + READY + "  - hook: { use: shell, with: { command: [warm] } }\n" + STOP + COMMIT),
          "1.9.0",
        ),
      ),
    ).toEqual([]);
  });
});

// A `when` is read once, when the runbook loads, from `vars` (and `--var`) or the environment: in
// one run every step whose `when` names the same variable runs, or none does (src/lint/sequence.ts)
describe("steps whose `when` names the same variable run together", () => {
  const start = "  - start: { source: cluster0, destination: cluster1, reversible: true }\n";
  const cutover = start + READY + CHECK + STOP + COMMIT + VERIFY;
  // the verifier holds the verification before the reverse: a hook restarts it for the reversed sync
  const restart = "  - hook: { use: shell, with: { command: [restart-verifier] } }\n";
  const REVERSE = "  - reverse: {}\n";
  const RUNNING = "  - waitFor: { state: RUNNING }\n";
  const reverse = REVERSE + RUNNING;
  const recommit = restart + READY + STOP + COMMIT + VERIFY;
  const vars = "vars: { rollback: false, again: false }\n";
  /** Every step of `steps` under `when: "<ref>"`. */
  const when = (steps: string, ref: string): string => steps.replace(/^ {2}- /gm, () => `  - when: "${ref}"\n    `);
  const all = async (yaml: string): Promise<string[]> => {
    const { loader, rules } = await lintYaml(yaml);
    // (an `${env.*}` lint has no value for is noted, as info)
    expect(loader.filter((d) => d.severity !== "info")).toEqual([]);
    return findings(rules.filter((d) => d.severity !== "info")).map((f) => f.replace(/@\d+$/, ""));
  };

  it("a rollback that commits the reversed sync again, every step under one `when`: no commit-twice, nothing to say", async () => {
    expect(await all(runbook(cutover + when(reverse + recommit, "${vars.rollback}"), vars))).toEqual([]);
    // as the same steps say with no `when` at all: the path where the rollback runs
    expect(await all(runbook(cutover + reverse + recommit, vars))).toEqual([]);
    // the same variable written with spaces inside the braces is the same variable
    const spaced = when(reverse, "${vars.rollback}") + when(recommit, "${ vars.rollback  }");
    expect(await all(runbook(cutover + spaced, vars))).toEqual([]);
    // what the rollback path leaves out is still said: its own verify, its restart of the verifier
    expect(
      await all(runbook(cutover + when(reverse + restart + READY + STOP + COMMIT, "${vars.rollback}"), vars)),
    ).toEqual(["commit-without-verify"]);
    expect(
      await all(runbook(cutover + when(reverse + READY + STOP + COMMIT + VERIFY, "${vars.rollback}"), vars)),
    ).toEqual(["verify-after-reverse"]);
  });

  it("the example rollback plan with a second commit (test/fixtures/lint/clean/) lints with no error and no warning", async () => {
    const { loader, rules } = await lintFile(fileURLToPath(new URL("clean/rollback-second-commit.yaml", FIXTURES)));
    expect(loader).toEqual([]);
    expect(rules.filter((d) => d.severity !== "info")).toEqual([]);
  });

  it("different variables stay independent: the second commit may run without the reverse", async () => {
    // (each block's own steps still run together: nothing is said of the reversed sync's write stop or commit)
    const split = when(reverse, "${vars.rollback}") + when(recommit, "${vars.again}");
    expect(await all(runbook(cutover + split, vars))).toEqual(["commit-twice"]);
    // a variable and an environment variable it may be made of: not read as the same (lint cannot tell)
    const env = when(reverse, "${vars.rollback}") + when(recommit, "${env.ROLLBACK}");
    expect(await all(runbook(cutover + env, vars))).toEqual(["commit-twice"]);
    // a `when` no other step names: a maybe on its own, as before
    const alone = when(REVERSE, "${vars.rollback}") + RUNNING + recommit;
    // (after commit-twice the model keeps the flow as it was: the wait for COMMITTED is judged in RUNNING)
    expect(await all(runbook(cutover + alone, vars))).toEqual([
      "commit-twice",
      "wait-never-holds",
      "writes-off-before-commit",
    ]);
  });

  it("a reverse that may fail (continueOnError) under the shared `when`: judged as today, the second commit after a failed reverse", async () => {
    const rollback = "  - continueOnError: true\n    reverse: {}\n" + RUNNING + recommit;
    const tied = await all(runbook(cutover + when(rollback, "${vars.rollback}"), vars));
    // the flag is refused on a reverse; lint still judges the path where it failed and the run went on
    expect(tied).toEqual(expect.arrayContaining(["commit-twice", "continue-on-error-unsafe"]));
    // the path where the rollback runs says what the same steps say without a `when`
    expect(tied).toEqual(await all(runbook(cutover + rollback, vars)));
  });

  // the loaded `when` holds the default's value (false here): the rules that look ahead read
  // whether a step may run, not that value (`--var go=true` runs them)
  it("a check, its verify and the commit under one `when` whose default is false: the verify follows the check, the commit is in the runbook", async () => {
    const go = "vars: { go: false }\n";
    expect(await all(runbook(start + READY + when(CHECK + STOP + COMMIT + VERIFY, "${vars.go}"), go))).toEqual([]);
    // a commit that may run counts as one in the runbook: writesOff before it is said
    const early = when(CHECK + STOP + VERIFY + COMMIT, "${vars.go}");
    expect(await all(runbook(start + READY + early, go))).toContain("writes-off-before-commit");
  });

  it("a writesOn hook after a canWrite wait that runs whenever it does (the same variable, or always): no warning; else one", async () => {
    const on = "  - hook: { use: shell, with: { command: [app-on] }, writesOn: true }\n";
    const canWrite = "  - waitFor: { canWrite: true }\n";
    const committed = "  - waitFor: { state: COMMITTED }\n";
    const head = start + READY + STOP + "  - commit: {}\n";
    const vars2 = "vars: { a: true, b: true }\n";
    expect(await all(runbook(head + when(canWrite + on, "${vars.a}") + committed + VERIFY, vars2))).toEqual([]);
    // another variable (true by default, `--var a=false` skips the wait): the hook may run without it
    expect(
      await all(runbook(head + when(canWrite, "${vars.a}") + when(on, "${vars.b}") + committed + VERIFY, vars2)),
    ).toContain("writes-on-before-can-write");
  });

  it("past the variables a walk ties at once (4), a new one is judged step by step: more findings, never fewer", async () => {
    // four variables whose steps span the rollback's: the fifth, rollback, stays untied
    const open = ["a", "b", "c", "d"].map((v) => when("  - sleep: 1s\n", `\${vars.${v}}`)).join("");
    const close = open;
    const head = "vars: { rollback: false, a: true, b: true, c: true, d: true }\n";
    const rollback = when(reverse + recommit, "${vars.rollback}");
    expect(await all(runbook(cutover + open + rollback + close, head))).toContain("commit-twice");
    // three: it is tied
    const three = ["a", "b", "c"].map((v) => when("  - sleep: 1s\n", `\${vars.${v}}`)).join("");
    expect(await all(runbook(cutover + three + rollback + three, head))).toEqual([]);
  });
});

describe('verification in the documented order (service facts: "The recommended cutover")', () => {
  const WRITABLE = "  - waitFor: { canWrite: true }\n";

  it("check during change event application, writesOff after COMMITTED and canWrite: clean", async () => {
    expect(await problems(runbook(START + READY + CHECK + STOP + READY + COMMIT + WRITABLE + VERIFY))).toEqual([]);
    // verify alone (it starts the check itself) after commit: clean too
    expect(await problems(runbook(START + READY + STOP + COMMIT + VERIFY))).toEqual([]);
  });

  it('"writesOff belongs after the sync is COMMITTED": verify before commit, or before COMMITTED, is a warning', async () => {
    expect(await problems(runbook(START + READY + CHECK + STOP + VERIFY + COMMIT))).toEqual([
      "writes-off-before-commit",
    ]);
    // right after commit the sync is COMMITTING (or COMMITTED): not certain yet
    const { rules } = await lintYaml(
      runbook(START + READY + CHECK + STOP + "  - commit: {}\n" + VERIFY + "  - waitFor: { state: COMMITTED }\n"),
    );
    const early = rules.filter((d) => d.rule === "writes-off-before-commit");
    expect(early).toHaveLength(1);
    expect(early[0]!.message).toMatch(/COMMITTING/);
    expect(early[0]!.message).toMatch(
      /unique indexes non-unique, TTL indexes at their largest value and hidden indexes visible/,
    );
  });

  it("a runbook that only verifies (no commit in it, states unknown) is not warned: lint cannot know", async () => {
    expect(await problems(runbook(VERIFY, "writesStoppedExternally: true\n"))).toEqual([]);
  });

  it("verify before writes are stopped is warned (writesOff says writes stopped)", async () => {
    expect(await problems(runbook(START + READY + VERIFY + STOP + COMMIT))).toEqual([
      "verify-writes-off-early",
      "writes-off-before-commit",
    ]);
  });

  it("a wait for the verifier's result before any writesOff never ends: an error; after verify it is fine", async () => {
    const idle = "  - waitFor: { phase: idle }\n";
    expect(await problems(runbook(START + READY + CHECK + idle + STOP + COMMIT + VERIFY))).toEqual([
      "verifier-wait-without-writes-off",
    ]);
    const viaExpect = "  - waitFor: { expect: [{ path: verifier.phase, equals: idle }] }\n";
    expect(await problems(runbook(START + READY + CHECK + viaExpect + STOP + COMMIT + VERIFY))).toEqual([
      "verifier-wait-without-writes-off",
    ]);
    expect(await problems(runbook(START + READY + CHECK + STOP + COMMIT + VERIFY + idle))).toEqual([]);
    // an assert of the result there can never hold either
    expect(
      await problems(runbook(START + READY + CHECK + "  - assert: { phase: idle }\n" + STOP + COMMIT + VERIFY)),
    ).toEqual(["unreachable-after-assert"]);
    // a check that may not have run (an interpolated when): the wait may not be endless, but its
    // `idle` can still never be this cutover's result before a verify (issue 36)
    const maybe = "  - startVerification: {}\n    when: ${vars.check}\n";
    expect(
      await problems(runbook(START + READY + maybe + idle + STOP + COMMIT + VERIFY, "vars: { check: true }\n")),
    ).toEqual(["verifier-condition-not-earned"]);
  });

  it("a check that no verify step finishes is warned", async () => {
    expect(await problems(runbook(START + READY + CHECK + STOP + COMMIT))).toEqual(["verify-without-writes-off"]);
  });

  it("the embedded verifier's shorthand: on 1.9+, not before, not when the start turns it off, not in IDLE", async () => {
    const wait = '  - waitFor: { verification: { phase: "stream hashing", lagBelow: 5 } }\n';
    const v19 = (yaml: string): string => atVersion(yaml, "1.9.0");
    expect(await problems(v19(runbook(START + READY + wait + STOP + COMMIT + VERIFY)))).toEqual([]);
    expect(await problems(runbook(START + READY + wait + STOP + COMMIT + VERIFY))).toEqual([]);
    expect(await problems(atVersion(runbook(START + READY + wait + STOP + COMMIT + VERIFY), "1.8.0"))).toEqual([
      "wait-never-holds",
    ]);
    const off = "  - start: { source: cluster0, destination: cluster1, verification: { enabled: false } }\n";
    expect(await problems(v19(runbook(off + READY + wait + STOP + COMMIT + VERIFY)))).toEqual(["wait-never-holds"]);
    // a wait before the start neither holds nor counts for the commit
    expect(await problems(v19(runbook(wait + START + READY + STOP + COMMIT + VERIFY)))).toEqual([
      "commit-without-stream-hashing-wait",
      "wait-never-holds",
    ]);
  });

  // docs-cluster-to-cluster-sync v1.9 source/includes/fact-verifier-limitations.rst: "The verifier
  // doesn't support sharded clusters. If the migration includes a sharded cluster, mongosync
  // disables the verifier" (gone from v1.10's page). An adversarial run: no word of it on 1.9 sharded
  it("on 1.9 a migration that includes a sharded cluster has no embedded verifier: a wait on its phases never holds; from 1.10 it does", async () => {
    const wait = '  - waitFor: { verification: { phase: "stream hashing", lagBelow: 5 } }\n';
    const steps = START + READY + wait + STOP + COMMIT + VERIFY;
    const sharded = (yaml: string): string =>
      yaml.replace(/(cluster[01]): \{ topology: replicaSet/g, "$1: { topology: sharded, shards: 2");
    const yaml = atVersion(sharded(runbook(steps)), "1.9.0");
    // and the commit is not asked to wait for its stream hashing
    expect(await problems(yaml)).toEqual(["wait-never-holds"]);
    const { rules } = await lintYaml(yaml);
    expect(rules.find((x) => x.rule === "wait-never-holds")!.message).toContain(
      "the embedded verifier does not support sharded clusters before service 1.10: the migration includes one and mongosync disables it (the runbook declares 1.9.0)",
    );
    expect(await problems(atVersion(sharded(runbook(START + READY + STOP + COMMIT + VERIFY)), "1.9.0"))).toEqual([]);
    expect(await problems(atVersion(sharded(runbook(steps)), "1.10.0"))).toEqual([]);
    expect(await problems(atVersion(sharded(runbook(START + READY + STOP + COMMIT + VERIFY)), "1.10.0"))).toEqual([
      "commit-without-stream-hashing-wait",
    ]);
    // replica sets on 1.9, and a wait for "not started", hold
    expect(await problems(atVersion(runbook(steps), "1.9.0"))).toEqual([]);
    const notStarted = '  - waitFor: { verification: { phase: "not started" } }\n';
    expect(await problems(atVersion(sharded(runbook(START + notStarted)), "1.9.0"))).toEqual([]);
  });
});

// the cutover page's first step (mongodb/docs content/mongosync/current/source/reference/cutover-process.txt):
// "When using the embedded verifier check both the verification.source and the verification.destination …
// the phase fields should show stream hashing. If the verifier is not in the stream hashing phase, the
// cutover process might take a long time"; from 1.17 canCommit waits for it (release-notes/1.17.txt: "The
// /progress endpoint now reports canCommit: false until the verifier is in an appropriate state for commit")
describe("before 1.17, a commit waits for both embedded verifier sides in stream hashing", () => {
  const wait = '  - waitFor: { verification: { phase: "stream hashing", lagBelow: 5 } }\n';
  const v116 = (yaml: string): string => atVersion(yaml, "1.16.0");
  const warning = async (yaml: string): Promise<string[]> =>
    (await lintYaml(yaml)).rules.filter((d) => d.rule === "commit-without-stream-hashing-wait").map((d) => d.message);

  it("says where the verifier was left on: the start that does not turn it off, or the service's default", async () => {
    expect(await warning(v116(runbook(START + READY + STOP + COMMIT)))).toEqual([
      'The embedded verifier may be running (the start at line 10 does not turn it off), and no `waitFor: { verification: { phase: "stream hashing" } }` runs before this commit: on this version canCommit does not wait for it, and a cutover with the verifier not yet in stream hashing "might take a long time".',
    ]);
    // a cutover-only runbook: the fleet's sync started elsewhere, the verifier on by default
    expect(await warning(v116(runbook(READY + STOP + COMMIT)))).toEqual([
      'The embedded verifier may be running (on by default from service 1.9), and no `waitFor: { verification: { phase: "stream hashing" } }` runs before this commit: on this version canCommit does not wait for it, and a cutover with the verifier not yet in stream hashing "might take a long time".',
    ]);
    expect(await warning(atVersion(runbook(START + READY + STOP + COMMIT), "1.17.0"))).toEqual([]);
    expect(await warning(v116(runbook(START + READY + wait + STOP + COMMIT)))).toEqual([]);
  });

  it("a resume asks for the wait again: the embedded verifier starts again from the beginning", async () => {
    const pauseResume = "  - pause: {}\n  - resume: {}\n";
    expect(await warning(v116(runbook(START + READY + wait + pauseResume + READY + STOP + COMMIT)))).toHaveLength(1);
    expect(await warning(v116(runbook(START + READY + wait + pauseResume + READY + wait + STOP + COMMIT)))).toEqual([]);
  });
});

describe("messages", () => {
  it("never carry a password from a URL (values run through the loader's redact)", async () => {
    const yaml = runbook(START + READY + STOP + COMMIT).replace(
      "instances: [http://127.0.0.1:27182]",
      "instances: [http://admin:hunter2@10.1.2.3:27182]",
    );
    const { rules } = await lintYaml(yaml);
    const insecure = rules.find((d) => d.rule === "instance-insecure");
    expect(insecure).toBeDefined();
    expect(JSON.stringify(rules)).not.toContain("hunter2");
  });
});
