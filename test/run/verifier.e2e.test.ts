/**
 * The verification step kinds (`startVerification`, `verify`) against the simulator's verifier,
 * which follows the published verifier (spec/service-facts.md, "The migration verifier"). In
 * process, events asserted; what the verifier really received is read from the simulator's
 * request counts. Each test quotes the facts sentence it checks.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import { formatVerdict, prepareRehearsal } from "../../src/rehearse/index.js";
import { runRunbook, type RunResult } from "../../src/run/runner.js";
import { buildReport } from "../../src/report/index.js";
import { parseRunbook } from "../../src/runbook/index.js";
import type { Simulator } from "../../src/sim/index.js";
import {
  CHECK,
  cli,
  COMMIT,
  DRAINED,
  posts,
  READY,
  runbookFor,
  sim,
  START,
  STOP,
  tempDir,
  VERIFY,
} from "../support/run.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

let sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

async function fleet(opts: Parameters<typeof sim>[0] = {}): Promise<Simulator> {
  const s = await sim(opts);
  sims.push(s);
  return s;
}

async function run(
  yaml: string,
  opts: { onEvent?: (e: RunEvent) => void } = {},
): Promise<{ result: RunResult; events: RunEvent[]; ms: number }> {
  const loaded = await parseRunbook(yaml, "rb.yaml", { env: {} });
  expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
  const events: RunEvent[] = [];
  const t0 = Date.now();
  const result = await runRunbook({
    loaded,
    registry,
    listeners: [(e) => void events.push(e), (e) => opts.onEvent?.(e)],
    print: () => undefined,
  });
  return { result, events, ms: Date.now() - t0 };
}

/** What the verifier received: its operational requests. */
const asked = (s: Simulator) => ({
  check: s.control.counts().verifier["POST /api/v1/check"] ?? 0,
  writesOff: s.control.counts().verifier["POST /api/v1/writesOff"] ?? 0,
});
const decisions = (events: RunEvent[]) => events.filter((e): e is RunEventOf<"decision"> => e.type === "decision");
const logs = (events: RunEvent[]) => events.filter((e): e is RunEventOf<"log"> => e.type === "log");
const restarts = (events: RunEvent[]) =>
  events.filter((e): e is RunEventOf<"verifier.restarted"> => e.type === "verifier.restarted");
const verified = (events: RunEvent[]) => logs(events).some((l) => l.message.startsWith("verified:"));

/** The documented order: the check during change event application, writesOff once COMMITTED. */
const DOCUMENTED = START + READY + CHECK + STOP + DRAINED + COMMIT + VERIFY;

describe("verification in the documented order", () => {
  // facts, "The recommended cutover": "commit on every instance … wait for `canWrite` true … verify the data:
  // the migration verifier's `writesOff`, then its progress until done"
  it("check during change event application, writesOff after COMMITTED: verified, one check and one writesOff", async () => {
    const s = await fleet({ instances: 2 });
    const { result, events } = await run(runbookFor(s, DOCUMENTED));
    expect(result.exitCode, result.message).toBe(0);
    expect(asked(s)).toEqual({ check: 1, writesOff: 1 });
    expect(verified(events)).toBe(true);
    expect(events.filter((e) => e.type === "verifier.baseline")).toHaveLength(1);
    // writesOff left once every instance was COMMITTED
    const writesOff = events.find((e) => e.type === "request.sent" && e.path === "/api/v1/writesOff")!;
    const states = events
      .filter((e): e is RunEventOf<"progress.sampled"> => e.type === "progress.sampled" && e.seq < writesOff.seq)
      .slice(-2)
      .map((e) => e.progress.state);
    expect(states).toEqual(["COMMITTED", "COMMITTED"]);
    expect(posts(s, "commit")).toEqual([1, 1]);
  });

  // facts: "Before commit the service keeps unique indexes non-unique, TTL indexes at their largest value and
  // hidden indexes visible on the destination, so index metadata differs by design until commit"; "Success: …
  // `failedTasks` 0 **and `metadataMismatchTasks` 0**"
  it("writesOff before commit: the metadata mismatches fail verify with their count and why", async () => {
    const s = await fleet();
    const { result, events } = await run(runbookFor(s, START + READY + CHECK + STOP + DRAINED + VERIFY + COMMIT));
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /step verify failed: verification found differences: 4 metadata mismatch task\(s\) \(indexes, shard keys or collection options differ\); .*metadataMismatchTasks 4/,
    );
    expect(result.hint).toMatch(/before the sync was COMMITTED \(sync0 RUNNING\)/);
    expect(result.hint).toMatch(/unique indexes non-unique, TTL indexes at their largest value and hidden indexes/);
    expect(
      logs(events).some((l) => l.level === "warn" && /writesOff before the sync is COMMITTED/.test(l.message)),
    ).toBe(true);
    expect(verified(events)).toBe(false);
    expect(posts(s, "commit")).toEqual([0]);
  });
});

