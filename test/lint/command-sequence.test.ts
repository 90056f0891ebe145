/**
 * What each command step does to lint's model of the fleet (src/steps/{start,commit,lifecycle}.ts
 * `sequence`), and the words of the findings it makes: the line it names, the variant of the
 * message that fits the runbook. test/lint/rules.test.ts pins which rule fires on which line;
 * these pin the model behind it and what the operator reads.
 *
 * - [spec-start] spec: "/start … The sync must be in the IDLE state."
 * - [spec-commit] spec: commit needs RUNNING with canCommit true; the documented cutover stops
 *   writes to the source before commit ("unless write blocking covers it").
 * - [facts-embedded] service facts: the embedded verifier (1.9+) is on unless the start body
 *   turns it off, and checks until commit; the verifier does not support DDL.
 * - [spec-reverse] spec: reverse needs COMMITTED and a start with `reversible: true`.
 */
import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/diagnostics.js";
import { COMMIT, READY, START, STOP, atVersion, lintYaml, notAside, runbook } from "../support/lint.js";

const COMMIT_ONLY = "  - commit: {}\n";
const HOOK = "  - hook: { use: shell, with: { command: [echo, hi] } }\n";
const FIRST = 10; // the line of the first step in runbook()

async function lint(yaml: string): Promise<Diagnostic[]> {
  const { loader, rules } = await lintYaml(yaml);
  expect(loader).toEqual([]);
  // (old versions here are on purpose: their end-of-life warning is tested in versions.test.ts)
  return rules.filter((d) => d.severity !== "info" && notAside(d));
}
const ids = (ds: Diagnostic[]) => ds.map((d) => d.rule);
const message = (ds: Diagnostic[], rule: string) => ds.find((d) => d.rule === rule)?.message;

describe("start", () => {
  it("[spec-start] a second start names the first, and changes nothing of the model", async () => {
    const ds = await lint(runbook(START + START + READY + STOP + COMMIT));
    expect(ids(ds)).toEqual(["start-twice"]);
    expect(message(ds, "start-twice")).toBe(
      `The sync is already started by the start at line ${FIRST}; start is allowed only in IDLE.`,
    );
  });

  it("[spec-start] a start after another command names it; a third start names the one after it", async () => {
    const ds = await lint(runbook("  - pause: {}\n" + START + START + READY + STOP + COMMIT));
    expect(message(ds, "start-not-first")).toBe(
      `start is allowed only in IDLE, and the pause at line ${FIRST} runs before it.`,
    );
    expect(message(ds, "start-twice")).toBe(
      `The sync is already started by the start at line ${FIRST + 1}; start is allowed only in IDLE.`,
    );
    expect(ids(ds)).toEqual(["start-not-first", "start-twice"]);
  });

  it("[spec-commit] a start resets the canCommit wait: one before it does not count for the commit after it", async () => {
    // (the wait before the start cannot hold on an IDLE fleet either: lint says so too)
    expect(ids(await lint(runbook(READY + START + STOP + COMMIT)))).toEqual([
      "wait-never-holds",
      "commit-without-can-commit-wait",
    ]);
  });

  it("[facts-embedded] 1.9+: the embedded verifier checks from the start until commit; off when the start says so; on before 1.9 only when asked", async () => {
    const rb = (start: string, version: string) =>
      atVersion(runbook(start + READY + HOOK + STOP + COMMIT + HOOK), version);
    const on = await lint(rb(START, "1.9.0"));
    // (and, before 1.17, the commit with no wait for both of its sides in stream hashing)
    expect(ids(on)).toEqual(["hook-during-verify", "commit-without-stream-hashing-wait"]);
    expect(on[0]!.line).toBe(FIRST + 2);
    expect(message(on, "hook-during-verify")).toBe(
      `This hook runs while the embedded verifier (on by default since service 1.9) checks from the start at line ${FIRST} until commit; the verifier does not support DDL, so the hook must run none.`,
    );
    const off = "  - start: { source: cluster0, destination: cluster1, verification: { enabled: false } }\n";
    expect(ids(await lint(rb(off, "1.9.0")))).toEqual([]);
    const asked = "  - start: { source: cluster0, destination: cluster1, verification: { enabled: true } }\n";
    expect(ids(await lint(rb(START, "1.8.0")))).toEqual([]);
    // (and lint says 1.8 does not know the field)
    expect(ids(await lint(rb(asked, "1.8.0")))).toEqual(["version-feature", "hook-during-verify"]);
  });
});

describe("commit", () => {
  it("[spec-commit] a second commit names the first", async () => {
    const ds = await lint(runbook(START + READY + STOP + COMMIT + COMMIT));
    expect(message(ds, "commit-twice")).toBe(
      `The sync is already committed by the commit at line ${FIRST + 3}; commit needs state RUNNING.`,
    );
  });

  it("[spec-commit] a commit the fleet cannot take is judged no further (no write-stop or canCommit findings)", async () => {
    expect(ids(await lint(runbook(START + "  - pause: {}\n" + COMMIT_ONLY)))).toEqual(["command-impossible-state"]);
  });

  it("[spec-commit] no stopWrites before it: said so; one after it does not count", async () => {
    const ds = await lint(runbook(START + READY + COMMIT + STOP));
    expect(message(ds, "commit-without-stop-writes")).toBe(
      'No stopWrites step runs before this commit; application writes to the source must be stopped, or data written during commit may be lost. Write blocking that covers the source counts (before 1.20: `enableUserWriteBlocking: true` or `"sourceAndDestination"` in start, which blocks source writes once commit is sent): with it, declare `writesStoppedExternally: true`.',
    );
  });

  it("[spec-commit] a stopWrites that may not have run (continueOnError): not sure it succeeded", async () => {
    const maybe =
      "  - { stopWrites: { use: shell, with: { command: [off] }, undo: { use: shell, with: { command: [on] } } }, continueOnError: true }\n";
    const ds = await lint(runbook(START + READY + maybe + COMMIT));
    expect(message(ds, "commit-without-stop-writes")).toMatch(
      /^No stopWrites step is sure to have succeeded before this commit \(one may be skipped or continue on error\); writes during commit may lose data\. /,
    );
  });

  it("[spec-commit] before 1.20, a start with write blocking on the source is named, whatever its spelling; not from 1.20, nor a start after the commit", async () => {
    const wb = (v: string) => `  - start: { source: cluster0, destination: cluster1, enableUserWriteBlocking: ${v} }\n`;
    const tail =
      ", and the start at line 10 sets it: declare `writesStoppedExternally: true` to say writes are stopped that way.";
    const v119 = (yaml: string): string => atVersion(yaml, "1.19.0");
    for (const v of ["true", '"sourceAndDestination"']) {
      const ds = await lint(v119(runbook(wb(v) + READY + COMMIT)));
      expect(message(ds, "commit-without-stop-writes")!.endsWith(tail)).toBe(true);
    }
    for (const v of ["false", '"destinationOnly"']) {
      const ds = await lint(v119(runbook(wb(v) + READY + COMMIT)));
      expect(message(ds, "commit-without-stop-writes")).toMatch(
        /: with it, declare `writesStoppedExternally: true`\.$/,
      );
    }
    const later = await lint(v119(runbook(READY + COMMIT + wb("true"))));
    expect(message(later, "commit-without-stop-writes")).toMatch(/: with it, declare/);
    const v120 = await lint(atVersion(runbook(wb("true") + READY + COMMIT), "1.20.0"));
    expect(message(v120, "commit-without-stop-writes")).toMatch(/: with it, declare/);
  });

  it("[spec-commit] writesStoppedExternally stands in for stopWrites", async () => {
    expect(ids(await lint(runbook(START + READY + COMMIT, "writesStoppedExternally: true\n")))).toEqual([]);
  });

  it("[spec-commit] no canCommit wait since the start: said so", async () => {
    const ds = await lint(runbook(START + STOP + COMMIT));
    expect(message(ds, "commit-without-can-commit-wait")).toBe(
      "No `waitFor: { canCommit: true }` runs before this commit (since the sync last started or resumed); commit needs RUNNING with canCommit true.",
    );
  });

  it("[facts-embedded] commit ends the embedded verifier's check, not the migration verifier's", async () => {
    const after = START.replace("}\n", ", verification: { enabled: true } }\n") + READY + STOP + COMMIT + HOOK;
    expect(ids(await lint(atVersion(runbook(after), "1.9.0")))).toEqual(["commit-without-stream-hashing-wait"]);
    const check = START + READY + "  - startVerification: {}\n" + STOP + COMMIT + HOOK + "  - verify: {}\n";
    expect(ids(await lint(runbook(check)))).toEqual(["hook-during-verify"]);
  });
});