describe("one operational request at a time, never resent blindly", () => {
  // facts: "A client must never send a second `check`/`writesOff` while one may still be in flight (a timed-out
  // request may still be in flight), and must never resend one blindly."
  it("a writesOff answered after the request's time limit: no second operational request, and the run finishes", async () => {
    const s = await fleet({ faults: ["writes-off-slow=2500ms"] });
    const steps =
      START + READY + CHECK + STOP + DRAINED + COMMIT + "  - { id: verify, verify: { requestTimeout: 400ms } }\n";
    const { result, events } = await run(runbookFor(s, steps));
    expect(result.exitCode, result.message).toBe(0);
    expect(asked(s)).toEqual({ check: 1, writesOff: 1 });
    expect(s.control.state().verifier.exited).toBeNull();
    expect(
      decisions(events).some((d) => d.kind === "reconcile" && /writesOff: no answer .*not sent again/.test(d.reason)),
    ).toBe(true);
    expect(verified(events)).toBe(true);
  });

  it("a check lost before the verifier handled it: progress proves none runs, so it is sent again once; verified", async () => {
    const s = await fleet({ faults: ["reset=1@verifier/check"] });
    const { result, events } = await run(runbookFor(s, DOCUMENTED), {
      onEvent: (e) => {
        if (e.type === "decision" && /verifier check: no answer/.test(e.reason)) s.control.clearFaults();
      },
    });
    expect(result.exitCode, result.message).toBe(0);
    expect(asked(s)).toEqual({ check: 2, writesOff: 1 });
    expect(decisions(events).some((d) => /shows no check .* a new verification begins/.test(d.reason))).toBe(true);
    expect(events.filter((e) => e.type === "verifier.baseline")).toHaveLength(2);
  });

  it("a check handled but its answer lost: progress shows it running, so it is adopted, not sent again", async () => {
    const s = await fleet({ faults: ["reset-after=1@verifier/check"] });
    const { result, events } = await run(runbookFor(s, DOCUMENTED));
    expect(result.exitCode, result.message).toBe(0);
    expect(asked(s)).toEqual({ check: 1, writesOff: 1 });
    expect(events.filter((e) => e.type === "verifier.baseline")).toHaveLength(1);
  });

  // facts: "`check` … a `check` after one already ran is answered success and ignored"
  it("a check already running (started outside this run) is adopted: none is sent", async () => {
    const s = await fleet();
    const { result, events } = await run(runbookFor(s, DOCUMENTED), {
      onEvent: (e) => {
        // someone starts the check by hand while the run waits for the copy
        if (e.type === "step.finished" && e.id === "ready")
          void fetch(`${s.verifierUrl}/api/v1/check`, { method: "POST", body: "{}" });
      },
    });
    expect(result.exitCode, result.message).toBe(0);
    expect(asked(s)).toEqual({ check: 1, writesOff: 1 });
    expect(events.find((e) => e.type === "verifier.baseline")).toMatchObject({ adopted: true });
    expect(logs(events).some((l) => /already checking .* adopting that check/.test(l.message))).toBe(true);
  });

  // the published source: a check after a finished verification starts the change handling again, which panics
  it("a verifier that already finished a verification: no check is sent (it would exit), the step says why", async () => {
    const s = await fleet();
    expect((await run(runbookFor(s, DOCUMENTED))).result.exitCode).toBe(0);
    const again = await run(runbookFor(s, VERIFY, "writesStoppedExternally: true\n"));
    expect(again.result.exitCode).toBe(1);
    expect(again.result.message).toMatch(/the verifier already finished a verification \(phase idle, generation \d+/);
    expect(asked(s)).toEqual({ check: 1, writesOff: 1 });
    expect(s.control.state().verifier.exited).toBeNull();
  });
});

describe("refusals and a verifier that is gone fail fast, with what was seen", () => {
  // facts: "a failure to read a cluster time answers `{"error": "failed to fetch source's cluster time: …"}` …
  // An answer with a string `error` and no `success: true` is a refusal."
  it("a refused writesOff fails within seconds with the verifier's text, and is not retried", async () => {
    const s = await fleet({ faults: ["writes-off-refused=connection reset by peer"] });
    const steps = START + READY + CHECK + STOP + DRAINED + COMMIT + "  - { id: verify, verify: { timeout: 1h } }\n";
    const { result, ms } = await run(runbookFor(s, steps));
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /step verify failed: the verifier refused writesOff: failed to fetch source's cluster time: connection reset by peer/,
    );
    expect(result.hint).toMatch(/cannot be retried/);
    expect(ms).toBeLessThan(20_000);
    expect(asked(s).writesOff).toBe(1);
  });

  // facts: "`writesOff` a second time answers HTTP 200 `{"error": "writesOff already set"}` with no `success` field"
  it("writesOff already set by something else: a refusal that says so", async () => {
    const s = await fleet();
    const { result } = await run(runbookFor(s, DOCUMENTED), {
      onEvent: (e) => {
        if (e.type === "step.started" && e.id === "verify")
          void fetch(`${s.verifierUrl}/api/v1/writesOff`, { method: "POST", body: "{}" });
      },
    });
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /the verifier refused writesOff: writesOff already set \(this run had not sent it: something else did\)/,
    );
  });

  // facts: "the verifier then shuts its web server down and exits"; "a failed check makes the verifier exit"
  it("a verifier that exits fails the step within giveUpAfter, not at its timeout", async () => {
    const s = await fleet();
    const steps =
      START +
      READY +
      CHECK +
      STOP +
      DRAINED +
      COMMIT +
      "  - { id: verify, verify: { timeout: 1h, giveUpAfter: 1s } }\n";
    const { result, ms } = await run(runbookFor(s, steps), {
      onEvent: (e) => {
        if (e.type === "step.started" && e.id === "verify") s.control.addFault("verifier-exit");
      },
    });
    expect(s.control.state().verifier.exited).toBe("simulated exit");
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(/step verify failed: the verifier has failed for 1(\.\d+)?s: .*cannot connect/);
    expect(result.hint).toMatch(/not running/);
    expect(ms).toBeLessThan(20_000);
  });

  // facts: "A failure to read progress answers `{"error": …}` at the top level"
  it("progress answering a top-level {error}: the step fails within giveUpAfter with the verifier's text", async () => {
    const s = await fleet();
    const steps =
      START +
      READY +
      "  - { id: check, startVerification: { giveUpAfter: 1s, timeout: 1h } }\n" +
      STOP +
      DRAINED +
      COMMIT +
      VERIFY;
    const { result } = await run(runbookFor(s, steps), {
      onEvent: (e) => {
        if (e.type === "step.started" && e.id === "check")
          s.control.addFault("verifier-progress-error=server selection timeout");
      },
    });
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /step check failed: the verifier has failed for .*verifier\.progress refused: server selection timeout/,
    );
    expect(asked(s).check).toBe(0);
    // before commit: the write stop is undone
    expect(s.control.state().writes.enabled).toBe(true);
  });

  it("a verifier restarted after writesOff (the check and writesOff lost): the verification begins again once, and passes", async () => {
    const s = await fleet();
    let restarted = false;
    const paths = new Map<number, string>();
    const { result, events } = await run(runbookFor(s, DOCUMENTED), {
      onEvent: (e) => {
        if (e.type === "request.sent") paths.set(e.id, e.path);
        // the verifier restarts (a new process) right after it accepted writesOff
        if (!restarted && e.type === "response.received" && e.ok && paths.get(e.id) === "/api/v1/writesOff") {
          restarted = true;
          void s.control.restartVerifier();
        }
      },
    });
    expect(result.exitCode, result.message).toBe(0);
    expect(asked(s)).toEqual({ check: 2, writesOff: 2 });
    // facts: a process started with --clean shows the old counters until its first check, as one without it
    expect(restarts(events)).toMatchObject([
      {
        why: expect.stringMatching(/with tasks: .*with or without --clean: they look the same until a check/) as string,
      },
    ]);
    expect(verified(events)).toBe(true);
  });

  // facts: "A process restarted **without** `--clean` answers `idle`, generation 0, with the persisted counters of
  // generation 0 … until it gets a `check`, which **resumes** the persisted verification."
  it("a verifier restarted without --clean right after writesOff: never verified on its stale counters; a check resumes it, writesOff again, verified in a later generation", async () => {
    const s = await fleet();
    let restarted = false;
    const paths = new Map<number, string>();
    const { result, events } = await run(runbookFor(s, DOCUMENTED), {
      onEvent: (e) => {
        if (e.type === "request.sent") paths.set(e.id, e.path);
        if (!restarted && e.type === "response.received" && e.ok && paths.get(e.id) === "/api/v1/writesOff") {
          restarted = true;
          void s.control.restartVerifier({ clean: false });
        }
      },
    });
    expect(result.exitCode, result.message).toBe(0);
    expect(asked(s)).toEqual({ check: 2, writesOff: 2 });
    expect(restarts(events)).toMatchObject([
      {
        why: expect.stringMatching(/with tasks: .*with or without --clean: they look the same until a check/) as string,
      },
    ]);
    const baselines = events.filter((e): e is RunEventOf<"verifier.baseline"> => e.type === "verifier.baseline");
    expect(baselines.map((b) => b.resumes ?? false)).toEqual([false, true]);
    // the result comes from the resumed process, past its own writesOff's generation
    const offs = events.filter((e): e is RunEventOf<"verifier.writesOff"> => e.type === "verifier.writesOff");
    const line = logs(events).find((l) => l.message.startsWith("verified:"))!.message;
    const g = Number(/generation (\d+)/.exec(line)![1]);
    expect(g).toBeGreaterThan(offs.at(-1)!.generation);
    expect(line).not.toMatch(/processingTasks [1-9]|addedTasks [1-9]/);
    expect(s.control.state().verifier).toMatchObject({ resumed: true, exited: null });
    // the report tells the same story
    expect(buildReport(events).record.verifierSeen).toEqual([
      {
        t: expect.any(Number) as number,
        text: expect.stringMatching(
          /^the verifier restarted \(phase idle, generation 0, with tasks: a process before its check, .*\): followed \(1 of at most 2\): a check to the new process, then writesOff again$/,
        ) as string,
      },
    ]);
  });

  // facts: "Versions v0.1.6 to v0.2.0 answer `GET /progress` before the first `check` with an **empty HTTP 500**"
  it("a v0.2.0 verifier (empty HTTP 500 on progress before its check) gets its check, and the run finishes", async () => {
    const s = await fleet({ verifierRelease: "v0.2.0" });
    const { result, events } = await run(runbookFor(s, DOCUMENTED));
    expect(result.exitCode, result.message).toBe(0);
    expect(asked(s)).toEqual({ check: 1, writesOff: 1 });
    expect(events.find((e) => e.type === "verifier.baseline")).toMatchObject({ oldRelease: true });
    // said once by the reader, once before the check, and the first answer's judgement
    expect(
      logs(events)
        .filter((l) => /an empty HTTP 500/.test(l.message))
        .map((l) => l.level),
    ).toEqual(["warn", "warn", "info"]);
    expect(events.find((e) => e.type === "verifier.baseline")).toMatchObject({ unproven: "oldRelease" });
    expect(buildReport(events).record.verifierSeen).toMatchObject([
      {
        text: expect.stringMatching(
          /^progress answered an empty HTTP 500 before the check: releases v0\.1\.6 to v0\.2\.0 do .*whether or not their metadata holds an earlier verification/,
        ) as string,
      },
      {
        text: expect.stringMatching(
          /^the check's first answer showed a fresh verification: phase check, generation 0/,
        ) as string,
      },
    ]);
    expect(verified(events)).toBe(true);
  });
});