describe("pause, resume, reverse", () => {
  // (from 1.20 `reversible` needs no `enableUserWriteBlocking`, which must not be sent)
  const REVERSIBLE = "  - start: { source: cluster0, destination: cluster1, reversible: true }\n";

  it("[spec-reverse] a reverse after a start without reversible: names the start; with it, or with no start, fine", async () => {
    const ds = await lint(runbook(START + READY + STOP + COMMIT + "  - reverse: {}\n"));
    expect(message(ds, "reverse-not-reversible")).toBe(
      `the start at line ${FIRST} does not set \`reversible: true\`, so the sync cannot be reversed.`,
    );
    expect(ids(await lint(runbook(REVERSIBLE + READY + STOP + COMMIT + "  - reverse: {}\n")))).not.toContain(
      "reverse-not-reversible",
    );
    expect(ids(await lint(runbook(READY + STOP + COMMIT + "  - reverse: {}\n")))).not.toContain(
      "reverse-not-reversible",
    );
    // a second start is start-twice and not recorded: the first (reversible) is the one judged
    expect(ids(await lint(runbook(REVERSIBLE + START + READY + STOP + COMMIT + "  - reverse: {}\n")))).not.toContain(
      "reverse-not-reversible",
    );
  });

  it("[spec-reverse] a reverse while a commit may not be COMMITTED yet: the pending commit is named with the reverse's line", async () => {
    const ds = await lint(runbook(REVERSIBLE + READY + STOP + COMMIT_ONLY + "  - reverse: {}\n"));
    const pending = ds.find((d) => /before the reverse/.test(d.message));
    expect(pending?.message).toContain(`before the reverse at line ${FIRST + 4}, which needs COMMITTED`);
  });

  it("a pause that may fail keeps the canCommit wait for the commit after it (only resume and start reset it)", async () => {
    const pause = "  - { pause: {}, continueOnError: true }\n";
    expect(ids(await lint(runbook(START + READY + pause + STOP + COMMIT)))).toEqual([]);
  });

  it("a reverse runs the sync the other way: its own write stop, canCommit wait and commit; change event application not yet seen", async () => {
    const back = REVERSIBLE + READY + STOP + COMMIT + "  - reverse: {}\n";
    expect(ids(await lint(runbook(back + COMMIT))).sort()).toEqual([
      "commit-without-can-commit-wait",
      "commit-without-stop-writes",
    ]);
    expect(ids(await lint(runbook(back + "  - pause: {}\n  - startVerification: {}\n")))).toContain(
      "verify-before-cea",
    );
  });
});

describe("continueOnError where a failure must end the run", () => {
  const flagged = (step: string): string => step.replace(/\n$/, "") + "\n    continueOnError: true\n";
  const reversible = "  - start: { source: cluster0, destination: cluster1, reversible: true }\n";

  it("on start, commit, reverse and stopWrites: refused at the flag, saying what going on would leave", async () => {
    const texts = async (yaml: string) =>
      (await lint(yaml)).filter((d) => d.rule === "continue-on-error-unsafe").map((d) => [d.line, d.message]);
    expect(await texts(runbook(flagged(START) + READY + STOP + COMMIT))).toEqual([
      [
        FIRST + 1,
        "`continueOnError` cannot apply to a start step: a start that failed may have reached some instances and not others: every later step would act on a fleet in doubt.",
      ],
    ]);
    expect(await texts(runbook(START + READY + STOP + flagged(COMMIT_ONLY)))).toEqual([
      [
        FIRST + 4,
        "`continueOnError` cannot apply to a commit step: a commit that failed or was refused leaves the cutover not committed: going on would end the run ok, exit 0, with nothing committed.",
      ],
    ]);
    expect((await texts(runbook(START + READY + flagged(STOP) + COMMIT))).map(([, m]) => m)).toEqual([
      "`continueOnError` cannot apply to a stopWrites step: a write stop that failed leaves writes in an unknown state (one switch off, another still on): the run must stop, and its undo turn writes back on.",
    ]);
    expect(
      (await texts(runbook(reversible + READY + STOP + COMMIT + flagged("  - reverse: {}\n")))).map(([, m]) => m),
    ).toEqual([
      "`continueOnError` cannot apply to a reverse step: a reverse that failed or was refused leaves the sync not reversed: going on would end the run ok, exit 0, without the reversal.",
    ]);
  });

  it("not on the other kinds: a pause, a resume, a wait or a hook may go on past a failure", async () => {
    const ok = ["  - pause: {}\n", "  - resume: {}\n", READY, HOOK].map(flagged).join("");
    const ds = await lint(runbook(START + READY + ok + STOP + COMMIT));
    expect(ids(ds)).not.toContain("continue-on-error-unsafe");
  });
});