// issue 36: a verifier condition, and a verification, count only for this cutover's verification
// (src/steps/kit/earned.ts); a verifier whose metadata holds an earlier verification (persisted
// counters on v0.2.1, an empty HTTP 500 on v0.1.6 to v0.2.0, with or without --clean) gets the
// check, and its first answers decide; the remedy, a restart with --clean, then works.
describe("only this cutover's verification counts", () => {
  /** The documentation's own success test (verifier page, v1.7 to v1.13). */
  const SUCCESS = "  - { id: success, assert: { phase: idle, failedTasks: 0, metadataMismatchTasks: 0 } }\n";
  const WAIT_SUCCESS = "  - { id: success, waitFor: { phase: idle, failedTasks: 0, timeout: 1h } }\n";

  it("the documentation's success test on a verifier that never ran a check: the run fails at it, and a waitFor of it is refused at once", async () => {
    const s = await fleet();
    // the simulator's verifier meets it: idle, no failed task, no metadata mismatch
    expect(s.control.state().verifier).toMatchObject({ phase: "idle", checks: 0 });
    const { result } = await run(runbookFor(s, START + READY + STOP + DRAINED + COMMIT + SUCCESS));
    expect(result.exitCode).toBe(1);
    expect(result.failedStep).toBe("success");
    expect(result.message).toBe(
      "step success failed: this assert's condition on the verifier (phase idle, failedTasks 0, metadataMismatchTasks 0) counts only for this cutover's verification result, and there is none: no check of this cutover's reached the verifier (a `startVerification` or `verify` step sends it)",
    );
    expect(asked(s)).toEqual({ check: 0, writesOff: 0 });
    const t = await fleet();
    const waited = await run(runbookFor(t, START + READY + STOP + DRAINED + COMMIT + WAIT_SUCCESS));
    expect(waited.result.exitCode).toBe(1);
    expect(waited.result.message).toMatch(/^step success failed: this waitFor's condition on the verifier/);
    // at once, not at its hour's time limit
    expect(waited.ms).toBeLessThan(60_000);
  });

  it("a check but no writesOff: its result cannot be this cutover's; after verify the same success test passes", async () => {
    const s = await fleet();
    const early = await run(runbookFor(s, START + READY + CHECK + SUCCESS));
    expect(early.result.exitCode).toBe(1);
    expect(early.result.message).toMatch(/no writesOff of this cutover's reached the verifier/);
    const t = await fleet();
    const { result } = await run(runbookFor(t, DOCUMENTED + SUCCESS));
    expect(result.exitCode, result.message).toBe(0);
  });

  /** A fleet whose verifier's metadata holds a finished verification, restarted (`clean` as given). */
  async function holding(opts: Parameters<typeof sim>[0], clean: boolean): Promise<Simulator> {
    const s = await fleet(opts);
    const first = await run(runbookFor(s, DOCUMENTED));
    expect(first.result.exitCode, first.result.message).toBe(0);
    await s.control.restartVerifier({ clean });
    expect(s.control.state().verifier).toMatchObject({ holds: true, checks: 0 });
    return s;
  }
  /** A verification of an already committed fleet (writes stopped outside the runbook). */
  const AGAIN = "  - { id: verify-again, verify: {} }\n";
  const again = (s: Simulator) => runbookFor(s, AGAIN, "writesStoppedExternally: true\n");

  for (const release of ["v0.2.1", "v0.2.0"] as const) {
    it(`${release}: a check to a verifier holding an earlier verification resumes it: refused, no writesOff; restarted with --clean, the next run verifies`, async () => {
      const s = await holding({ verifierRelease: release }, false);
      const before = asked(s);
      const refused = await run(again(s));
      expect(refused.result.exitCode).toBe(1);
      expect(refused.result.message).toMatch(
        /^step verify-again failed: the verifier resumed a verification this cutover did not start: after this run's check it shows generation \d+ in its first answer, read [\d.]+m?s after the check was sent: the check resumed/,
      );
      expect(refused.result.hint).toMatch(
        release === "v0.2.0" ? /^verifier releases v0\.1\.6 to v0\.2\.0/ : /^Restart the verifier with --clean/,
      );
      // the check went (it is how the answer is learned), writesOff never did
      expect(asked(s)).toEqual({ check: before.check + 1, writesOff: before.writesOff });
      expect(refused.events.filter((e) => e.type === "verifier.origin")).toMatchObject([{ ours: false }]);
      expect(verified(refused.events)).toBe(false);
      // the remedy the operator is told: restart the verifier with --clean; before its check it
      // answers as before (facts: --clean acts when the check arrives), and the next run's check starts afresh
      await s.control.restartVerifier({ clean: true });
      expect(s.control.state().verifier).toMatchObject({ holds: true, clean: true });
      const ok = await run(again(s));
      expect(ok.result.exitCode, ok.result.message).toBe(0);
      expect(ok.events.filter((e) => e.type === "verifier.origin")).toMatchObject([{ ours: true }]);
      expect(verified(ok.events)).toBe(true);
      expect(s.control.state().verifier).toMatchObject({ holds: false, resumed: false });
    });
  }

  // issue 36, point 3: "a 'verified' with fewer documents compared than the total of a fresh
  // verification must be impossible". A v0.2.0 verifier restarted on an earlier cutover's metadata,
  // and a check someone sends it by hand: it resumes the persisted generation (check.go
  // "Resuming in-progress verification"), so it never compares, for this cutover, the documents
  // generation 0 compares. Adopted, its result was "verified". The simulated v0.2.0 has gen0Stats (api.go
  // from v0.1.10): the guard names generation 0's total from it.
  it("v0.2.0: a check sent by hand to a verifier holding an earlier verification resumes it past generation 0: not adopted, never verified", async () => {
    const s = await holding({ verifierRelease: "v0.2.0" }, false);
    const c = await fetch(`${s.verifierUrl}/api/v1/check`, { method: "POST", body: "{}" });
    expect(await c.json()).toEqual({ success: true });
    const before = asked(s);
    const { result, events } = await run(again(s));
    expect(s.control.state().verifier).toMatchObject({ resumed: true });
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /^step verify-again failed: the verifier is already checking, started outside this run, and not adopted: this cutover's verification did not begin at generation 0 for this cutover \(it was first seen in generation [1-9]\d*, started outside this run\), so it compared, for this cutover, not every document \(about \d+: generation 0's estimated count\) a fresh verification compares in generation 0: its last generation, [1-9]\d*, shows \d+ of \d+ docs to recheck compared \(this generation only, not a total\)/,
    );
    expect(result.hint).toMatch(/Restart the verifier with --clean .* then `syncbook run \S+ --resume`/);
    expect(asked(s)).toEqual(before);
    expect(verified(events)).toBe(false);
    expect(events.filter((e) => e.type === "verifier.verified")).toEqual([]);
  });

  it("a restart with --clean before the first run: the check's first answer shows a fresh verification, verified", async () => {
    const s = await holding({}, true);
    const { result, events } = await run(again(s));
    expect(result.exitCode, result.message).toBe(0);
    expect(events.find((e) => e.type === "verifier.baseline")).toMatchObject({ unproven: "persisted" });
    expect(events.filter((e) => e.type === "verifier.origin")).toMatchObject([{ ours: true }]);
  });

  // facts: "A `check` while one runs is answered success and ignored"
  it("a check someone else started: a verify with a filter refuses it; without one it is adopted", async () => {
    const s = await fleet();
    await run(runbookFor(s, START + READY));
    const c = await fetch(`${s.verifierUrl}/api/v1/check`, { method: "POST", body: "{}" });
    expect(await c.json()).toEqual({ success: true });
    const filtered = await run(
      runbookFor(
        s,
        "  - { id: verify, verify: { filter: { namespace: { $in: [app.orders] } } } }\n",
        "writesStoppedExternally: true\n",
      ),
    );
    expect(filtered.result.exitCode).toBe(1);
    expect(filtered.result.message).toMatch(/this step's filter would not apply to it/);
    expect(asked(s)).toEqual({ check: 1, writesOff: 0 });
  });
});

describe("the runner's own interlock", () => {
  it("writesOff before writes are stopped is refused before anything is sent to the verifier", async () => {
    const s = await fleet();
    const { result } = await run(runbookFor(s, START + READY + VERIFY + STOP + COMMIT));
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(/refused \(writes-stopped\)/);
    expect(asked(s)).toEqual({ check: 0, writesOff: 0 });
  });
});

describe("the embedded verifier (service 1.9+)", () => {
  // facts, "The recommended cutover": "progress: `canCommit` true and lag near 0 (with the embedded verifier:
  // both `verification` phases in `stream hashing`, their lag near 0)"
  it("waitFor verification: both sides in stream hashing with a low lag, on every instance, before commit", async () => {
    // a sharded fleet: "On by default: replica sets from 1.9, sharded clusters from 1.10"
    const s = await fleet({ instances: 2, serviceVersion: "1.10.0" });
    const embedded = '  - { id: hashed, waitFor: { verification: { phase: "stream hashing", lagBelow: 5 } } }\n';
    const yaml = runbookFor(s, START + READY + embedded + STOP + DRAINED + COMMIT + VERIFY).replace(
      'serviceVersion: "1.8.0"',
      'serviceVersion: "1.10.0"',
    );
    const { result, events } = await run(yaml);
    expect(result.exitCode, result.message).toBe(0);
    const met = events.find(
      (e): e is RunEventOf<"wait.status"> => e.type === "wait.status" && e.id === "hashed" && e.met,
    );
    expect(met).toBeDefined();
    const before = events.filter(
      (e): e is RunEventOf<"progress.sampled"> => e.type === "progress.sampled" && e.seq < met!.seq,
    );
    for (const p of before.slice(-2))
      expect(p.progress.verification).toMatchObject({
        source: { phase: "stream hashing" },
        destination: { phase: "stream hashing" },
      });
  });
});

describe("the rehearsal verdict", () => {
  // facts: "Success: … `failedTasks` 0 **and `metadataMismatchTasks` 0** (index, shard-key and collection-option
  // differences are counted only there; the verifier itself counts them as failures)"
  it("metadata mismatches make it unsafe, even when the run goes on past the failed verify", async () => {
    const yaml = `runbook: 1
name: early
serviceVersion: "1.8.0"
clusters: { cluster0: { topology: replicaSet }, cluster1: { topology: replicaSet } }
instances: [http://127.0.0.1:27182]
verifier: http://127.0.0.1:27020
steps:
${START}${READY}${CHECK}${STOP}${DRAINED}  - { id: verify, verify: {}, continueOnError: true }
${COMMIT}`;
    const loaded = await parseRunbook(yaml, "rb.yaml", { env: {} });
    const reh = await prepareRehearsal(loaded, { seed: 1 });
    try {
      const { registry } = await loadRunbookPlugins(reh.loaded, { callKinds: PLUGIN_CALL_KINDS });
      const result = await runRunbook({
        loaded: reh.loaded,
        registry,
        mode: "rehearse",
        timeScale: reh.timeScale,
        yes: true,
        print: () => undefined,
      });
      expect(result.exitCode, result.message).toBe(0);
      const v = await reh.verdict(result);
      expect(v.committed).toBe(1);
      expect(v.verifier).toMatchObject({ phase: "idle", failedTasks: 0, metadataMismatchTasks: 4, exited: null });
      expect(v.safe).toBe(false);
      expect(formatVerdict(v, 1000).join("\n")).toMatch(
        /verifier: +phase idle, failedTasks 0, metadataMismatchTasks 4 {2}← the clusters differ/,
      );
    } finally {
      await reh.close();
    }
  });
});

describe("a verification that keeps rechecking", () => {
  // issue 14 point 7: "a verify that sees rechecks for minutes says so periodically ('writes still arriving?')";
  // facts: each later generation (phase `recheck`) re-verifies what the previous one found different. A slow
  // recheck (one task per 5 simulated seconds) keeps generation 1 going for minutes.
  it("says so in runbook time while there is time, before the step's timeout", async () => {
    const s = await fleet({ model: { recheckTasksPerSecond: 0.2, recheckDocsPerTask: 1 } });
    const wait = (id: string, cond: string) => `  - { id: ${id}, waitFor: { ${cond}, timeout: 2h } }\n`;
    const yaml = runbookFor(
      s,
      START +
        wait("ready", "canCommit: true, lagBelow: 5") +
        CHECK +
        STOP +
        wait("drained", "canCommit: true, lagBelow: 3") +
        "  - { id: commit, commit: {} }\n" +
        wait("committed", "state: COMMITTED") +
        "  - { id: verify, verify: { timeout: 4m } }\n",
    );
    const loaded = await parseRunbook(yaml, "rb.yaml", { env: {} });
    const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    const events: RunEvent[] = [];
    // the runner's clock at the simulator's pace: 4 min of verify are 4.8 s here
    const result = await runRunbook({
      loaded,
      registry,
      timeScale: 50,
      listeners: [(e) => void events.push(e)],
      print: () => undefined,
    });
    expect(result.message).toMatch(/step verify failed: timed out after .*\(now phase recheck, generation 1/);
    const said = logs(events).filter((l) => l.level === "warn" && /rechecking/.test(l.message));
    expect(said.length).toBeGreaterThanOrEqual(1);
    expect(said[0]!.message).toMatch(
      /^the verifier has been rechecking for [23]m \d\ds \(generation 1\): writes still arriving\?/,
    );
    expect(asked(s)).toEqual({ check: 1, writesOff: 1 });
  });
});

// an adversarial run: `verify` with no stopWrites and no commit, forced past its writes-stopped
// interlock, the sync RUNNING and the application writing; the run said "verified" and the report
// SUCCEEDED · VERIFIED. The verifier never compares writes after writesOff (service facts: writesOff
// goes "after writes on the source have stopped"), so nothing of this cutover is verified.
describe("writesOff forced past writes-stopped", () => {
  it("the verifier's clean result is not a verification: the step fails, and status and the report say not verified, with why", async () => {
    const s = await fleet({ dataSet: { unique: 0, ttl: 0, hidden: 0 } });
    const dir = tempDir();
    try {
      writeFileSync(join(dir, "rb.yaml"), runbookFor(s, START + READY + VERIFY));
      const r = await cli(
        ["run", "rb.yaml", "--renderer", "simple", "--yes", "--force", "writes-stopped", "--report", "rep"],
        { cwd: dir },
      );
      expect(r.code, r.all).toBe(1);
      expect(asked(s)).toEqual({ check: 1, writesOff: 1 });
      expect(r.all).toMatch(/writesOff was sent with the application's writes not known stopped/);
      expect(r.all).not.toMatch(/■ run ok|· verified/);
      const report = JSON.parse(readFileSync(join(dir, "rep", "report.json"), "utf8")) as {
        verification: { verified: boolean };
      };
      expect(report.verification.verified).toBe(false);
      expect(readFileSync(join(dir, "rep", "report.html"), "utf8")).not.toMatch(/VERIFIED(?! )|data-verified="true"/);
      const status = await cli(["status", "rb.yaml"], { cwd: dir });
      expect(status.all).toContain(
        "  not this cutover's verification result: this cutover's writesOff was sent with the application's writes not known stopped (its writes-stopped interlock was forced)",
      );
      expect(status.all).not.toMatch(/verification: verified/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

// an adversarial run: `verify: { filter: { _id: { $exists: false } } }` matches no document, and the
// run, the report, status and the page said "verified". The check is "to only check documents
// within that filter" (mongodb-labs/migration-verifier README.md, v0.2.1): every output says so. A
// filter that matches documents here (the simulator's default); one that matches none is not
// verified at all (test/run/verifier-compared-nothing.e2e.test.ts).
describe("a verify with a filter", () => {
  it("is verified for the documents its filter matches, and every output says so", async () => {
    const s = await fleet({ dataSet: { unique: 0, ttl: 0, hidden: 0 } });
    const dir = tempDir();
    try {
      const filtered = '  - { id: verify, verify: { filter: { tenant: "acme" } } }\n';
      writeFileSync(
        join(dir, "rb.yaml"),
        runbookFor(
          s,
          START + READY + CHECK.replace("{}", '{ filter: { tenant: "acme" } }') + STOP + DRAINED + COMMIT + filtered,
        ),
      );
      const r = await cli(["run", "rb.yaml", "--renderer", "simple", "--yes", "--report", "rep"], { cwd: dir });
      expect(r.code, r.all).toBe(0);
      const words = `verified (only the documents the check's filter {"tenant":"acme"} matches)`;
      expect(r.all).toContain(`· ${words}`);
      const report = JSON.parse(readFileSync(join(dir, "rep", "report.json"), "utf8")) as {
        verification: { verified: boolean; filter?: string };
      };
      expect(report.verification).toMatchObject({ verified: true, filter: '{"tenant":"acme"}' });
      const html = readFileSync(join(dir, "rep", "report.html"), "utf8");
      expect(html).toContain("COMMITTED · VERIFIED (FILTERED)");
      expect(html).toContain("which covers only the documents the check&#39;s filter");
      const status = await cli(["status", "rb.yaml"], { cwd: dir });
      // status says it in the same words as the run's end (verificationText), on its end line and its verification line
      expect(status.all).toContain(`(committed) · ${words} at `);
      expect(status.all).toContain(`verification: ${words}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
