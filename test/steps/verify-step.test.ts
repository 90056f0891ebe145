/**
 * The verification's decisions (src/steps/verify.ts and the protocol in src/steps/kit/verifier.ts),
 * pinned against a scripted verifier and fleet (test/support/verifier-fake.ts): when `check` and
 * `writesOff` are sent, never resent, adopted or refused, how the result is judged, and when a gone
 * verifier fails the step. The end-to-end versions (test/run/verifier.e2e.test.ts) drive the
 * runner against the simulator; these are the fast ones mutation testing runs. Time is virtual:
 * each progress read moves a fake `Date` on (the fake's `tickMs`), timers stay real and short.
 *
 * Service facts, "The migration verifier" (/work/shared/spec/service-facts.md):
 * - [lock] "`check` and `writesOff` share a lock. A second one while the first is being handled is
 *   answered `{"success":false,"error":"APIError","errorDescription":"request in progress"}` and the
 *   verifier then shuts its web server down and exits. A client must never send a second
 *   `check`/`writesOff` while one may still be in flight (a timed-out request may still be in
 *   flight), and must never resend one blindly."
 * - [check] "`check` answers success at once and starts later; a `check` after one already ran is
 *   answered success and ignored."
 * - [writesoff-twice] "`writesOff` a second time answers HTTP 200 `{"error": "writesOff already
 *   set"}` with no `success` field; a failure to read a cluster time answers `{"error": "failed to
 *   fetch source's cluster time: …"}` the same way. An answer with a string `error` and no
 *   `success: true` is a refusal."
 * - [after-commit] "When the README's workflow sends `writesOff`: after writes on the source have
 *   stopped and the sync is COMMITTED. Before commit the service keeps unique indexes non-unique,
 *   TTL indexes at their largest value and hidden indexes visible on the destination, so index
 *   metadata differs by design until commit."
 * - [idle] "Phases: `idle`, `check`, `recheck`. `idle` means either "not started" or "finished": a
 *   client must track what it asked for. A failure to read progress answers `{"error": …}` at the
 *   top level; a failed check makes the verifier exit."
 * - [success] "Success: phase `idle` after a check ran, `error` null, `failedTasks` 0 and
 *   `metadataMismatchTasks` 0 (index, shard-key and collection-option differences are counted only
 *   there; the verifier itself counts them as failures)."
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mayStillArrive, ServiceError, TransportError, type VerifierProgress } from "../../src/api/index.js";
import type { RunEvent } from "../../src/events.js";
import type { RuleInfo } from "../../src/diagnostics.js";
import { stoppedInCommitWords, type Fleet, type StoppedInCommit } from "../../src/fleet/index.js";
import type { Step } from "../../src/runbook/types.js";
import { StepFailure, StepTimeout, verifierEarned, type VerifierMemory } from "../../src/steps/index.js";
import { WRITES_OFF_FORCED } from "../../src/steps/kit/earned.js";
import { verifierJournal } from "../../src/journal/verifier.js";
import type { Flow, SequenceStep } from "../../src/steps/kit/sequence.js";
import {
  askOf,
  describeVerifier,
  DEFAULT_VERIFIER_GIVE_UP_MS,
  DEFAULT_VERIFIER_REQUEST_TIMEOUT_MS,
  refused,
  VerifierReader,
  verifierTools,
} from "../../src/steps/kit/verifier.js";
import { METADATA_BEFORE_COMMIT, verify } from "../../src/steps/verify.js";
import { forgetVerification, reversedVerification } from "../../src/api/verifier-memory.js";
import { assert as assertKind } from "../../src/steps/assert.js";
import { waitFor } from "../../src/steps/wait-for.js";
import { failure, reasons, scripted, type Read } from "../support/fleet-fake.js";
import {
  CHECKING,
  FRESH,
  PASSED,
  VERIFIER_URL,
  scriptedVerifier,
  verifierContext,
  vp,
  type VContextOptions,
  type VScript,
  type VState,
} from "../support/verifier-fake.js";

type Decision = Extract<RunEvent, { type: "decision" }>;
type Log = Extract<RunEvent, { type: "log" }>;
type Body = Parameters<typeof verify.run>[1];

const COMMITTED: Read = { state: "COMMITTED", info: "commit completed" };
const CEA = "change event application";

interface Setup extends VContextOptions {
  /** Each instance's progress reads (default: one instance, COMMITTED). */
  fleet?: Read[][];
  writesStopped?: boolean;
  external?: boolean;
  commitSent?: boolean;
  /** That commit went past its forced writes-stopped interlock. */
  commitWritesForced?: boolean;
}

/** A verify step over a scripted verifier and fleet, with the run's memory as the test sets it. */
function setup(script: VScript, o: Setup = {}) {
  const v = scriptedVerifier(script);
  const f = scripted({ sends: [], reads: o.fleet ?? [[COMMITTED]] });
  const { ctx, events } = verifierContext(f.fleet, v.verifier, o);
  ctx.run.memory.writesStopped = o.writesStopped ?? true;
  ctx.run.memory.commitSent = o.commitSent ?? false;
  if (o.commitWritesForced !== undefined) ctx.run.memory.commitWritesForced = o.commitWritesForced;
  if (o.external !== undefined) Object.assign(ctx.run.runbook, { writesStoppedExternally: o.external });
  const decisions = () => events.filter((e): e is Decision => e.type === "decision");
  const logs = (level: Log["level"]) =>
    events.flatMap((e) => (e.type === "log" && e.level === level ? [e.message] : []));
  const of = <T extends RunEvent["type"]>(type: T) =>
    events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
  return {
    v,
    f,
    ctx,
    events,
    m: ctx.run.memory.verifier,
    decisions,
    reconcile: () => reasons(events, "reconcile"),
    logs,
    of,
    run: (body: Body = {}) => verify.run(ctx, body),
  };
}

/** The documented verifier: no check until one is sent, checking until writesOff, then `end`. */
const documented =
  (end: VerifierProgress = PASSED) =>
  (s: VState): VerifierProgress =>
    s.check === 0 ? FRESH : s.writesOff === 0 ? CHECKING : end;

/** The memory of a run that had its check accepted (journaled), on a verifier fresh before it. */
const accepted = (more: Partial<VerifierMemory> = {}): VerifierMemory => ({
  baseline: FRESH,
  adopted: false,
  check: { answered: "ok", at: Date.now() },
  fromStart: true,
  ...more,
});

const NOT_A_RESULT_HINT =
  "Nothing is verified. Read the verifier's log (is it the migration verifier, release v0.2.1?). `syncbook run rb.yaml --resume` continues this verification (nothing is resent blindly); or restart the verifier with --clean (or on a new metadata database), then `syncbook run rb.yaml --resume` verifies from the start.";

const VERIFIED = `verified: phase idle, generation 2, totalTasks 8, completedTasks 8, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0 (writesOff was sent in generation 0)`;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("verify: the documented order", () => {
  it("[check][after-commit] check, writesOff once, then progress until idle: verified", async () => {
    const s = setup({ progress: documented() });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    // each with its own long time limit (a check or writesOff may wait for a check's setup), the check's body `{}`
    expect(s.v.sent.map((x) => x.opts)).toEqual([
      { signal: s.ctx.signal, timeoutMs: DEFAULT_VERIFIER_REQUEST_TIMEOUT_MS },
      { signal: s.ctx.signal, timeoutMs: DEFAULT_VERIFIER_REQUEST_TIMEOUT_MS },
    ]);
    expect(DEFAULT_VERIFIER_REQUEST_TIMEOUT_MS).toBe(300_000);
    expect(s.m.check).toEqual({ answered: "ok", at: expect.any(Number) as number });
    expect(s.m.writesOff).toEqual({ answered: "ok", at: expect.any(Number) as number });
    expect(s.m.adopted).toBe(false);
    expect(s.m.baseline).toEqual(FRESH);
    expect(s.of("verifier.baseline")).toMatchObject([
      { index: 0, id: "cmd", progress: FRESH, adopted: false, fromStart: true },
    ]);
    expect(s.m.fromStart).toBe(true);
    expect(s.m.verified).toEqual({ at: expect.any(Number) as number, generation: 2 });
    expect(s.logs("info")).toEqual([VERIFIED]);
    expect(s.logs("warn")).toEqual([]);
    // the fleet's states writesOff meets: read once, right before it
    expect(s.f.reads).toBe(2);
    // the verifier read right before writesOff: the generation it meets, journaled
    expect(s.of("verifier.writesOff")).toMatchObject([{ index: 0, id: "cmd", generation: 0 }]);
    expect(s.m.writesOffGeneration).toBe(0);
  });

  it("a check's filter and requestTimeout reach the check (the time limit also writesOff), unscaled", async () => {
    const filter = { includeNamespaces: [{ database: "shop" }] };
    const s = setup({ progress: documented() }, { scale: (ms) => ms / 10 });
    await s.run({ filter, requestTimeout: "2m" });
    expect(s.v.sent.map((x) => x.opts)).toEqual([
      { signal: s.ctx.signal, timeoutMs: 120_000, filter },
      { signal: s.ctx.signal, timeoutMs: 120_000 },
    ]);
  });

  it("[idle] progress in check or recheck is not a result: judged only once idle", async () => {
    const s = setup({
      progress: (st) => (st.writesOff === 0 ? documented()(st) : st.n < 6 ? vp("recheck", 1) : PASSED),
    });
    await s.run();
    expect(s.v.reads).toBe(7);
    expect(s.logs("info")).toEqual([VERIFIED]);
  });
});

describe("verify: writesOff is sent once per verification [lock]", () => {
  it("accepted earlier in this run (or the run it resumes): not sent again, and the interlock is not asked again", async () => {
    const s = setup(
      { progress: [CHECKING, PASSED] },
      { memory: accepted({ writesOff: { answered: "ok", at: 1 }, writesOffGeneration: 0 }), writesStopped: false },
    );
    await s.run();
    expect(s.v.ops()).toEqual([]);
    expect(s.f.reads).toBe(0);
    expect(s.decisions()).toEqual([
      expect.objectContaining({
        kind: "reconcile",
        ok: true,
        index: 0,
        id: "cmd",
        reason: "writesOff was accepted earlier in this run: not sent again",
      }),
    ]);
    expect(s.logs("info")).toEqual([VERIFIED]);
  });

  it("sent earlier and its answer lost: not sent again (it may be in flight; a second one shuts the verifier down)", async () => {
    const s = setup(
      { progress: [CHECKING, PASSED] },
      {
        memory: accepted({ writesOff: { answered: "unknown", at: 1, inFlight: true }, writesOffGeneration: 0 }),
        writesStopped: false,
      },
    );
    await s.run();
    expect(s.v.ops()).toEqual([]);
    expect(s.reconcile()).toEqual([
      "writesOff was sent earlier in this run and its answer was lost: not sent again (a second one while it may be in flight shuts the verifier down); the verifier finishing shows it arrived",
    ]);
  });

  it("refused earlier: sent (a refusal is an answer: it did not take), after the interlock again", async () => {
    const s = setup(
      { progress: [CHECKING, CHECKING, PASSED] },
      { memory: accepted({ writesOff: { answered: "error", at: 1, error: "x" } }) },
    );
    await s.run();
    expect(s.v.ops()).toEqual(["writesOff"]);
    expect(s.decisions().map((d) => [d.kind, d.check, d.ok])).toEqual([["interlock", "writes-stopped", true]]);
  });

  it.each([
    ["timeout", { inFlight: true }, "no answer within 5m"],
    ["aborted", { inFlight: true }, "aborted"],
    ["reset", {}, "connection reset (ECONNRESET)"],
  ] as const)(
    "its answer lost now (%s): not sent again; the verifier finishing shows it arrived",
    async (answer, more, detail) => {
      const s = setup({ writesOff: [answer], progress: documented() });
      await s.run();
      expect(s.v.ops()).toEqual(["check", "writesOff"]);
      const message = `${VERIFIER_URL}: writesOff failed: ${detail}`;
      expect(s.m.writesOff).toEqual({ answered: "unknown", at: expect.any(Number) as number, error: message, ...more });
      expect(s.decisions().filter((d) => d.kind === "reconcile")).toMatchObject([
        {
          ok: true,
          index: 0,
          id: "cmd",
          reason: `verifier writesOff: no answer (${message}); not sent again (a second one while it may be in flight shuts the verifier down): the verifier finishing will show it arrived`,
        },
      ]);
      expect(s.logs("info")).toEqual([VERIFIED]);
    },
  );

  it("an empty HTTP 500 to writesOff (its panic): fails, not resent", async () => {
    const s = setup({ writesOff: ["non-json"], progress: documented() });
    const e = await failure(s.run());
    expect(e.message).toBe(`verifier writesOff failed: ${VERIFIER_URL}: writesOff failed: HTTP 500 non-JSON answer`);
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  it("the step's time limit while writesOff is on its way: a timeout failure that says what it waited for", async () => {
    const c = new AbortController();
    const s = setup(
      {
        writesOff: ["aborted"],
        progress: documented(),
        onCommand: (op) => op === "writesOff" && c.abort(new StepTimeout(1000)),
      },
      { signal: c.signal },
    );
    const e = await failure(s.run());
    expect(e.reason).toBe("timeout");
    expect(e.message).toBe("timed out after 1s waiting for the verifier's answer to writesOff: nothing reported yet");
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  it("Ctrl-C while writesOff is on its way: the interruption is passed on as is, after the decision is recorded", async () => {
    const c = new AbortController();
    const stop = new Error("interrupted");
    const s = setup(
      { writesOff: ["aborted"], progress: documented(), onCommand: (op) => op === "writesOff" && c.abort(stop) },
      { signal: c.signal },
    );
    await expect(s.run()).rejects.toBe(stop);
    expect(s.reconcile()).toHaveLength(1);
    expect(s.m.writesOff).toMatchObject({ answered: "unknown", inFlight: true });
  });
});

describe("verify: the writes-stopped interlock, before writesOff", () => {
  // "If mongosync stops during commit, before the /progress endpoint reports canWrite: true, you
  // must restart the entire migration to ensure that it's verified" (docs-cluster-to-cluster-sync
  // source/includes/fact-verification.rst): no result of this verifier can verify the cutover
  const SIC: StoppedInCommit = { instance: "sync1", at: Date.parse("2026-12-06T15:00:00Z"), how: "initializing" };
  it("an instance stopped during the commit: refused (stopped-in-commit) before anything is sent or read, with the restart", async () => {
    const s = setup({ progress: documented() }, { stoppedInCommit: () => SIC });
    const e = await failure(s.run());
    expect(e.reason).toBe("interlock");
    expect(e.message).toBe(`refused (stopped-in-commit): ${stoppedInCommitWords(SIC)}`);
    expect(e.beforeResume).toBe(false);
    expect(e.hint).toMatch(
      /^This step took no verification result for this cutover, and the commit holds on the fleet\. Restart the migration \(a new sync to an emptied destination\), then: `syncbook run rb\.yaml --new-cutover`; or, only if .*, `syncbook run rb\.yaml --resume --force=stopped-in-commit`\.$/,
    );
    expect(s.v.ops()).toEqual([]);
    expect(s.v.reads).toBe(0);
    expect(s.f.reads).toBe(0);
    expect(s.decisions()).toMatchObject([{ kind: "interlock", check: "stopped-in-commit", ok: false }]);
  });

  it("an instance seen stopped during the commit while the step ran (its fleet read): the result is not taken", async () => {
    // the window learns of it once the step began (before its first read, nothing)
    const seen: { now?: StoppedInCommit } = {};
    const s = setup({ progress: documented() }, { stoppedInCommit: () => seen.now });
    const run = s.run();
    seen.now = SIC;
    const e = await failure(run);
    expect(e.reason).toBe("interlock");
    expect(s.v.ops()).toContain("writesOff");
    expect(s.m.verified).toBeUndefined();
    expect(s.decisions().filter((d) => d.check === "stopped-in-commit")).toMatchObject([
      { kind: "interlock", ok: false },
    ]);
  });

  it("--force=stopped-in-commit: the step runs and passes, each asking said as forced", async () => {
    const s = setup({ progress: documented() }, { stoppedInCommit: () => SIC, force: ["stopped-in-commit"] });
    await s.run();
    expect(s.v.ops()).toContain("writesOff");
    expect(s.decisions().filter((d) => d.check === "stopped-in-commit")).toMatchObject([
      { kind: "force", ok: true },
      { kind: "force", ok: true },
    ]);
  });

  it("writes not stopped: refused before anything is sent or read", async () => {
    const s = setup({ progress: documented() }, { writesStopped: false });
    const e = await failure(s.run());
    expect(e.reason).toBe("interlock");
    expect(e.message).toBe(
      "refused (writes-stopped): writesOff tells the verifier that writes have stopped, and no stopWrites step has succeeded in this run",
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(
      "Run verify after stopWrites and commit (the documented order), or set `writesStoppedExternally: true` if writes are stopped another way.",
    );
    expect(s.v.ops()).toEqual([]);
    expect(s.v.reads).toBe(0);
    expect(s.f.reads).toBe(0);
    expect(s.decisions()).toMatchObject([{ kind: "interlock", check: "writes-stopped", ok: false }]);
  });

  it.each([
    ["a stopWrites step succeeded", { writesStopped: true }],
    ["writesStoppedExternally", { external: true }],
    ["commit was sent (writes stop before commit)", { commitSent: true }],
  ] as const)("passes when %s", async (_, o) => {
    const s = setup({ progress: documented() }, { writesStopped: false, ...o });
    await s.run();
    expect(s.decisions()[0]).toMatchObject({
      kind: "interlock",
      check: "writes-stopped",
      ok: true,
      reason: "writes are stopped: the verifier may be told so (writesOff)",
    });
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  // an outside conformance review: the stopWrites hook failed, `--resume --force=writes-stopped`
  // sent the commit with writes flowing, and verify passed its interlock on that commit alone,
  // sent writesOff and said "verified"
  it("a commit sent past its forced writes-stopped interlock: refused before anything is sent or read, saying why and the way on", async () => {
    const s = setup({ progress: documented() }, { writesStopped: false, commitSent: true, commitWritesForced: true });
    const e = await failure(s.run());
    expect(e.reason).toBe("interlock");
    expect(e.message).toBe(
      "refused (writes-stopped): writesOff tells the verifier that writes have stopped, and this sync's commit was sent with the application's writes not known stopped (its writes-stopped interlock was forced), and no stopWrites step has held since",
    );
    expect(e.hint).toBe(
      "Stop the application's writes, declare `writesStoppedExternally: true` in the runbook, then `syncbook run rb.yaml --resume --allow-changed-runbook`: writesOff goes once they have stopped, and the verifier compares what the commit left. Or `syncbook run rb.yaml --resume --force=writes-stopped`: this step runs, and the cutover stays not verified.",
    );
    // it names a runbook edit, then the --resume with the flag that edit needs: status and the page
    // offer that one, not a plain --resume (refused again: a review)
    expect(e.beforeResume).toBe(true);
    expect(e.resumeFlags).toEqual(["--allow-changed-runbook"]);
    expect(s.v.ops()).toEqual([]);
    expect(s.v.reads).toBe(0);
    expect(s.f.reads).toBe(0);
    expect(s.decisions()).toMatchObject([{ kind: "interlock", check: "writes-stopped", ok: false }]);
  });

  it("a commit sent past its forced interlock, verify forced too: writesOff said as forced, and not verified", async () => {
    const s = setup(
      { progress: documented() },
      { writesStopped: false, commitSent: true, commitWritesForced: true, force: ["writes-stopped"] },
    );
    const e = await failure(s.run());
    expect(s.decisions()[0]).toMatchObject({ kind: "force", ok: true, check: "writes-stopped" });
    expect(s.of("verifier.writesOff")).toMatchObject([{ forced: true }]);
    expect(s.m.writesOffForced).toBe(true);
    expect(s.m.verified).toBeUndefined();
    expect(e.message).toBe(`not verified: ${WRITES_OFF_FORCED} (${describeVerifier(PASSED)})`);
  });

  // a review: the stop's hook held, its `check:` then saw writes flowing, and the commit was forced
  // past that refusal: the stop that held before it says nothing of the writes since
  it("a stopWrites that held before a commit forced past the writes-stopped interlock does not count: refused", async () => {
    const s = setup({ progress: documented() }, { writesStopped: true, commitSent: true, commitWritesForced: true });
    const e = await failure(s.run());
    expect(e.reason).toBe("interlock");
    expect(e.message).toMatch(/^refused \(writes-stopped\): .*its writes-stopped interlock was forced/);
    expect(s.v.ops()).toEqual([]);
    // a stop that held, the commit unforced: as ever
    const ok = setup({ progress: documented() }, { writesStopped: true, commitSent: true, commitWritesForced: false });
    await ok.run();
    expect(ok.m.verified).toBeDefined();
  });

  it.each([
    ["writesStoppedExternally", { external: true }],
    ["the commit's interlock was not forced", { commitWritesForced: false }],
  ] as const)("a commit sent, %s: writesOff goes unforced, verified", async (_, o) => {
    const s = setup(
      { progress: documented() },
      { writesStopped: false, commitSent: true, commitWritesForced: true, ...o },
    );
    await s.run();
    expect(s.decisions()[0]).toMatchObject({ kind: "interlock", check: "writes-stopped", ok: true });
    expect(s.of("verifier.writesOff")[0]).not.toHaveProperty("forced");
    expect(s.m.verified).toBeDefined();
  });

  it("writesStoppedExternally false is not a stop", async () => {
    const s = setup({ progress: documented() }, { writesStopped: false, external: false });
    await failure(s.run());
    expect(s.v.ops()).toEqual([]);
  });

  // an adversarial run: `--force writes-stopped` with the sync RUNNING and writes on, and the report
  // said SUCCEEDED · VERIFIED; writes after writesOff are never compared
  it("--force=writes-stopped lets writesOff through, said as forced, and its result verifies nothing", async () => {
    const s = setup({ progress: documented() }, { writesStopped: false, force: ["writes-stopped"] });
    const e = await failure(s.run());
    expect(s.decisions()[0]).toMatchObject({ kind: "force", ok: true, check: "writes-stopped" });
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    expect(s.of("verifier.writesOff")).toMatchObject([{ forced: true }]);
    expect(s.of("verifier.verified")).toEqual([]);
    expect(s.m.verified).toBeUndefined();
    expect(s.m.writesOffForced).toBe(true);
    expect(e.message).toBe(`not verified: ${WRITES_OFF_FORCED} (${describeVerifier(PASSED)})`);
    expect(e.message).toMatch(/writes-stopped interlock was forced/);
    expect(e.reason).toBe("unsafe");
    // said with the --resume its hint names (status, the page, the run's end), not a plain one
    expect(e.beforeResume).toBe(true);
    expect(e.resumeFlags).toEqual(["--allow-changed-runbook"]);
    expect(e.hint).toMatch(/^Nothing is verified for this cutover\. Stop the application's writes/);
    expect(e.hint).toMatch(/--resume --allow-changed-runbook`/);
    // the journal's fold keeps it, so that a --resume, status and the report say the same
    const j = verifierJournal();
    for (const ev of s.events) j.apply(ev);
    expect(j.state().writesOffForced).toBe(true);
    expect(verifierEarned(s.m, PASSED)).toEqual({ result: WRITES_OFF_FORCED });
  });

  // the verifier's README (v0.2.1): a check's filter is "to only check documents within that
  // filter"; an adversarial run: a filter that matched nothing, and every output said "verified"
  it("a check with a filter: journaled with the verification and its result, kept by the memory and the journal's fold; none without", async () => {
    const s = setup({ progress: documented() });
    await s.run({ filter: { _id: { $exists: false } } });
    const f = '{"_id":{"$exists":false}}';
    expect(s.of("verifier.baseline")).toMatchObject([{ filter: f }]);
    expect(s.of("verifier.verified")).toMatchObject([{ filter: f }]);
    expect(s.m.filter).toBe(f);
    expect(s.logs("info").find((l) => l.startsWith("verified:"))).toMatch(
      /; only the documents the check's filter \{"_id":\{"\$exists":false\}\} matches$/,
    );
    const j = verifierJournal();
    for (const ev of s.of("verifier.baseline")) j.apply(ev);
    expect(j.state().filter).toBe(f);
    const plain = setup({ progress: documented() });
    await plain.run();
    expect(plain.of("verifier.baseline")[0]).not.toHaveProperty("filter");
    expect(plain.of("verifier.verified")[0]).not.toHaveProperty("filter");
    expect("filter" in plain.m).toBe(false);
    j.apply(plain.of("verifier.baseline")[0] as never);
    expect("filter" in j.state()).toBe(false);
  });

  it("a writesOff with writes known stopped is not forced, and a new one clears an earlier forced one", async () => {
    const s = setup({ progress: documented() }, { memory: { writesOffForced: true } });
    await s.run();
    expect(s.of("verifier.writesOff")).toEqual([expect.not.objectContaining({ forced: true })]);
    expect(s.m.writesOffForced).toBeUndefined();
    expect(s.m.verified).toBeDefined();
    const j = verifierJournal();
    j.apply({ type: "verifier.writesOff", seq: 1, at: 1, index: 0, id: "v", generation: 0, forced: true });
    j.apply({ type: "verifier.writesOff", seq: 2, at: 2, index: 0, id: "v", generation: 1 });
    expect(j.state().writesOffForced).toBeUndefined();
  });

  // a review: the stop declared after a forced writesOff, the verifier not restarted: the hint said
  // to declare it again, and the --resume offered carried --allow-changed-runbook, needed no more
  it("a forced writesOff's result after the stop was declared: the verifier's restart and a plain --resume", async () => {
    const s = setup(
      { progress: [PASSED] },
      {
        memory: accepted({ writesOff: { answered: "ok", at: 1 }, writesOffGeneration: 0, writesOffForced: true }),
        external: true,
      },
    );
    const e = await failure(s.run());
    expect(e.message).toBe(`not verified: ${WRITES_OFF_FORCED} (${describeVerifier(PASSED)})`);
    expect(e.hint).toBe(
      "Nothing is verified for this cutover. The runbook declares the application's writes stopped (`writesStoppedExternally: true`), and this verifier's writesOff went before that: restart the verifier with --clean (or on a new metadata database), then `syncbook run rb.yaml --resume`: this step sends a new check and writesOff.",
    );
    expect(e.beforeResume).toBe(true);
    expect(e.resumeFlags).toBeUndefined();
    expect(s.v.ops()).toEqual([]);
  });

  it("asked again when the earlier writesOff was refused", async () => {
    const s = setup(
      { progress: [CHECKING, PASSED] },
      { memory: accepted({ writesOff: { answered: "error", at: 1 } }), writesStopped: false },
    );
    await failure(s.run());
    expect(s.v.ops()).toEqual([]);
  });
});

describe("ensureCheck: the run's check, never sent twice while one may be in flight [lock]", () => {
  it("a check this run had accepted (journaled) and progress shows: adopted, not sent again", async () => {
    const s = setup({ progress: [CHECKING, CHECKING, PASSED] }, { memory: accepted() });
    await s.run();
    expect(s.v.ops()).toEqual(["writesOff"]);
    expect(s.of("verifier.baseline")).toEqual([]);
  });

  it("[check] a check already running (started outside this run) is adopted: none is sent", async () => {
    const running = vp("check", 0, { total: 8, completed: 5 });
    const s = setup({ progress: (st) => (st.writesOff === 0 ? running : PASSED) });
    await s.run();
    expect(s.v.ops()).toEqual(["writesOff"]);
    expect(s.m.adopted).toBe(true);
    expect(s.m.baseline).toEqual(running);
    expect(s.m.check).toEqual({ answered: "ok", at: expect.any(Number) as number });
    expect(s.of("verifier.baseline")).toMatchObject([{ progress: running, adopted: true }]);
    expect(s.logs("warn")).toEqual([
      "the verifier is already checking (phase check, generation 0, totalTasks 8, completedTasks 5, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0), started outside this run: adopting that check instead of sending one (it would be ignored)",
    ]);
    expect(s.m.fromStart).toBe(true);
    expect(s.of("verifier.baseline")).toMatchObject([{ fromStart: true }]);
  });

  // issue 36, point 3: past generation 0 a check found running may be an earlier cutover's, resumed
  // (v0.1.6 to v0.2.0 show nothing else before it); its result would be "verified" having compared,
  // for this cutover, only rechecks (earned.ts notFromStart)
  it("[check] a check already running past generation 0 is not adopted: refused before writesOff, with the counts and the command", async () => {
    const running = {
      ...vp("recheck", 3, { total: 4, completed: 1 }),
      generationStats: { docsCompared: 0, totalDocs: 5242880 },
      gen0Stats: { docsCompared: 5242880, totalDocs: 5242880 },
    };
    const s = setup({ progress: (st) => (st.writesOff === 0 ? running : PASSED) });
    const e = await failure(s.run());
    expect(e.message).toBe(
      `the verifier is already checking, started outside this run, and not adopted: this cutover's verification did not begin at generation 0 for this cutover (it was first seen in generation 3, started outside this run), so it compared, for this cutover, not every document (about 5242880: generation 0's estimated count) a fresh verification compares in generation 0: its last generation, 3, shows 0 of 5242880 docs to recheck compared (this generation only, not a total) (${describeVerifier(running)})`,
    );
    expect(e.reason).toBe("unsafe");
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(
      /^Its result would not verify this cutover\. Restart the verifier with --clean .* then `syncbook run \S+ --resume`: this step sends its own check/,
    );
    expect(s.v.ops()).toEqual([]);
    expect(s.of("verifier.baseline")).toEqual([]);
    expect(s.of("verifier.verified")).toEqual([]);
  });

  it("[check] this cutover's own verification, restarted and resumed by someone past generation 0, is still adopted", async () => {
    const running = vp("recheck", 2, { total: 4, completed: 1 });
    const s = setup(
      { progress: (st) => (st.writesOff === 0 ? running : { ...PASSED, generation: 3 }) },
      { memory: { resuming: true, fromStart: true, restarts: 1 } },
    );
    await s.run();
    expect(s.v.ops()).toEqual(["writesOff"]);
    expect(s.of("verifier.baseline")).toMatchObject([{ adopted: true, fromStart: true }]);
    expect(s.of("verifier.verified")).toHaveLength(1);
    // not this cutover's from its start: refused
    const t = setup({ progress: [running] }, { memory: { resuming: true, restarts: 1 } });
    await failure(t.run());
    expect(t.v.ops()).toEqual([]);
    // from its start, but not resuming (its check was refused): a running check past generation 0 is another's
    const u = setup({ progress: [running] }, { memory: { fromStart: true, check: { answered: "error", at: 1 } } });
    expect((await failure(u.run())).message).toMatch(
      /^the verifier is already checking, started outside this run, and not adopted/,
    );
  });

  it("[verified] the guard: a result of a verification not known to have begun at generation 0 for this cutover is never 'verified'", async () => {
    // a journal that does not say where its verification began (an older syncbook's): not known
    const end = { ...PASSED, generationStats: { docsCompared: 0, totalDocs: 5242880 } };
    const s = setup(
      { progress: [CHECKING, end] },
      { memory: accepted({ fromStart: undefined, writesOff: { answered: "ok", at: 1 }, writesOffGeneration: 0 }) },
    );
    const e = await failure(s.run());
    const why = `this cutover's verification did not begin at generation 0 for this cutover (not known where it began: a journal from an older syncbook?), so it compared, for this cutover, not every document a fresh verification compares in generation 0: its last generation, 2, shows 0 of 5242880 docs to recheck compared (this generation only, not a total) (${describeVerifier(end)})`;
    expect(e.message).toBe(`not verified: ${why}`);
    expect(e.reason).toBe("unsafe");
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(
      /^Nothing is verified for this cutover\. Restart the verifier with --clean .* then `syncbook run \S+ --resume`: this step sends a new check/,
    );
    expect(s.of("verifier.verified")).toEqual([]);
    expect(s.logs("info").filter((l) => l.startsWith("verified"))).toEqual([]);
    // journaled as a refusal: --resume begins a new verification, and does not adopt this one
    expect(s.of("verifier.origin")).toMatchObject([{ ours: false, why }]);
    expect(s.m).toEqual({ refused: why });
  });

  it("[idle][check] a verifier that already finished: no check (it would exit), the step says why", async () => {
    const s = setup({ progress: [PASSED] });
    const e = await failure(s.run());
    expect(e.message).toBe(
      "the verifier already finished a verification (phase idle, generation 2, totalTasks 8, completedTasks 8, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0): a check now would make it exit, so none is sent",
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(
      "The verifier runs one verification per process (a second check panics it). Restart it with --clean (its first answers after this run's check then show a fresh verification) or on a new metadata database, then `syncbook run rb.yaml --resume`: it runs this step again.",
    );
    expect(s.v.ops()).toEqual([]);
  });

  it("[idle][check] after a reverse, a verifier that finished: refused as the sync before the reverse's, the reverse kept for the run's end", async () => {
    const s = setup({ progress: [PASSED] }, { memory: { reversed: "rollback", restarts: 1 } });
    const e = await failure(s.run());
    expect(e.message).toBe(
      "the verifier already finished a verification (phase idle, generation 2, totalTasks 8, completedTasks 8, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0), of the sync before the reverse (step rollback): it does not verify the sync that runs the other way, and a check now would make it exit, so none is sent",
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(
      "The verifier runs one verification per process (a second check panics it). Restart it for the reversed sync, its --srcURI and --dstURI swapped, with --clean (or on a new metadata database), then `syncbook run rb.yaml --resume`: it runs this step again.",
    );
    expect(s.v.ops()).toEqual([]);
    expect(s.m).toEqual({ reversed: "rollback", restarts: 1 });
  });

  it("[check] after a reverse, a check found running is not adopted (it may be the verification before the reverse)", async () => {
    const running = vp("check", 0, { total: 8, completed: 5 });
    const s = setup({ progress: [running] }, { memory: { reversed: "rollback" } });
    const e = await failure(s.run());
    expect(e.message).toBe(
      `the verifier is already checking (${describeVerifier(running)}), and a reverse was sent (step rollback) since this cutover's last verification began: this may be that verification, of the sync before the reverse, so it is not adopted`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(
      "Restart the verifier for the reversed sync, its --srcURI and --dstURI swapped, with --clean (or on a new metadata database), so that this run's check starts a verification of it; then `syncbook run rb.yaml --resume`: it runs this step again.",
    );
    expect(s.v.ops()).toEqual([]);
    expect(s.of("verifier.baseline")).toEqual([]);
    expect(s.m.reversed).toBe("rollback");
  });

  it("after a reverse, a verifier restarted for the reversed sync (nothing to resume): the check is sent, and the reverse is behind it", async () => {
    const s = setup({ progress: documented() }, { memory: { reversed: "rollback" } });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    expect(s.m.reversed).toBeUndefined();
    expect(s.m.verified).toBeDefined();
  });

  it("a check accepted but never shown (3 reads and 1 s of no check): a new verification begins, the check sent once more", async () => {
    let readsAtSend = 0;
    const s = setup(
      {
        progress: (st) => (st.check === 0 ? FRESH : documented()(st)),
        onCommand: (op) => op === "check" && (readsAtSend = s.v.reads),
      },
      { memory: accepted({ writesOff: { answered: "ok", at: 1 } }) },
    );
    await s.run();
    // 100 ms a read: the first of no check at +100, 1 s later the 11th; then the baseline read
    expect(readsAtSend).toBe(12);
    // the new verification forgot the lost one's writesOff: sent again
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    expect(s.decisions()).toMatchObject([
      {
        kind: "reconcile",
        ok: true,
        index: 0,
        id: "cmd",
        reason: `the verifier shows no check (${describeVerifier(FRESH)}) although this run's check was accepted: it restarted, or the check never arrived; a new verification begins`,
      },
    ]);
  });

  it("slow reads: no check for 3 reads, however long they take", async () => {
    let readsAtSend = 0;
    const s = setup(
      {
        progress: (st) => (st.check === 0 ? FRESH : documented()(st)),
        onCommand: (op) => op === "check" && (readsAtSend = s.v.reads),
        tickMs: 2000,
      },
      { memory: accepted() },
    );
    await s.run();
    expect(readsAtSend).toBe(4);
  });

  it("a check whose answer was lost in flight: not judged lost before its own time limit has passed", async () => {
    let readsAtSend = 0;
    const s = setup(
      {
        progress: (st) => (st.check === 0 ? FRESH : documented()(st)),
        onCommand: (op) => op === "check" && (readsAtSend = s.v.reads),
      },
      { memory: accepted({ check: { answered: "unknown", at: Date.now(), inFlight: true } }) },
    );
    await s.run({ requestTimeout: "1s" });
    // 100 ms a read: in flight for the first 9; the 10th (at 1 s) is the first of no check, the
    // 20th (1 s later) the last; then the baseline read
    expect(readsAtSend).toBe(21);
    expect(s.reconcile()[0]).toMatch(/although this run's check was sent: it restarted/);
    // the wait says once why nothing is sent, and for how long (it would look stuck otherwise)
    const why = s.logs("warn").filter((l) => /may still be on its way/.test(l));
    expect(why).toEqual([
      expect.stringMatching(
        /^the verifier does not show this run's check yet; it was sent \d+ms ago and no answer came: it may still be on its way, so no other is sent for \d+ms more, its time limit \(a second check while one is handled shuts the verifier down\)/,
      ),
    ]);
  });

  it("a check that timed out: the wait's word on it quotes the error", async () => {
    const s = setup(
      { progress: (st) => (st.check === 0 ? FRESH : documented()(st)) },
      {
        memory: accepted({
          check: { answered: "unknown", at: Date.now(), inFlight: true, error: "http://v: no answer within 1s" },
        }),
      },
    );
    await s.run({ requestTimeout: "1s" });
    expect(s.logs("warn").filter((l) => /may still be on its way/.test(l))).toEqual([
      expect.stringContaining("no answer came (http://v: no answer within 1s): it may still be on its way"),
    ]);
  });

  it("a check journaled by a host whose clock runs ahead: its age is said as none, never negative", async () => {
    const s = setup(
      { progress: (st) => (st.check === 0 ? FRESH : documented()(st)) },
      { memory: accepted({ check: { answered: "unknown", at: Date.now() + 5_000, inFlight: true } }) },
    );
    await s.run({ requestTimeout: "1s" });
    expect(s.logs("warn").filter((l) => /may still be on its way/.test(l))).toEqual([
      expect.stringMatching(
        /it was sent 0ms ago and no answer came: it may still be on its way, so no other is sent for (5\.\d|6)s more/,
      ),
    ]);
  });

  it.each([
    ["lost without an answer, the exchange over (reset)", { answered: "unknown" as const }],
    ["accepted", { answered: "ok" as const, inFlight: true }],
  ])("a check %s: judged after 1 s of no check, not its time limit", async (_, ask) => {
    let readsAtSend = 0;
    const s = setup(
      {
        progress: (st) => (st.check === 0 ? FRESH : documented()(st)),
        onCommand: (op) => op === "check" && (readsAtSend = s.v.reads),
      },
      { memory: accepted({ check: { ...ask, at: Date.now() } }) },
    );
    await s.run({ requestTimeout: "1s" });
    expect(readsAtSend).toBe(12);
    // nothing in flight: nothing said of it
    expect(s.logs("warn").filter((l) => /may still be on its way/.test(l))).toEqual([]);
  });

  it("a check refused earlier: a new one at once (a refusal is an answer: nothing in flight)", async () => {
    let readsAtSend = -1;
    const s = setup(
      {
        progress: (st) => (st.check === 0 ? FRESH : documented()(st)),
        onCommand: (op) => op === "check" && (readsAtSend = s.v.reads),
      },
      { memory: { check: { answered: "error", at: 1, error: "x" }, writesOff: { answered: "ok", at: 1 } } },
    );
    await s.run();
    expect(readsAtSend).toBe(1);
    expect(s.reconcile()).toEqual([]);
    // a new verification: what the run asked before no longer counts (writesOff sent for this one)
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  it("[lock] a check that never shows: sent once more, then the step fails (never a third)", async () => {
    const s = setup({ progress: [FRESH], tickMs: 500 });
    const e = await failure(s.run());
    expect(e.message).toBe(
      "the verifier took two checks of this step and shows neither (phase idle, generation 0, no task)",
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^Is something restarting the verifier, or is another verifier behind/);
    expect(s.v.ops()).toEqual(["check", "check"]);
  });

  it("an adopted check that vanishes is not one of the two checks sent", async () => {
    const s = setup({ progress: (st) => (st.n === 0 ? CHECKING : FRESH), tickMs: 500 });
    await failure(s.run());
    expect(s.v.ops()).toEqual(["check", "check"]);
  });

  it("the decision that a check is lost forgets it, even when the new verification cannot begin", async () => {
    const s = setup({ progress: (st) => (st.n < 3 ? FRESH : "refused"), tickMs: 500 }, { memory: accepted() });
    const e = await failure(s.run({ giveUpAfter: "1s" }));
    expect(e.message).toMatch(/^the verifier has failed for 1s/);
    expect(s.m).toEqual({});
  });

  it("[check] a check answered success: progress may not show it at once; it is not resent meanwhile", async () => {
    const s = setup({ progress: (st) => (st.check === 0 || st.n < 5 ? FRESH : documented()(st)) });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  it.each([
    ["timeout", true],
    ["reset", false],
    ["non-json", false],
  ] as const)(
    "[lock] a check without an answer (%s) that progress shows running: adopted, not resent",
    async (answer, inFlight) => {
      const s = setup({ check: [answer], progress: documented() });
      await s.run();
      expect(s.v.ops()).toEqual(["check", "writesOff"]);
      expect(s.decisions()[1]).toMatchObject({ kind: "reconcile", ok: true, index: 0, id: "cmd" });
      expect(s.reconcile()[0]).toMatch(
        /^verifier check: no answer \(http:\/\/127\.0\.0\.1:27020: check failed: .*\); not sent again while it may be in flight \(a second operational request shuts the verifier down\): its progress will show whether it arrived$/,
      );
      expect(s.of("verifier.baseline")).toHaveLength(1);
      expect(s.m.check?.answered).toBe("unknown");
      expect(s.m.check?.inFlight).toBe(inFlight ? true : undefined);
    },
  );

  it("a check refused: fails at once with the verifier's text, nothing resent", async () => {
    const s = setup({ check: [{ refused: "APIError", description: "bad filter" }], progress: [FRESH] });
    const e = await failure(s.run());
    expect(e.message).toBe("the verifier refused check: APIError: bad filter");
    expect(s.v.ops()).toEqual(["check"]);
    expect(s.m.check).toMatchObject({ answered: "error" });
  });

  it("a check never sent (connection refused): fails at once, nothing to learn from progress", async () => {
    const s = setup({ check: ["not-sent"], progress: [FRESH] });
    const e = await failure(s.run());
    expect(e.message).toBe(`verifier check not sent: ${VERIFIER_URL}: check failed: connection refused (ECONNREFUSED)`);
    expect(s.v.ops()).toEqual(["check"]);
  });

  it("the step's time limit while the check is on its way: a timeout failure naming the check", async () => {
    const c = new AbortController();
    const s = setup(
      { check: ["aborted"], progress: documented(), onCommand: () => c.abort(new StepTimeout(2000)) },
      { signal: c.signal },
    );
    const e = await failure(s.run());
    expect(e.message).toBe("timed out after 2s waiting for the verifier's answer to check: nothing reported yet");
    expect(s.reconcile()).toEqual([]);
  });
});

// issue 36, points 3 and 4. Facts ("The migration verifier", "Restarts"): a process with an earlier
// verification in its metadata answers idle, generation 0, its persisted counters (v0.2.1) or an
// empty HTTP 500 (v0.1.6 to v0.2.0) until its first check, with or without --clean; the check then
// resumes it (without --clean) or drops it first (with --clean). Verifier source, check.go
// `CheckDriver` (tags v0.1.6 … v0.2.1): "if verifier.startClean { … Drop … } else { …
// readGeneration … "Resuming in-progress verification." }".
describe("what the verifier shows before this run's check, and its first answers after it", () => {
  const STALE = vp("idle", 0, { total: 8, completed: 6, failed: 2 });
  /** A fresh verification's first answer: generation 0, new tasks, none done yet. */
  const STARTED = vp("check", 0, { total: 12 });
  /** What the check resumed: the persisted generation. */
  const RESUMED = {
    ...vp("recheck", 3, { total: 4, completed: 1 }),
    generationStats: { docsCompared: 0, totalDocs: 5242880 },
  };
  const origins = (s: ReturnType<typeof setup>) => s.of("verifier.origin").map(({ ours, why }) => ({ ours, why }));
  const PERSISTED_WARN = `the verifier shows the counters of an earlier verification (${describeVerifier(STALE)}): started without --clean, this check resumes it; started with --clean, it drops it when the check arrives. The check's first answers decide: a fresh verification goes on, a resumed one is refused`;
  const CLEAN_HINT =
    "Restart the verifier with --clean (it drops the old verification when this run's check arrives; its first answers then show a fresh one, generation 0 with new tasks) or on a new metadata database (a new --metaURI or --metaDBName), then `syncbook run rb.yaml --resume`: it runs this step again.";
  const OLD_WARN =
    "verifier progress: an empty HTTP 500: verifier releases v0.1.6 to v0.2.0 answer progress with an empty HTTP 500 until their first check (fixed in v0.2.1). It cannot tell a verifier that never ran a check from one whose metadata holds an earlier verification (a check resumes that one): a check is judged by its first answers. Use the verifier v0.2.1 for a cutover.";

  it("[restart] persisted counters before the check, a fresh verification after it (--clean): this cutover's, verified", async () => {
    const s = setup({ progress: (st) => (st.check === 0 ? STALE : st.writesOff === 0 ? STARTED : PASSED) });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    expect(s.of("verifier.baseline")).toMatchObject([{ adopted: false, progress: STALE, unproven: "persisted" }]);
    expect(origins(s)).toEqual([
      {
        ours: true,
        why: `a fresh verification: ${describeVerifier(STARTED)}, after the counters its metadata held before the check`,
      },
    ]);
    expect(s.logs("warn")).toEqual([PERSISTED_WARN]);
    expect(s.m.unproven).toBeUndefined();
    // not from its start until its first answer showed a fresh verification
    expect(s.of("verifier.baseline")).toMatchObject([{ fromStart: false }]);
    expect(s.m.fromStart).toBe(true);
    expect(s.logs("info")).toContain(
      `the verifier's check shows a fresh verification: ${describeVerifier(STARTED)}, after the counters its metadata held before the check`,
    );
    expect(
      s.events.filter((e) => e.type === "log" && e.message.startsWith("the verifier's check shows")),
    ).toMatchObject([{ level: "info", index: 0 }]);
    expect(s.logs("info")).toContain(VERIFIED);
    expect(s.of("verifier.verified")).toMatchObject([
      { index: 0, id: "cmd", progress: PASSED, writesOffGeneration: 0 },
    ]);
  });

  it("[restart] persisted counters before the check, a persisted generation after it: resumed, refused as on v0.2.1; no writesOff", async () => {
    const s = setup({ progress: (st) => (st.check === 0 ? STALE : RESUMED) });
    const e = await failure(s.run());
    // the first answer, read some milliseconds after the check was sent (said so, not "at once")
    const why = /after this run's check (.*)\. Its result would not/.exec(e.message)?.[1] ?? "";
    expect(why).toMatch(/^it shows generation 3 in its first answer, read \d+ms after the check was sent: /);
    expect(
      why.endsWith(
        `: the check resumed a verification its metadata held (a fresh one starts at generation 0, and leaves it only once every document was compared) (${describeVerifier(RESUMED)})`,
      ),
    ).toBe(true);
    expect(e.message).toBe(
      `the verifier resumed a verification this cutover did not start: after this run's check ${why}. Its result would not be this cutover's, so nothing is verified by it`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(CLEAN_HINT);
    expect(e.reason).toBe("unsafe");
    expect(s.v.ops()).toEqual(["check"]);
    expect(origins(s)).toEqual([{ ours: false, why }]);
    // its check no longer counts; the refusal is remembered (journaled by verifier.origin)
    expect(s.m).toEqual({ refused: why });
    expect(s.of("verifier.verified")).toEqual([]);
  });

  // an adversarial run: a runner killed with its check on its way, after the verifier restarted with
  // --clean; its --resume read the verifier seconds later, past generation 0, and said "the check
  // resumed a verification its metadata held": a fresh one gets there too. Refused still, said so.
  it("[restart] a check the run it resumes sent, unjudged, and a generation past 0 by the first answer read: cannot be told, refused; never said resumed", async () => {
    // the journal's memory of it (a new one each time: a run's memory is its own)
    const unjudged = () => ({
      baseline: STALE,
      adopted: false,
      check: { answered: "unknown" as const, at: Date.now() - 60_000 },
      unproven: "persisted" as const,
    });
    const s = setup({ progress: () => RESUMED }, { memory: unjudged() });
    const e = await failure(s.run());
    const why = `it shows generation 3 by the first answer read: its first answers went unread (the run or step that sent the check ended before them), and a fresh verification gets there in time as a resumed one does, so which this is cannot be told (${describeVerifier(RESUMED)})`;
    expect(e.message).toBe(
      `the verifier's verification cannot be told to be this cutover's: after this run's check ${why}. Its result may not be this cutover's, so nothing is verified by it`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(CLEAN_HINT);
    expect(e.reason).toBe("unsafe");
    // nothing sent: its check was the run's before
    expect(s.v.ops()).toEqual([]);
    expect(origins(s)).toEqual([{ ours: false, why }]);
    expect(s.m).toEqual({ refused: why });
    // in generation 0 with more tasks done than before the check: a fresh one gets there too, in time
    const t = setup({ progress: () => vp("check", 0, { total: 12, completed: 7, failed: 2 }) }, { memory: unjudged() });
    const f = await failure(t.run());
    expect(f.message).toBe(
      `the verifier's verification cannot be told to be this cutover's: after this run's check it shows generation 0 with 9 task(s) already done (the 8 done before the check) by the first answer read: its first answers went unread (the run or step that sent the check ended before them), and a fresh verification gets there in time as a resumed one does, so which this is cannot be told (${describeVerifier(vp("check", 0, { total: 12, completed: 7, failed: 2 }))}). Its result may not be this cutover's, so nothing is verified by it`,
    );
    expect(t.v.ops()).toEqual([]);
  });

  it("[restart] generation 0 after the check with as many tasks done as before it: resumed, refused", async () => {
    const resumed0 = vp("check", 0, { total: 12, completed: 7, failed: 2 });
    const s = setup({ progress: (st) => (st.check === 0 ? STALE : resumed0) });
    const e = await failure(s.run());
    expect(e.message).toMatch(
      /after this run's check generation 0 with 9 task\(s\) already done \(the 8 done before the check\): the counters of a resumed verification/,
    );
    expect(s.v.ops()).toEqual(["check"]);
    // fewer done than before: a fresh start, even with some done already
    const fresh = vp("check", 0, { total: 12, completed: 7 });
    const t = setup({ progress: (st) => (st.check === 0 ? STALE : st.writesOff === 0 ? fresh : PASSED) });
    await t.run();
    expect(t.v.ops()).toEqual(["check", "writesOff"]);
  });

  it("[restart] persisted counters that no check ever changes: the warning once, two checks, then the step stops", async () => {
    const s = setup({ progress: [STALE], tickMs: 500 });
    const e = await failure(s.run());
    expect(e.message).toMatch(/^the verifier took two checks of this step and shows neither/);
    expect(s.v.ops()).toEqual(["check", "check"]);
    expect(s.logs("warn")).toEqual([PERSISTED_WARN]);
  });

  it("[restart] the refusal's remedy works: restarted with --clean, the next run's check shows a fresh verification", async () => {
    // the run that refused (its memory as the journal gives it back), then the verifier restarted
    // with --clean: before the check it shows the old counters again (--clean acts at the check)
    const s = setup(
      { progress: (st) => (st.check === 0 ? STALE : st.writesOff === 0 ? STARTED : PASSED) },
      { memory: { refused: "resumed (generation 3)" } },
    );
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    expect(origins(s)).toMatchObject([{ ours: true }]);
    expect(s.m.refused).toBeUndefined();
    expect(s.logs("info")).toContain(VERIFIED);
  });

  it("[restart] after a refusal, a check found running is not adopted (it may be the refused one)", async () => {
    const s = setup({ progress: [RESUMED] }, { memory: { refused: "resumed (generation 3)" } });
    const e = await failure(s.run());
    expect(e.message).toBe(
      `the verifier is checking (${describeVerifier(RESUMED)}), and this cutover refused the verification it showed after its last check (resumed (generation 3)): this may be that very verification, so it is not adopted`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(
      "Restart the verifier with --clean (its first answers after this run's check then show a fresh verification) or on a new metadata database, then `syncbook run rb.yaml --resume`: it runs this step again.",
    );
    expect(s.v.ops()).toEqual([]);
    // a verifier with nothing to resume clears it: the check cannot start the refused verification
    const t = setup({ progress: documented() }, { memory: { refused: "resumed (generation 3)" } });
    await t.run();
    expect(t.m.refused).toBeUndefined();
    expect(t.v.ops()).toEqual(["check", "writesOff"]);
  });

  it("[old-release] an empty HTTP 500 before the check, nothing done in its first answer: fresh, verified; said once, journaled", async () => {
    const s = setup({ progress: (st) => (st.check === 0 ? "empty-500" : st.writesOff === 0 ? STARTED : PASSED) });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    expect(s.of("verifier.baseline")).toMatchObject([{ adopted: false, oldRelease: true, unproven: "oldRelease" }]);
    expect(s.m.oldRelease).toBe(true);
    expect(s.logs("warn")).toEqual([
      OLD_WARN,
      "the verifier answered an empty HTTP 500 (verifier releases v0.1.6 to v0.2.0 answer progress with an empty HTTP 500 until their first check (fixed in v0.2.1)): this check may resume an earlier verification its metadata holds. The check's first answers decide: a fresh verification goes on, a resumed one is refused",
    ]);
    expect(origins(s)).toEqual([
      {
        ours: true,
        why: `a fresh verification: ${describeVerifier(STARTED)}, after an empty HTTP 500 before the check`,
      },
    ]);
    // the synthetic answer is no sample of the verifier's
    expect(s.of("verifier.sampled").map((e) => e.progress.phase)).toEqual(["check", "check", "idle"]);
    expect(s.logs("info")).toContain(VERIFIED);
  });

  it("[old-release] the issue's night: an empty HTTP 500, a check, a resumed verification: refused, never 'verified … 0 of 5242880 documents compared'", async () => {
    const s = setup({ progress: (st) => (st.check === 0 ? "empty-500" : st.writesOff === 0 ? RESUMED : PASSED) });
    const e = await failure(s.run());
    expect(e.message).toMatch(
      /^the verifier resumed a verification this cutover did not start: after this run's check it shows generation 3 in its first answer, read \d+m?s after the check was sent: the check resumed/,
    );
    // its last generation's counts, said as that generation's only (verifierDocsText)
    expect(e.message).toContain(
      "generation 3, 0 of 5242880 docs to recheck compared (this generation only, not a total)",
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(
      /^verifier releases v0.1.6 to v0.2.0 answer progress with an empty HTTP 500 until their first check \(fixed in v0.2.1\), whatever its metadata holds\. Start the verifier on a new metadata database/,
    );
    expect(s.v.ops()).toEqual(["check"]);
    expect(s.logs("info").filter((l) => l.startsWith("verified"))).toEqual([]);
    expect(s.of("verifier.verified")).toEqual([]);
  });

  it("[old-release] an empty HTTP 500, then generation 0 with tasks done at once: cannot tell it from a resumed one, refused", async () => {
    const s = setup({ progress: (st) => (st.check === 0 ? "empty-500" : CHECKING) });
    const e = await failure(s.run());
    expect(e.message).toContain("generation 0 with 2 task(s) already done: the counters of a resumed verification");
    expect(s.v.ops()).toEqual(["check"]);
  });

  it("[old-release] an empty HTTP 500 while the check sets itself up is 'no check yet', then shows it", async () => {
    const s = setup({
      progress: (st) => (st.check === 0 || st.n < 3 ? "empty-500" : st.writesOff === 0 ? STARTED : PASSED),
    });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    expect(s.logs("warn")).toHaveLength(2);
  });

  it("[old-release] an old release restarted after writesOff (empty HTTP 500 again): a restart, followed; the new process resumes this cutover's own", async () => {
    const s = setup({
      progress: (st) =>
        st.check === 0
          ? "empty-500"
          : st.check === 1 && st.writesOff === 0
            ? STARTED
            : st.writesOff < st.check
              ? CHECKING
              : st.check === 1
                ? "empty-500"
                : PASSED,
    });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff", "check", "writesOff"]);
    expect(s.of("verifier.restarted")).toMatchObject([
      {
        why: "an empty HTTP 500 on progress: verifier releases v0.1.6 to v0.2.0 answer progress with an empty HTTP 500 until their first check (fixed in v0.2.1), before a check",
      },
    ]);
    expect(s.of("verifier.baseline")).toMatchObject([{ unproven: "oldRelease" }, { resumes: true }]);
    expect(s.of("verifier.baseline")[1]).not.toHaveProperty("unproven");
    expect(s.logs("info")).toContain(VERIFIED);
  });

  it("an empty HTTP 500 is an answer: it ends a run of failures (giveUpAfter counts from the next)", async () => {
    const s = setup({
      progress: (st) =>
        st.n < 4 ? "reset" : st.n === 4 ? "empty-500" : st.n < 8 ? "reset" : st.writesOff === 0 ? STARTED : PASSED,
      tickMs: 300,
    });
    await s.run({ giveUpAfter: "1s" });
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  // issue 36, point 8: facts "A `check` while one runs is answered success and ignored"
  it("a check started outside this run, with a filter in this step: not adopted (the filter would not apply)", async () => {
    const s = setup({ progress: [CHECKING] });
    const e = await failure(s.run({ filter: { namespaces: ["app.orders"] } }));
    expect(e.message).toBe(
      `the verifier is already checking (${describeVerifier(CHECKING)}), started outside this run: this step's filter would not apply to it (a check while one runs is answered success and ignored), so it is not adopted`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(
      /^Restart the verifier with --clean \(or on a new metadata database\) so that this run's check, with its filter, starts the verification/,
    );
    expect(s.v.ops()).toEqual([]);
    expect(s.of("verifier.baseline")).toEqual([]);
    // without a filter the running check is adopted, as before
    const t = setup({ progress: (st) => (st.writesOff === 0 ? CHECKING : PASSED) });
    await t.run();
    expect(t.of("verifier.baseline")).toMatchObject([{ adopted: true }]);
  });
});

describe("beginCheck: change event application first (before it a check finds collections missing)", () => {
  it("waits for change event application on every instance, saying who is not there yet", async () => {
    const s = setup(
      { progress: documented() },
      {
        fleet: [
          [{ info: "collection copy" }, { info: CEA }],
          [{ info: CEA }],
          [{}, { canCommit: true }],
          ["error", { state: "COMMITTING" }],
        ],
      },
    );
    await s.run();
    expect(s.f.reads).toBe(3);
    const [first, met] = s.of("wait.status");
    expect(first).toMatchObject({ met: false });
    expect(first!.failing.map((x) => [x.instance, x.condition, x.value])).toEqual([
      ["sync0", `info ${CEA}`, "collection copy"],
      ["sync2", `info ${CEA}`, "RUNNING"],
      ["sync3", `info ${CEA}`, `http://127.0.0.1:27185: progress failed: refused`],
    ]);
    expect(met).toMatchObject({ met: true, failing: [] });
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  it("an instance the snapshot has neither progress nor an error for: said as unreachable", async () => {
    const v = scriptedVerifier({ progress: documented() });
    const f = scripted({ sends: [], reads: [[COMMITTED]] });
    let blank = false;
    const fleet: Fleet = {
      ...f.fleet,
      progress: (signal) =>
        f.reads === 0 && !blank
          ? ((blank = true), Promise.resolve({ at: 0, instances: [{ ref: f.fleet.refs[0]! }] }))
          : f.fleet.progress(signal),
    };
    const { ctx, events } = verifierContext(fleet, v.verifier);
    await verify.run(ctx, {});
    const status = events.find((e) => e.type === "wait.status");
    expect(status).toMatchObject({ met: false, failing: [{ instance: "sync0", value: "unreachable" }] });
  });

  it("the step's time limit before change event application: said with what was awaited", async () => {
    const c = new AbortController();
    const v = scriptedVerifier({ progress: documented() });
    const f = scripted({ sends: [], reads: [[{ info: "collection copy" }]] });
    const fleet: Fleet = {
      ...f.fleet,
      progress: (signal) => {
        if (f.reads === 2) c.abort(new StepTimeout(3000));
        return f.fleet.progress(signal);
      },
    };
    const { ctx } = verifierContext(fleet, v.verifier, { signal: c.signal });
    const e = await failure(verify.run(ctx, {}));
    expect(e.message).toMatch(/^timed out after 3s waiting for change event application on every instance: sync0/);
    expect(v.ops()).toEqual([]);
  });

  it("the baseline waits for an answer (failed reads are not a baseline)", async () => {
    const s = setup({ progress: (st) => (st.n === 0 ? "refused" : documented()(st)) });
    await s.run();
    expect(s.m.baseline).toEqual(FRESH);
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  it("the step's time limit before the baseline: said as waiting for progress", async () => {
    const c = new AbortController();
    const s = setup(
      {
        progress: (st) => {
          if (st.n === 1) c.abort(new StepTimeout(4000));
          return "refused";
        },
      },
      { signal: c.signal },
    );
    const e = await failure(s.run());
    // before any check of this cutover: the step's time limit and its own way on (raise the
    // timeout), not the reads' (a review: their plain --resume is no rehearsal's)
    expect(e.message).toBe(
      "timed out after 4s waiting for the verifier's progress before its check: verifier: progress answered (now no answer yet)",
    );
  });

  it("the step's time limit while the check does not show: said with the last progress", async () => {
    const c = new AbortController();
    const s = setup(
      {
        progress: (st) => {
          if (st.n === 2) c.abort(new StepTimeout(5000));
          return FRESH;
        },
      },
      { signal: c.signal, memory: accepted() },
    );
    const e = await failure(s.run());
    expect(e.message).toBe(
      "timed out after 5s waiting for the verifier to show this run's check: verifier: a check running (now phase idle, generation 0, totalTasks 0, completedTasks 0, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0)",
    );
    expect(s.v.ops()).toEqual([]);
  });

  it("the step's time limit before any progress of the check: said as unknown", async () => {
    const c = new AbortController();
    c.abort(new StepTimeout(5000));
    const s = setup({ progress: [FRESH] }, { signal: c.signal, memory: accepted() });
    const e = await failure(s.run());
    expect(e.message).toBe(
      "timed out after 5s waiting for the verifier to show this run's check: verifier: a check running (now unknown)",
    );
  });
});

describe("a result that compared nothing is not verified (gen0Stats)", () => {
  // an outside conformance review against migration-verifier v0.2.1: a verifier started without
  // --verifyAll or --srcNamespace creates no task (check.go CreateInitialTasksIfNeeded), its
  // generations end at once, and its last answer is idle, nothing failed, gen0Stats all 0
  // (progress.go lines 81-97, summary.go lines 362-365): every output said "verified"
  const withGen0 = (g0: Record<string, number>, counters = { total: 0, completed: 0 }): VerifierProgress => ({
    ...vp("idle", 2, counters),
    gen0Stats: { docsCompared: 0, totalDocs: 0, srcBytesCompared: 0, totalSrcBytes: 0, totalNamespaces: 0, ...g0 },
  });
  it("no namespace verified: refused, not verified, the verifier's restart with --verifyAll named", async () => {
    const end = withGen0({});
    const s = setup({ progress: documented(end) });
    const e = await failure(s.run());
    expect(e.reason).toBe("unsafe");
    expect(e.message).toBe(
      `not verified: the verifier compared no collection: its generation 0 verified 0 namespaces (gen0Stats.totalNamespaces 0), so no task could fail (${describeVerifier(end)})`,
    );
    expect(e.hint).toBe(
      "Nothing is verified for this cutover. Start the verifier again with --verifyAll (or a --srcNamespace for each collection to verify) and --clean (or on a new metadata database), then `syncbook run rb.yaml --resume`: this step sends a new check. If the source truly has no collection, there is nothing to verify, and the cutover stays not verified.",
    );
    expect(e.beforeResume).toBe(true);
    expect(e.resumeFlags).toBeUndefined();
    expect(s.of("verifier.verified")).toEqual([]);
    expect(s.m.verified).toBeUndefined();
    // the one rule every reader asks
    expect(verifierEarned(s.m, end)).toMatchObject({
      comparedNothing: true,
      result: expect.stringMatching(/^the verifier compared no collection/),
    });
  });

  it("a filter that matched no document: refused, its correction in the runbook and the --resume with --allow-changed-runbook", async () => {
    const end = withGen0({ totalDocs: 5000, totalNamespaces: 4 }, { total: 4, completed: 4 });
    const s = setup({ progress: documented(end) });
    const e = await failure(s.run({ filter: { nope: true } }));
    expect(e.message).toBe(
      `not verified: the check's filter {"nope":true} matched no document: generation 0 compared 0 of about 5000 (${describeVerifier(end)})`,
    );
    expect(e.hint).toBe(
      "Nothing is verified for this cutover. Correct the check's `filter` in the runbook (or remove it), restart the verifier with --clean (or on a new metadata database), then `syncbook run rb.yaml --resume --allow-changed-runbook`: this step sends a new check with it.",
    );
    expect(e.beforeResume).toBe(true);
    expect(e.resumeFlags).toEqual(["--allow-changed-runbook"]);
    // without a filter: the same count, said without one
    const bare = setup({ progress: documented(end) });
    expect((await failure(bare.run())).message).toMatch(
      /^not verified: generation 0 compared 0 documents of about 5000 \(/,
    );
  });

  it.each([
    ["empty collections (their metadata compared)", withGen0({ totalNamespaces: 4 })],
    ["every document compared", withGen0({ docsCompared: 5000, totalDocs: 5000, totalNamespaces: 4 })],
    [
      "fewer compared than the estimate (deleted while it ran)",
      withGen0({ docsCompared: 1, totalDocs: 5000, totalNamespaces: 4 }),
    ],
    ["no gen0Stats (a verifier before v0.1.10)", PASSED],
    ["gen0Stats null", { ...PASSED, gen0Stats: null } as unknown as VerifierProgress],
    ["gen0Stats without document counts", { ...PASSED, gen0Stats: { totalNamespaces: 4 } }],
  ])("%s: verified", async (_, end) => {
    const s = setup({ progress: documented(end) });
    await s.run();
    expect(s.m.verified).toBeDefined();
  });
});

describe("a result that passed over DDL on the source is not verified (srcChangeStats.eventCounts)", () => {
  // a conformance read of migration-verifier v0.2.1: under --ddlHandling warnMost a source DDL event
  // is warned of and counted, not verified (change_stream.go lines 222-224), and its README says
  // "In this case you **MUST** manually confirm that the change is replicated to the destination":
  // such a pass was said "verified"
  const withEvents = (counts: Record<string, number>, side = "srcChangeStats"): VerifierProgress => ({
    ...PASSED,
    [side]: {
      eventsPerSecond: 0,
      lagSecs: 0,
      bufferSaturation: 0,
      eventCounts: { insert: 40, update: 2, ...counts },
    },
  });
  it("an index created on the source: refused, not verified, the verifier's clean restart named", async () => {
    const end = withEvents({ createIndexes: 1, modify: 2 });
    const s = setup({ progress: documented(end) });
    const e = await failure(s.run());
    expect(e.reason).toBe("unsafe");
    expect(e.message).toBe(
      `not verified: the verifier skipped DDL on the source (modify 2, createIndexes 1; --ddlHandling warnMost), which it does not verify: its README says you MUST then confirm by hand that each change reached the destination (${describeVerifier(end)})`,
    );
    expect(e.hint).toBe(
      "Nothing is verified for this cutover: the verifier's log names each DDL event it skipped. With the source's writes and DDL stopped, restart the verifier with --clean (or on a new metadata database) and without --ddlHandling warnMost (DDL during the new check then stops it rather than going unverified), then `syncbook run rb.yaml --resume`: this step sends a new check, which compares every collection as it is now.",
    );
    expect(e.beforeResume).toBe(true);
    expect(s.of("verifier.verified")).toEqual([]);
    expect(s.m.verified).toBeUndefined();
    // the one rule every reader asks
    expect(verifierEarned(s.m, end)).toMatchObject({
      skippedDdl: true,
      result: expect.stringMatching(/^the verifier skipped DDL/),
    });
  });
  it("a DDL count in any other form than 0 is counted as DDL seen (fail safe)", async () => {
    const s = setup({ progress: documented(withEvents({ dropIndexes: "2" } as unknown as Record<string, number>)) });
    expect((await failure(s.run())).message).toMatch(
      /^not verified: the verifier skipped DDL on the source \(dropIndexes "2"; /,
    );
  });

  it.each([
    ["data events only", withEvents({})],
    ["DDL counted 0", withEvents({ create: 0, dropIndexes: 0 })],
    // the destination's DDL is allowed (the sync's own, change_stream.go lines 219-221)
    ["DDL on the destination", withEvents({ createIndexes: 3 }, "dstChangeStats")],
    ["srcChangeStats null", { ...PASSED, srcChangeStats: null } as unknown as VerifierProgress],
    ["eventCounts null", { ...PASSED, srcChangeStats: { eventCounts: null } }],
  ])("%s: verified", async (_, end) => {
    const s = setup({ progress: documented(end) });
    await s.run();
    expect(s.m.verified).toBeDefined();
  });
});

describe("awaitResult and the result [success]", () => {
  // eight tasks, as v0.2.1 counts them: totalTasks the sum of the others (migration_verifier.go)
  const differences = (failed: number, mismatched: number) =>
    vp("idle", 3, { total: 8, completed: 8 - failed - mismatched, failed, mismatched });
  const described = (failed: number, mismatched: number) =>
    `phase idle, generation 3, totalTasks 8, completedTasks ${8 - failed - mismatched}, failedTasks ${failed}, metadataMismatchTasks ${mismatched}, processingTasks 0, addedTasks 0`;

  it("failedTasks: documents differ", async () => {
    const s = setup({ progress: documented(differences(2, 0)) });
    const e = await failure(s.run());
    expect(e.message).toBe(`verification found differences: 2 failed task(s) (documents differ); ${described(2, 0)}`);
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^The destination differs from the source \(writes during the sync's commit/);
    expect(s.logs("info")).toEqual([]);
  });

  it("metadataMismatchTasks alone fails it too (the verifier counts index differences only there)", async () => {
    const s = setup({ progress: documented(differences(0, 1)) });
    const e = await failure(s.run());
    expect(e.message).toBe(
      `verification found differences: 1 metadata mismatch task(s) (indexes, shard keys or collection options differ); ${described(0, 1)}`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(
      /^Index, shard-key or collection-option differences: the verifier's \/api\/v1\/nsMismatches/,
    );
  });

  it("both: both counted, the documents' hint", async () => {
    const s = setup({ progress: documented(differences(2, 1)) });
    const e = await failure(s.run());
    expect(e.message).toBe(
      `verification found differences: 2 failed task(s) (documents differ), 1 metadata mismatch task(s) (indexes, shard keys or collection options differ); ${described(2, 1)}`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^The destination differs from the source/);
  });

  it("[after-commit] writesOff before COMMITTED: warned as sent, and metadata mismatches explained by it", async () => {
    const s = setup(
      { progress: documented(differences(0, 3)) },
      { fleet: [[{ info: CEA }], [COMMITTED], [COMMITTED, "error"]] },
    );
    const e = await failure(s.run());
    expect(s.logs("warn")).toEqual([
      `writesOff before the sync is COMMITTED (sync0 RUNNING): ${METADATA_BEFORE_COMMIT}`,
    ]);
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(
      `writesOff reached the verifier before the sync was COMMITTED (sync0 RUNNING, sync1 COMMITTED, sync2 unknown): ${METADATA_BEFORE_COMMIT}. Verify after commit (a verify step after \`waitFor: { state: COMMITTED }\`), with a new verifier.`,
    );
  });

  it("writesOff before COMMITTED without an answer: still explains the mismatches", async () => {
    const s = setup({ writesOff: ["timeout"], progress: documented(differences(0, 3)) }, { fleet: [[{ info: CEA }]] });
    const e = await failure(s.run());
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^writesOff reached the verifier before the sync was COMMITTED \(sync0 RUNNING\)/);
  });

  it("writesOff after COMMITTED without an answer: the general metadata hint", async () => {
    const s = setup({ writesOff: ["timeout"], progress: documented(differences(0, 3)) });
    const e = await failure(s.run());
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^Index, shard-key or collection-option differences/);
  });

  it("writesOff before COMMITTED on several instances: each one not COMMITTED named", async () => {
    const s = setup(
      { progress: documented(differences(0, 3)) },
      { fleet: [[{ info: CEA }], [COMMITTED], [{ state: "COMMITTING" }]] },
    );
    const e = await failure(s.run());
    expect(s.logs("warn")).toEqual([
      `writesOff before the sync is COMMITTED (sync0 RUNNING, sync2 COMMITTING): ${METADATA_BEFORE_COMMIT}`,
    ]);
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(
      /^writesOff reached the verifier before the sync was COMMITTED \(sync0 RUNNING, sync1 COMMITTED, sync2 COMMITTING\)/,
    );
  });

  it("writesOff before COMMITTED, documents differ: the documents' hint (early writesOff explains only metadata)", async () => {
    const s = setup({ progress: documented(differences(1, 0)) }, { fleet: [[{ info: CEA }]] });
    const e = await failure(s.run());
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^The destination differs from the source/);
  });

  it("writesOff after COMMITTED, the instances unreachable then: nothing to warn of", async () => {
    const s = setup({ progress: documented(differences(0, 1)) }, { fleet: [[COMMITTED, "error"]] });
    const e = await failure(s.run());
    expect(s.logs("warn")).toEqual([]);
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^Index, shard-key or collection-option differences/);
  });

  it("writesOff accepted earlier (its states unknown to this step): the general metadata hint", async () => {
    const s = setup(
      { progress: [CHECKING, differences(0, 2)] },
      { memory: accepted({ writesOff: { answered: "ok", at: 1 }, writesOffGeneration: 0 }), fleet: [[{ info: CEA }]] },
    );
    const e = await failure(s.run());
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^Index, shard-key or collection-option differences/);
  });

  it.each(["failedTasks", "metadataMismatchTasks", "addedTasks", "processingTasks"] as const)(
    "finished without %s: not a result",
    async (gap) => {
      const end = vp("idle", 2, { total: 8, completed: 8 });
      delete end.verificationStatus![gap];
      const s = setup({ progress: documented(end) });
      const e = await failure(s.run());
      expect(e.message).toMatch(
        new RegExp(`^not a verification result: no ${gap} counter to read the result from \\(phase idle, generation 2`),
      );
      expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
      expect(e.hint).toBe(NOT_A_RESULT_HINT);
      expect(s.logs("info")).toEqual([]);
    },
  );

  it("finished without any counters: not a result", async () => {
    const s = setup({ progress: documented({ phase: "idle", generation: 2, error: null }) });
    const e = await failure(s.run());
    expect(e.message).toBe(
      "not a verification result: no addedTasks, processingTasks, failedTasks, metadataMismatchTasks counters to read the result from (phase idle, generation 2)",
    );
  });

  it("[idle] idle in the generation writesOff was sent in is not a result: waited past, said once", async () => {
    const inW = vp("idle", 1, { total: 8, completed: 8 });
    const s = setup({
      progress: (st) =>
        st.check === 0
          ? FRESH
          : st.writesOff === 0
            ? vp("recheck", 1)
            : st.n < 8
              ? inW
              : vp("idle", 2, { total: 8, completed: 8 }),
    });
    await s.run();
    expect(s.m.writesOffGeneration).toBe(1);
    expect(s.v.reads).toBe(9);
    expect(s.logs("info")).toEqual([
      "the verifier is idle in generation 1, not past generation 1 (writesOff's): not a result; waiting for the generation after it",
      "verified: phase idle, generation 2, totalTasks 8, completedTasks 8, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0 (writesOff was sent in generation 1)",
    ]);
  });

  it("[idle] idle in writesOff's generation until the step's time limit: the timeout names the generation it needs", async () => {
    const c = new AbortController();
    const s = setup(
      {
        progress: (st) => {
          if (st.n === 6) c.abort(new StepTimeout(6000));
          return st.check === 0
            ? FRESH
            : st.writesOff === 0
              ? vp("recheck", 3)
              : vp("idle", 3, { total: 8, completed: 8 });
        },
      },
      { signal: c.signal },
    );
    const e = await failure(s.run());
    expect(e.message).toBe(
      "timed out after 6s waiting for the verifier to finish: verifier: phase idle in a generation past 3 (finished after writesOff) (now phase idle, generation 3, totalTasks 8, completedTasks 8, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0)",
    );
  });

  it.each([
    ["processingTasks", { processingTasks: 2 }, "processingTasks 2"],
    ["addedTasks", { addedTasks: 4 }, "addedTasks 4"],
    ["both", { addedTasks: 4, processingTasks: 2 }, "addedTasks 4, processingTasks 2"],
  ])("idle past writesOff's generation with %s: not a result, said as such", async (_, more, said) => {
    // totalTasks the sum of the others, as v0.2.1 counts them (migration_verifier.go)
    const end = vp("idle", 2, { total: 2 + Object.values(more).reduce((n, v) => n + v, 0), completed: 2 });
    Object.assign(end.verificationStatus!, more);
    const s = setup({ progress: documented(end) });
    const e = await failure(s.run());
    expect(e.message).toBe(
      `not a verification result: ${said}: tasks not done in a finished verification (${describeVerifier(end)})`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(NOT_A_RESULT_HINT);
    expect(s.logs("info")).toEqual([]);
  });

  it("a verifier without generations (the contract's progress alone): never verified", async () => {
    const bare = (phase: string): VerifierProgress => {
      const p = vp(phase, 0, { total: 8, completed: 8 });
      delete p.generation;
      return p;
    };
    const s = setup({ progress: (st) => (st.check === 0 ? FRESH : st.writesOff === 0 ? bare("check") : bare("idle")) });
    const e = await failure(s.run());
    expect(e.message).toMatch(
      /^not a verification result: the verifier's progress has no generation, so it cannot be tied to this run's writesOff \(phase idle, totalTasks 8/,
    );
  });

  it("writesOff accepted in a run whose journal lacks its generation: not a result (fails safe)", async () => {
    const s = setup({ progress: [CHECKING, PASSED] }, { memory: accepted({ writesOff: { answered: "ok", at: 1 } }) });
    const e = await failure(s.run());
    expect(e.message).toMatch(
      /^not a verification result: the generation this verification's writesOff was sent in is not known/,
    );
  });
});

describe("a verifier restarted in the middle: said, journaled, followed (never a result from a new process)", () => {
  /** Restarted without --clean: idle, generation 0, the persisted counters (tasks still added and processing). */
  const STALE: VerifierProgress = {
    ...vp("idle", 0, { total: 8, completed: 2 }),
    verificationStatus: {
      ...vp("idle", 0, { total: 8, completed: 2 }).verificationStatus,
      addedTasks: 4,
      processingTasks: 2,
    },
  };
  /** The same, after a generation that failed tasks (the issue's second case). */
  const STALE_FAILED = vp("idle", 0, { total: 8, completed: 6, failed: 2 });
  const WARN_PERSISTED =
    "phase idle, generation 0, with tasks: a process before its check, showing the counters its metadata holds (with or without --clean: they look the same until a check)";
  const restarts = (s: ReturnType<typeof setup>) => s.of("verifier.restarted");

  it.each([
    ["processing tasks", STALE],
    ["failed tasks", STALE_FAILED],
  ])(
    "[restart] without --clean after writesOff (persisted %s at generation 0): not a result; a check resumes it, writesOff again, verified past the new generation",
    async (_, stale) => {
      const s = setup({
        progress: (st) =>
          st.check === 0
            ? FRESH
            : st.check === 1
              ? st.writesOff === 0
                ? vp("recheck", 2)
                : stale
              : st.writesOff === 1
                ? vp("recheck", 2, { total: 3 })
                : vp("idle", 3, { total: 3, completed: 3 }),
      });
      await s.run();
      expect(s.v.ops()).toEqual(["check", "writesOff", "check", "writesOff"]);
      expect(restarts(s)).toMatchObject([
        { index: 0, id: "cmd", progress: stale, why: WARN_PERSISTED, followed: 1, limit: 2 },
      ]);
      expect(s.of("verifier.baseline")).toMatchObject([
        { progress: FRESH, adopted: false },
        { progress: stale, adopted: false, resumes: true },
      ]);
      expect(s.of("verifier.writesOff").map((e) => e.generation)).toEqual([2, 2]);
      expect(s.logs("warn")).toEqual([
        expect.stringMatching(
          new RegExp(
            `^the verifier restarted: a new process answers at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(${WARN_PERSISTED.replace(/[()]/g, "\\$&")}; phase idle, generation 0, .*\\)\\. This run's check and writesOff went to the old process\\. Following it \\(1 of at most 2\\): a check to the new process \\(which resumes the verification its metadata holds, or starts afresh if it was started with --clean or on a new metadata database: its first answers to the check tell which\\), then writesOff again once it runs\\.$`,
          ),
        ),
      ]);
      expect(s.logs("info")).toEqual([
        "verified: phase idle, generation 3, totalTasks 3, completedTasks 3, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0 (writesOff was sent in generation 2)",
      ]);
      expect(s.m).toMatchObject({ restarts: 1, resuming: true, writesOffGeneration: 2, highestGeneration: 3 });
    },
  );

  it("[restart] with --clean after writesOff: a new verification from the start (check, writesOff again), verified", async () => {
    const s = setup({
      progress: (st) => (st.check === 0 ? FRESH : st.writesOff < st.check ? CHECKING : st.check === 1 ? FRESH : PASSED),
    });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff", "check", "writesOff"]);
    expect(restarts(s)).toMatchObject([
      {
        why: "phase idle, generation 0, no task: a process started on a new metadata database (or with --clean, once a check arrives)",
      },
    ]);
    expect(s.of("verifier.baseline")).toMatchObject([{ adopted: false }, { adopted: false }]);
    expect(s.of("verifier.baseline")[1]).not.toHaveProperty("resumes");
    // writes must still be stopped for the second writesOff: asked again
    expect(s.decisions().map((d) => [d.kind, d.check])).toEqual([
      ["interlock", "writes-stopped"],
      ["interlock", "writes-stopped"],
    ]);
    expect(s.logs("info")).toEqual([VERIFIED]);
  });

  it("[restart] writes no longer stopped when the second writesOff is due: refused, nothing sent to the new process but its check", async () => {
    const s = setup({
      progress: (st) => (st.check === 0 ? FRESH : st.writesOff < st.check ? CHECKING : st.check === 1 ? STALE : PASSED),
      onCommand: (op) => {
        if (op === "writesOff") s.ctx.run.memory.writesStopped = false;
      },
    });
    const e = await failure(s.run());
    expect(e.message).toMatch(/writes-stopped/);
    expect(s.v.ops()).toEqual(["check", "writesOff", "check"]);
  });

  it("[restart] a generation below the highest seen after writesOff: a new process, followed", async () => {
    const s = setup({
      progress: (st) =>
        st.check === 0
          ? FRESH
          : st.writesOff === 0
            ? vp("recheck", 4)
            : st.writesOff === 1 && st.check === 1
              ? vp("recheck", 1)
              : st.writesOff === 1
                ? vp("recheck", 4)
                : vp("idle", 5, { total: 8, completed: 8 }),
    });
    await s.run();
    // the new process runs (someone checked it): adopted, writesOff again
    expect(restarts(s)).toMatchObject([{ why: "generation 1, below the 4 it had shown", followed: 1 }]);
    expect(s.v.ops()).toEqual(["check", "writesOff", "writesOff"]);
    expect(s.logs("info").at(-1)).toMatch(
      /^verified: phase idle, generation 5, .* \(writesOff was sent in generation 1\)$/,
    );
  });

  it("[restart] before writesOff (the read right before it shows a new process): writesOff goes only after the new process's check", async () => {
    const s = setup({
      progress: (st) =>
        st.check === 0
          ? FRESH
          : st.check === 1
            ? st.n === 1
              ? CHECKING
              : STALE
            : st.writesOff === 0
              ? CHECKING
              : PASSED,
    });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "check", "writesOff"]);
    expect(restarts(s)).toMatchObject([{ why: WARN_PERSISTED }]);
    // followed from the read that showed it: no result is awaited from a process that never got
    // writesOff. Reads: baseline, the check shows, before writesOff (the restart); the new
    // process's baseline, its check shows, before writesOff; the result
    expect(s.v.reads).toBe(7);
    expect(s.logs("warn")[0]).toMatch(
      /^the verifier restarted: .*\. This run's check went to the old process\. Following it \(1 of at most 2\)/,
    );
  });

  it("[restart] while the check should show (persisted counters after it was accepted): its check resumes it", async () => {
    const s = setup({ progress: (st) => (st.check === 0 ? STALE : documented()(st)) }, { memory: accepted() });
    await s.run();
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
    expect(restarts(s)).toMatchObject([{ why: WARN_PERSISTED }]);
    expect(s.of("verifier.baseline")).toMatchObject([{ progress: STALE, resumes: true }]);
  });

  it("[restart] three restarts in one step: stops after two followed, the two ways on spelled out", async () => {
    const s = setup({
      progress: (st) => (st.check === 0 ? FRESH : st.writesOff < st.check ? CHECKING : STALE),
    });
    const e = await failure(s.run());
    expect(e.message).toMatch(
      /^the verifier restarted: a new process answers at \S+ \(phase idle, generation 0, with tasks: .*\); 2 restarts were followed in this step already: no more$/,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toBe(
      "Find out what restarts the verifier (its log, its supervisor), then choose: `syncbook run rb.yaml --resume` to continue (the restarted verifier gets a check, which resumes its persisted verification, then writesOff), or restart the verifier with --clean (or on a new metadata database), then `syncbook run rb.yaml --resume` to verify from the start.",
    );
    expect(s.v.ops()).toEqual(["check", "writesOff", "check", "writesOff", "check", "writesOff"]);
    // the third is journaled too: --resume starts from it
    expect(restarts(s).map((r) => r.followed)).toEqual([1, 2, 3]);
    expect(s.m).toMatchObject({ restarts: 3, resuming: true });
    expect(s.m).not.toHaveProperty("writesOff");
    expect(s.m).not.toHaveProperty("check");
  });

  it("never verified on stale counters, whatever generation they show after writesOff", async () => {
    // a restarted process answering idle, generation 0, with no failed task: not "verified"
    const s = setup({ progress: (st) => (st.check === 0 ? FRESH : st.writesOff === 0 ? vp("recheck", 2) : STALE) });
    const e = await failure(s.run());
    expect(s.logs("info")).toEqual([]);
    expect(e.message).toMatch(/no more$/);
  });
  it("progress with an error: the verifier itself failed (not a data difference)", async () => {
    const s = setup({ progress: documented({ ...PASSED, error: "metadata: no space" }) });
    const e = await failure(s.run());
    expect(e.message).toBe(
      `the verifier failed: "metadata: no space" (phase idle, generation 2, totalTasks 8, completedTasks 8, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0)`,
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^The verifier itself failed \(not a data difference\)/);
  });

  it("the step's time limit while rechecking: said with the verifier's last progress", async () => {
    const c = new AbortController();
    const s = setup(
      {
        progress: (st) => {
          if (st.n === 4) c.abort(new StepTimeout(6000));
          return st.writesOff === 0 ? documented()(st) : vp("recheck", 4);
        },
      },
      { signal: c.signal },
    );
    const e = await failure(s.run());
    expect(e.message).toBe(
      "timed out after 6s waiting for the verifier to finish: verifier: phase idle in a generation past 0 (finished after writesOff) (now phase recheck, generation 4, totalTasks 0, completedTasks 0, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0)",
    );
  });

  it("a failed read while waiting for the result is no sample (waits on)", async () => {
    const s = setup({ progress: (st) => (st.writesOff === 0 ? documented()(st) : st.n === 3 ? "reset" : PASSED) });
    await s.run();
    expect(s.logs("info")).toEqual(["verifier progress answers again", VERIFIED]);
  });
});

describe("a verification that keeps rechecking says so, with the instances that still see writes", () => {
  const R = vp("recheck", 1, { total: 8, completed: 3 });
  const resumed = () => accepted({ writesOff: { answered: "ok", at: 1 }, writesOffGeneration: 1 });
  const warn = (minutes: number, hint = "") =>
    `the verifier has been rechecking for ${minutes}m 00s (generation 1): writes still arriving? Each generation re-verifies what changed on the source meanwhile, so it ends only once writes have stopped${hint}`;

  it("every 2 minutes of rechecking, naming lagging instances, then those still applying events", async () => {
    const s = setup(
      { progress: [R, R, R, R, R, R, PASSED], tickMs: 60_000 },
      {
        memory: resumed(),
        fleet: [
          [
            { ...COMMITTED, totalEventsApplied: 10, lagTimeSeconds: 30 },
            { ...COMMITTED, totalEventsApplied: 25, lagTimeSeconds: 1 },
          ],
          [{ ...COMMITTED, totalEventsApplied: 3, lagTimeSeconds: 0 }],
          [
            { ...COMMITTED, totalEventsApplied: 7, lagTimeSeconds: 12 },
            { ...COMMITTED, totalEventsApplied: 7, lagTimeSeconds: 0 },
          ],
        ],
      },
    );
    await s.run();
    expect(s.logs("warn")).toEqual([
      warn(2, "; instances that still see changes: sync0 (lag 30s), sync2 (lag 12s)"),
      warn(4, "; instances that still see changes: sync0 (applied 15 more events)"),
    ]);
  });

  it("in runbook time: a rehearsal's faster clock says 2 min after 2.4 s at ×50", async () => {
    const s = setup(
      { progress: [R, R, R, R, PASSED], tickMs: 1200 },
      { memory: resumed(), scale: (ms) => ms / 50, fleet: [[COMMITTED]] },
    );
    await s.run();
    expect(s.logs("warn")).toEqual([warn(2)]);
  });

  it("a fleet read that fails: said without instances, and the next compares with the last read that answered", async () => {
    const v = scriptedVerifier({ progress: [R, R, R, R, R, R, R, R, PASSED], tickMs: 60_000 });
    const f = scripted({ sends: [], reads: [[{ totalEventsApplied: 10 }, { totalEventsApplied: 12 }]] });
    let failed = false;
    const fleet: Fleet = {
      ...f.fleet,
      progress: (signal) =>
        f.reads === 1 && !failed ? ((failed = true), Promise.reject(new Error("down"))) : f.fleet.progress(signal),
    };
    const { ctx, events } = verifierContext(fleet, v.verifier, { memory: resumed() });
    await verify.run(ctx, {});
    const warns = events.flatMap((e) => (e.type === "log" && e.level === "warn" ? [e.message] : []));
    expect(warns).toEqual([
      warn(2),
      warn(4),
      warn(6, "; instances that still see changes: sync0 (applied 2 more events)"),
    ]);
  });
});

describe("VerifierReader: a gone verifier fails fast, a slow one is waited for", () => {
  function reader(script: VScript, giveUpMs = 500, signal?: AbortSignal) {
    const v = scriptedVerifier(script);
    const f = scripted({ sends: [], reads: [[COMMITTED]] });
    const { ctx, events } = verifierContext(f.fleet, v.verifier, signal ? { signal } : {});
    const r = new VerifierReader(ctx, v.verifier, giveUpMs);
    const logs = () => events.flatMap((e) => (e.type === "log" ? [[e.level, e.message]] : []));
    const readAll = async (n: number) => {
      const out: (VerifierProgress | undefined)[] = [];
      for (let i = 0; i < n; i++) out.push(await r.read(ctx.signal));
      return out;
    };
    return { v, r, ctx, events, logs, readAll };
  }
  const REFUSED = `${VERIFIER_URL}: progress failed: connection refused (ECONNREFUSED)`;

  it("a read that answers is the progress, sampled into the journal", async () => {
    const s = reader({ progress: [CHECKING] });
    expect(await s.r.read(s.ctx.signal)).toEqual(CHECKING);
    expect(s.events).toMatchObject([{ type: "verifier.sampled", progress: CHECKING }]);
  });

  it("an answer without an error field is not a failure (older verifiers)", async () => {
    const { error: _, ...noError } = CHECKING;
    const s = reader({ progress: [noError] });
    expect(await s.r.read(s.ctx.signal)).toEqual(noError);
  });

  it.each([
    ["refused (not running)", "refused", REFUSED, /^The verifier is not running \(it exits after a failed check/],
    [
      "reset",
      "reset",
      `${VERIFIER_URL}: progress failed: connection reset (ECONNRESET)`,
      /^The verifier is not running/,
    ],
    [
      "a top-level {error} [idle]",
      { error: "metadata unreachable" },
      `${VERIFIER_URL}: progress refused: metadata unreachable`,
      /^The verifier cannot read its own progress \(its metadata database\?\)/,
    ],
    [
      "something else answering",
      "non-json",
      `${VERIFIER_URL}: progress failed: HTTP 502 non-JSON answer`,
      /^Something other than the verifier answers at the runbook's `verifier:` URL/,
    ],
  ] as const)("%s for giveUpAfter: the step fails with what was seen", async (_, read, problem, hint) => {
    const s = reader({ progress: [read] });
    // 100 ms a read: the first failure at +100, the 6th at +600 = 500 ms of failures
    expect(await s.readAll(5)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    const e = await failure(s.r.read(s.ctx.signal));
    expect(e.message).toBe(`the verifier has failed for 500ms: ${problem}`);
    expect(e.beforeResume).toBe(true);
    expect(e.hint).toMatch(hint);
    // said once, not at every read
    expect(s.logs()).toEqual([["warn", `verifier progress: ${problem}; giving up after 500ms of failures`]]);
  });

  it("each new kind of failure is said; the count runs from the first", async () => {
    const s = reader({ progress: ["refused", "refused", "reset"] }, 400);
    await s.readAll(3);
    const e = await failure(s.readAll(2));
    expect(e.message).toMatch(/^the verifier has failed for 400ms: .*connection reset/);
    expect(s.logs().map(([, m]) => m)).toEqual([
      `verifier progress: ${REFUSED}; giving up after 400ms of failures`,
      `verifier progress: ${VERIFIER_URL}: progress failed: connection reset (ECONNRESET); giving up after 400ms of failures`,
    ]);
  });

  it("an answer in between starts the count over, and is said", async () => {
    const s = reader({ progress: ["refused", "refused", "refused", CHECKING, "refused", "refused", "refused"] });
    const got = await s.readAll(7);
    expect(got[3]).toEqual(CHECKING);
    expect(s.logs()).toEqual([
      ["warn", `verifier progress: ${REFUSED}; giving up after 500ms of failures`],
      ["info", "verifier progress answers again"],
      ["warn", `verifier progress: ${REFUSED}; giving up after 500ms of failures`],
    ]);
  });

  it("slow answers (a check setting itself up) are no failure: waited for, said once", async () => {
    const s = reader(
      { progress: ["timeout", "timeout", "timeout", "timeout", "timeout", "timeout", "timeout", CHECKING] },
      300,
    );
    const got = await s.readAll(8);
    expect(got.at(-1)).toEqual(CHECKING);
    expect(s.logs()).toEqual([
      ["info", "verifier progress: no answer within 10s (it answers only once a check has set itself up): waiting"],
    ]);
  });

  // an adversarial run: a verifier that stopped answering mid-check was "setting itself up" for
  // the whole step, and its time limit said "now" of a read a minute old
  it("slow answers after answers in a running check: said as a verifier that may be stuck, its last answer's age given", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const s = reader({ progress: [CHECKING, "timeout", "timeout"] }, 300);
      await s.readAll(3);
      expect(s.logs()).toEqual([
        [
          "warn",
          expect.stringMatching(
            /^verifier progress: no answer within 10s, after answers in phase check \(its last answer \d+ms ago\): the verifier holds its answers while it turns a generation; if none comes, it may be stuck: read its log\. Waiting until the step's time limit$/,
          ),
        ],
      ]);
      expect(s.r.lastSeen(CHECKING, 1000)).not.toMatch(/ago/);
      vi.setSystemTime(Date.now() + 70_000);
      expect(s.r.lastSeen(CHECKING, 1000)).toMatch(/^phase check, .*, its last answer 1m 10s ago$/);
      expect(s.r.lastSeen(undefined, 1000)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  // an outside review: the setup's wait was said first, and a later silence mid-check never was
  it("a silence after answers is said again, after the setup's own wait was said", async () => {
    const s = reader({ progress: ["timeout", CHECKING, "timeout", "timeout", CHECKING] }, 300);
    await s.readAll(5);
    expect(s.logs().map(([l, m]) => `${l} ${String(m).slice(0, 60)}`)).toEqual([
      "info verifier progress: no answer within 10s (it answers only onc",
      "warn verifier progress: no answer within 10s, after answers in ph",
    ]);
  });

  it("slow answers after an idle answer (or an empty HTTP 500) are still a check setting itself up", async () => {
    for (const [name, first] of [
      ["idle", FRESH],
      ["an empty HTTP 500", "empty-500"],
    ] as const) {
      const s = reader({ progress: [first, "timeout", "timeout"] }, 300);
      await s.readAll(3);
      // (the empty 500 is said first, as a warning of its own)
      expect(s.logs().at(-1), name).toEqual([
        "info",
        "verifier progress: no answer within 10s (it answers only once a check has set itself up): waiting",
      ]);
    }
  });

  it("the last answer's age is given once it is older than two reads, never for a reader that read nothing", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const s = reader({ progress: [CHECKING] }, 300);
      await s.readAll(1);
      const at = Date.now();
      vi.setSystemTime(at + 2000);
      expect(s.r.lastSeen(CHECKING, 1000)).toBe(describeVerifier(CHECKING));
      vi.setSystemTime(at + 2001);
      expect(s.r.lastSeen(CHECKING, 1000)).toBe(`${describeVerifier(CHECKING)}, its last answer 2s ago`);
      expect(reader({ progress: [] }).r.lastSeen(CHECKING, 1000)).toBe(describeVerifier(CHECKING));
    } finally {
      vi.useRealTimers();
    }
  });

  it("slow answers between failures do not reset the count", async () => {
    const s = reader({ progress: ["refused", "timeout", "timeout", "timeout", "refused"] }, 400);
    await s.readAll(4);
    const e = await failure(s.r.read(s.ctx.signal));
    expect(e.message).toMatch(/^the verifier has failed for 400ms/);
  });

  it("an interrupted read is passed on as is, not counted as a failure", async () => {
    const c = new AbortController();
    const stop = new Error("interrupted");
    c.abort(stop);
    const s = reader({ progress: [CHECKING] }, 500, c.signal);
    await expect(s.r.read(c.signal)).rejects.toBe(stop);
    expect(s.logs()).toEqual([]);
  });

  // a check of this cutover went to it: DDL on the source under the default --ddlHandling failAll
  // is a cause (the verifier exits), and a restart without --clean meets it again (migration-verifier
  // v0.2.1 internal/verifier/change_stream.go lines 217-230 and 383-411)
  const CAUSES =
    'The verifier is not running: it exits on any DDL on the source under its default --ddlHandling failAll (its log then shows "Fatal error." with the error "received event with unknown optype: …"), on a failed check (e.g. a collection that exists only on the source), or on a second operational request while one is handled.';
  const AGAIN =
    "restarted without --clean, it resumes its change stream from the resume token it saved before that DDL, reads it again and exits again";
  const GONE = (target: string) =>
    `${CAUSES} Read its log. With no more DDL run on the source, restart the verifier with --clean (or on a new metadata database): ${AGAIN}. Not with --ddlHandling warnMost, which that error suggests: this cutover refuses a result that skipped DDL. Then \`syncbook run ${target} --resume\`: this step sends a new check, which compares every collection as it is now.`;
  const NOT_RUNNING =
    "The verifier is not running (it exits after a failed check, e.g. a collection that exists only on the source, or after two operational requests at once). Read its log, restart it, then `syncbook run rb.yaml --resume`: a restarted verifier gets a new check.";

  it.each(["refused", "reset"] as const)(
    "%s after a check of this cutover: the hint names DDL under failAll, the --clean restart and the full --resume",
    async (read) => {
      const s = reader({ progress: [read] });
      s.ctx.run.memory.verifier.check = { answered: "unknown", at: 0 };
      Object.assign(s.ctx.run, { target: "rb.yaml --var env=prod" });
      await s.readAll(5);
      const e = await failure(s.r.read(s.ctx.signal));
      expect(e.message).toMatch(/^the verifier has failed for 500ms: /);
      expect(e.hint).toBe(GONE("rb.yaml --var env=prod"));
      expect(e.beforeResume).toBe(true);
    },
  );

  it("gone after a check, in a rehearsal: the same causes, no `syncbook run` (pasted, it acts on the real fleet)", async () => {
    const s = reader({ progress: ["refused"] });
    s.ctx.run.memory.verifier.check = { answered: "ok", at: 0 };
    Object.assign(s.ctx.run, { mode: "rehearse" });
    await s.readAll(5);
    const e = await failure(s.r.read(s.ctx.signal));
    expect(e.hint).toBe(
      `${CAUSES} The rehearsal's verdict says why the simulator's verifier exited. A real verifier is restarted with --clean (${AGAIN}), and not with --ddlHandling warnMost; here, remove the cause, then rehearse again.`,
    );
    expect(e.hint).not.toMatch(/syncbook run|--resume/);
  });

  it("gone before any check of this cutover: not running, nothing of DDL", async () => {
    const s = reader({ progress: ["refused"] });
    await s.readAll(5);
    expect((await failure(s.r.read(s.ctx.signal))).hint).toBe(NOT_RUNNING);
  });

  it("the step's time limit while reads fail: that failure and its way on, not a wait's", async () => {
    const c = new AbortController();
    const s = reader({ progress: [CHECKING, "refused"] }, 60_000, c.signal);
    s.ctx.run.memory.verifier.check = { answered: "ok", at: 0 };
    await s.readAll(4);
    expect(s.r.outOfTime("the verifier to finish")).toBeUndefined();
    c.abort(new StepTimeout(30_000));
    const e = s.r.outOfTime("the verifier to finish")!;
    expect(e).toBeInstanceOf(StepFailure);
    // failing since the second read (+200), now +400
    expect(e.message).toBe(
      `timed out after 30s waiting for the verifier to finish: the verifier has failed for 200ms: ${REFUSED}`,
    );
    expect(e.reason).toBe("timeout");
    expect(e.beforeResume).toBe(true);
    expect(e.hint).toBe(GONE("rb.yaml"));
    // before any check: the step's time limit, said as a wait's with its own way on (raise the
    // timeout), not the reads' other ways on, whose plain --resume a rehearsal has not (a review)
    delete s.ctx.run.memory.verifier.check;
    expect(s.r.outOfTime("x")).toBeUndefined();
  });

  // only a verifier that refuses or cuts its connections went away: one that answers {"error"} or
  // something else answering keeps its own way on after a check too, and the time limit its own
  it.each([
    [{ error: "metadata unreachable" }, /^The verifier cannot read its own progress/],
    ["non-json", /^Something other than the verifier answers/],
  ] as const)("after a check, %j keeps its own way on, and the step's time limit its own", async (read, hint) => {
    const s = reader({ progress: [read] });
    s.ctx.run.memory.verifier.check = { answered: "ok", at: 0 };
    await s.readAll(5);
    expect((await failure(s.r.read(s.ctx.signal))).hint).toMatch(hint);
    const timedOut = new AbortController();
    timedOut.abort(new StepTimeout(1000));
    const t = reader({ progress: [read] }, 60_000, timedOut.signal);
    t.ctx.run.memory.verifier.check = { answered: "ok", at: 0 };
    await t.r.read(new AbortController().signal);
    expect(t.r.outOfTime("x")).toBeUndefined();
  });

  it("the step's time limit: no failure of its own when reads answer, are only slow, or when interrupted", async () => {
    const timedOut = new AbortController();
    timedOut.abort(new StepTimeout(1000));
    // a check of this cutover went out: reads refused, then answering again, are no failure
    const answers = reader({ progress: ["refused", CHECKING] }, 60_000, timedOut.signal);
    answers.ctx.run.memory.verifier.check = { answered: "ok", at: 0 };
    await answers.r.read(new AbortController().signal);
    await answers.r.read(new AbortController().signal);
    expect(answers.r.outOfTime("x")).toBeUndefined();
    const slow = reader({ progress: ["timeout"] }, 60_000, timedOut.signal);
    await slow.r.read(new AbortController().signal);
    expect(slow.r.outOfTime("x")).toBeUndefined();
    const stopped = new AbortController();
    stopped.abort(new Error("interrupted"));
    const failing = reader({ progress: ["refused"] }, 60_000, stopped.signal);
    await failing.r.read(new AbortController().signal);
    expect(failing.r.outOfTime("x")).toBeUndefined();
  });

  it("through the step: its time limit while the verifier refuses after writesOff names the --clean restart", async () => {
    const c = new AbortController();
    const s = setup(
      {
        progress: (st) => {
          if (st.n === 4) c.abort(new StepTimeout(5000));
          return st.n < 2 ? CHECKING : "refused";
        },
      },
      { signal: c.signal, memory: accepted() },
    );
    const e = await failure(s.run());
    // writesOff accepted, then the result awaited: refused from the third read on
    expect(e.message).toBe(
      `timed out after 5s waiting for the verifier to finish: the verifier has failed for 200ms: ${REFUSED}`,
    );
    expect(e.reason).toBe("timeout");
    expect(e.hint).toBe(GONE("rb.yaml"));
    expect(e.hint).not.toContain("waits again");
  });

  it("through the step: giveUpAfter in runbook time (scaled), the default a minute", async () => {
    const gone = setup({ progress: ["refused"], tickMs: 1000 }, { scale: (ms) => ms / 10 });
    const e = await failure(gone.run({ giveUpAfter: "30s" }));
    expect(e.message).toMatch(/^the verifier has failed for 3s: /);
    const long = setup({ progress: ["refused"], tickMs: 10_000 });
    const e2 = await failure(long.run());
    expect(DEFAULT_VERIFIER_GIVE_UP_MS).toBe(60_000);
    expect(e2.message).toMatch(/^the verifier has failed for 1m 00s: /);
  });
});

describe("verifierTools", () => {
  it("a verification step without the runbook's verifier: refused, naming the kind", () => {
    const f = scripted({ sends: [], reads: [[COMMITTED]] });
    const v = scriptedVerifier({ progress: [FRESH] });
    const { ctx } = verifierContext(f.fleet, v.verifier, { noVerifier: true, kind: "startVerification" });
    let e: unknown;
    try {
      verifierTools(ctx, {});
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(StepFailure);
    expect((e as StepFailure).message).toBe("startVerification needs the runbook's `verifier:` URL");
    expect((e as StepFailure).beforeResume).toBe(/--resume/.test((e as StepFailure).hint ?? ""));
    expect((e as StepFailure).hint).toBe(
      "Add `verifier: http://host:port` (the migration verifier's own port, e.g. 27020).",
    );
  });

  it("its time limits: the request's unscaled, giveUpAfter scaled", () => {
    const f = scripted({ sends: [], reads: [[COMMITTED]] });
    const v = scriptedVerifier({ progress: [FRESH] });
    const { ctx } = verifierContext(f.fleet, v.verifier, { scale: (ms) => ms / 4 });
    const t = verifierTools(ctx, { requestTimeout: "10s", giveUpAfter: "20s", filter: { a: 1 } });
    expect([t.v, t.requestTimeoutMs, t.reader.giveUpMs, t.filter]).toEqual([v.verifier, 10_000, 5000, { a: 1 }]);
    const d = verifierTools(ctx, {});
    expect([d.requestTimeoutMs, d.reader.giveUpMs, d.filter]).toEqual([300_000, 15_000, undefined]);
  });
});

describe("refused: the verifier's text and what it means [lock][writesoff-twice]", () => {
  const svc = (error: string, description = "") => new ServiceError(VERIFIER_URL, "progress", error, description, 200);
  const tr = (code: "timeout" | "network" | "non-json" | "bad-answer" | "connect", requestSent = true) =>
    new TransportError(VERIFIER_URL, "progress", code, code, { requestSent });
  // a real run's way on (the hints' text in a rehearsal: test/steps/way-on.test.ts)
  const RUN = { mode: "run", target: "rb.yaml", targetKept: "rb.yaml", keptNote: "" } as const;
  const thrown = (f: () => void): StepFailure => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(StepFailure);
      return e as StepFailure;
    }
    throw new Error("did not throw");
  };

  it.each(["check", "writesOff"] as const)("%s answered 'request in progress': the verifier now shuts down", (op) => {
    const e = thrown(() => refused(RUN, op, svc("APIError", "Request in progress")));
    expect(e.message).toBe(`the verifier refused ${op}: APIError: Request in progress`);
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^Another operational request was being handled .* and the verifier now shuts down/);
  });

  it("writesOff already set, this run had not sent it: something else did", () => {
    const e = thrown(() => refused(RUN, "writesOff", svc("writesOff already set")));
    expect(e.message).toBe(
      "the verifier refused writesOff: writesOff already set (this run had not sent it: something else did)",
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^Something other than this run told the verifier writes are off/);
  });

  it("writesOff already set after this run's refused one: it stays set, this verification never finishes", () => {
    const e = thrown(() =>
      refused(RUN, "writesOff", svc("writesOff already set"), { answered: "error", at: 1, error: "no time" }),
    );
    expect(e.message).toBe(
      "the verifier refused writesOff: writesOff already set (this run's earlier writesOff was refused: no time)",
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^The verifier sets its writes-off flag before it reads the clusters' times, so a refused/);
  });

  it("writesOff already set, this run's earlier one without its text", () => {
    const e = thrown(() => refused(RUN, "writesOff", svc("writesOff already set"), { answered: "error", at: 1 }));
    expect(e.message).toBe(
      "the verifier refused writesOff: writesOff already set (this run had not sent it: something else did)",
    );
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^The verifier sets its writes-off flag/);
  });

  it("writesOff failing to read a cluster time: cannot be retried", () => {
    const e = thrown(() => refused(RUN, "writesOff", svc("failed to fetch source's Cluster Time: x")));
    expect(e.message).toBe("the verifier refused writesOff: failed to fetch source's Cluster Time: x");
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(
      /^The verifier sets its writes-off flag before it reads the clusters' times, so this refusal cannot be retried/,
    );
  });

  it("for check, 'already set' and 'cluster time' are refusals like any other", () => {
    for (const text of ["writesOff already set", "failed to fetch source's cluster time"]) {
      const e = thrown(() => refused(RUN, "check", svc(text)));
      expect(e.message).toBe(`the verifier refused check: ${text}`);
      expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
      expect(e.hint).toBe("Read the verifier's log; nothing was sent again.");
    }
  });

  it("a request never sent: not sent, is the verifier running?", () => {
    const e = thrown(() => refused(RUN, "check", tr("connect", false)));
    expect(e.message).toBe(`verifier check not sent: ${VERIFIER_URL}: progress failed: connect`);
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^Is the verifier running at the runbook's `verifier:` URL\?/);
  });

  it.each(["non-json", "bad-answer"] as const)("writesOff answered %s: the handler failed (its panic)", (code) => {
    const e = thrown(() => refused(RUN, "writesOff", tr(code)));
    expect(e.message).toBe(`verifier writesOff failed: ${VERIFIER_URL}: progress failed: ${code}`);
    expect(e.beforeResume).toBe(/--resume/.test(e.hint ?? ""));
    expect(e.hint).toMatch(/^The verifier's handler failed \(an empty HTTP 500 is its panic/);
  });

  it("no answer (unknown outcome): returns, the caller learns it from progress", () => {
    expect(refused(RUN, "writesOff", tr("timeout"))).toBeUndefined();
    expect(refused(RUN, "writesOff", tr("network"))).toBeUndefined();
    expect(refused(RUN, "check", tr("non-json"))).toBeUndefined();
    expect(refused(RUN, "check", tr("bad-answer"))).toBeUndefined();
    expect(refused(RUN, "check", new Error("other"))).toBeUndefined();
  });

  it("writesOff refused through the step: the run's memory says refused, the text is the verifier's", async () => {
    const s = setup({
      writesOff: [{ refused: "failed to fetch source's cluster time", description: "" }],
      progress: documented(),
    });
    const e = await failure(s.run());
    expect(e.message).toBe("the verifier refused writesOff: failed to fetch source's cluster time");
    expect(s.m.writesOff).toMatchObject({ answered: "error" });
    expect(s.v.ops()).toEqual(["check", "writesOff"]);
  });

  it("writesOff refused again after this run's refused one: names the earlier refusal", async () => {
    const s = setup(
      { writesOff: [{ refused: "writesOff already set" }], progress: [CHECKING] },
      { memory: accepted({ writesOff: { answered: "error", at: 1, error: "cluster time" } }) },
    );
    const e = await failure(s.run());
    expect(e.message).toBe(
      "the verifier refused writesOff: writesOff already set (this run's earlier writesOff was refused: cluster time)",
    );
  });

  it("writesOff never sent: fails, nothing in flight", async () => {
    const s = setup({ writesOff: ["not-sent"], progress: documented() });
    const e = await failure(s.run());
    expect(e.message).toMatch(/^verifier writesOff not sent: /);
    expect(s.m.writesOff).toMatchObject({ answered: "error" });
  });
});

describe("askOf: what an outcome means for the run's memory", () => {
  const err = (o: ServiceError | TransportError) => askOf({ ok: false, error: o, sentAt: 0, durationMs: 1 }, 7);
  const tr = (code: "timeout" | "aborted" | "network" | "non-json" | "connect", requestSent = true) =>
    new TransportError(VERIFIER_URL, "progress", code, code, { requestSent });

  it("accepted, refused, never sent, or unknown (in flight only when it timed out or was cut short)", () => {
    expect(askOf({ ok: true, answer: { success: true }, sentAt: 0, durationMs: 1, status: 200 }, 7)).toEqual({
      answered: "ok",
      at: 7,
    });
    const m = (c: string) => `${VERIFIER_URL}: progress failed: ${c}`;
    expect(err(new ServiceError(VERIFIER_URL, "progress", "E", "d", 200))).toEqual({
      answered: "error",
      at: 7,
      error: `${VERIFIER_URL}: progress refused: E: d`,
    });
    expect(err(tr("connect", false))).toEqual({ answered: "error", at: 7, error: m("connect") });
    expect(err(tr("timeout"))).toEqual({ answered: "unknown", at: 7, error: m("timeout"), inFlight: true });
    expect(err(tr("aborted"))).toEqual({ answered: "unknown", at: 7, error: m("aborted"), inFlight: true });
    expect(err(tr("network"))).toEqual({ answered: "unknown", at: 7, error: m("network") });
    expect(err(tr("non-json"))).toEqual({ answered: "unknown", at: 7, error: m("non-json") });
  });

  it("may a lost request still arrive: only one that left and had no answer in time, or was given up", () => {
    expect(mayStillArrive(tr("timeout"))).toBe(true);
    expect(mayStillArrive(tr("aborted"))).toBe(true);
    // given up before any byte left: it can never arrive
    expect(mayStillArrive(tr("aborted", false))).toBe(false);
    expect(mayStillArrive(tr("timeout", false))).toBe(false);
    for (const c of ["network", "non-json", "connect"] as const) expect(mayStillArrive(tr(c))).toBe(false);
    expect(mayStillArrive(new ServiceError(VERIFIER_URL, "progress", "E", "d", 200))).toBe(false);
  });

  it("forget: a new verification, nothing asked", () => {
    const m: VerifierMemory = accepted({ writesOff: { answered: "ok", at: 1 } });
    forgetVerification(m);
    expect(m).toEqual({});
    // the reverse is forgotten only when a verification begins (its baseline): a check refused
    // before then still says why the run is not verified
    m.reversed = "rollback";
    forgetVerification(m);
    expect(m).toEqual({ reversed: "rollback" });
  });

  it("after a reverse nothing of the verification before counts, not even a verify that passed; restarts and a refusal stay", () => {
    const m: VerifierMemory = accepted({
      writesOff: { answered: "ok", at: 1 },
      writesOffGeneration: 2,
      fromStart: true,
      verified: { at: 5, generation: 3 },
      restarts: 1,
      refused: "resumed",
    });
    reversedVerification(m, "rollback");
    expect(m).toEqual({ reversed: "rollback", restarts: 1, refused: "resumed" });
  });
});

describe("verify: what it is, for the plan and lint", () => {
  const to = {
    instances: ["http://a:1", "http://b:2"],
    verifier: "http://v:27020",
    redact: (s: string) => s.replace("secret", "***"),
  };

  it("its body, title and timing", () => {
    expect(verify.body({ verify: null })).toEqual({});
    expect(verify.body({ verify: { timeout: "1h" } })).toEqual({ timeout: "1h" });
    expect(verify.body({ commit: {} })).toBeUndefined();
    expect(verify.title({})).toBe("Verify the destination against the source");
    expect(verify.timing!({ timeout: "2h", pollInterval: "5s", giveUpAfter: "1m" })).toEqual({
      timeout: "2h",
      pollInterval: "5s",
    });
  });

  it("its plan: change event application, the baseline, one check, progress, the states, writesOff once, the result", () => {
    expect(verify.plan({ filter: { db: "secret" } }, to)).toEqual([
      {
        method: "GET",
        target: "http://a:1",
        path: "/api/v1/progress",
        note: "polled until change event application (unless the run's check runs)",
      },
      {
        method: "GET",
        target: "http://b:2",
        path: "/api/v1/progress",
        note: "polled until change event application (unless the run's check runs)",
      },
      { method: "GET", target: to.verifier, path: "/api/v1/progress", note: "no check yet: the baseline" },
      {
        method: "POST",
        target: to.verifier,
        path: "/api/v1/check",
        body: { filter: { db: "***" } },
        note: "once per verification; adopted, not sent, when the run's check (or another) already runs",
      },
      { method: "GET", target: to.verifier, path: "/api/v1/progress", note: "polled until the check runs" },
      { method: "GET", target: "http://a:1", path: "/api/v1/progress", note: "read once: the states writesOff meets" },
      { method: "GET", target: "http://b:2", path: "/api/v1/progress", note: "read once: the states writesOff meets" },
      {
        method: "POST",
        target: to.verifier,
        path: "/api/v1/writesOff",
        body: {},
        note: "once; never resent (not when already accepted in the run this one resumes)",
      },
      { method: "GET", target: to.verifier, path: "/api/v1/progress", note: "polled until phase idle: the result" },
    ]);
  });

  const flow = (o: Partial<Flow> = {}): Flow => ({
    states: new Set(["COMMITTED"]),
    writesStopped: true,
    canCommitSeen: true,
    streamHashingSeen: true,
    ceaReached: false,
    starts: [0],
    firstCommand: 0,
    committed: 3,
    pendingCommits: new Set(),
    verifying: undefined,
    checkMay: undefined,
    checkMust: false,
    writesOffMay: false,
    writesOffMust: false,
    checkBeforeReverse: undefined,
    ...o,
  });
  function lint(f: Flow, steps: Step[] = [{ commit: {} }], external?: boolean) {
    const reports: [string, string][] = [];
    const at = {
      index: 5,
      step: { verify: {} },
      runbook: { steps, ...(external === undefined ? {} : { writesStoppedExternally: external }) },
      flow: f,
      report: (rule: RuleInfo, message: string) => reports.push([rule.id, message]),
      runs: (j: number) => (steps[j]?.when === false ? "never" : "always"),
    } as unknown as SequenceStep;
    const out = verify.sequence({}, at);
    return { reports, out, rules: reports.map(([r]) => r) };
  }

  it("after commit, writes stopped: nothing to report; the check and writesOff are then certain", () => {
    const { reports, out } = lint(flow());
    expect(reports).toEqual([]);
    expect(out.ok).toEqual(
      flow({ checkMay: 5, checkMust: true, writesOffMay: true, writesOffMust: true, ceaReached: true }),
    );
    // failed: a check may have started, writesOff may have been sent, a verification may be in progress
    expect(out.failed).toEqual(flow({ verifying: { at: 5, embedded: false }, checkMay: 5, writesOffMay: true }));
  });

  it("an earlier check is kept as the first; an embedded verification stays, a verifier's ends", () => {
    const embedded = lint(flow({ checkMay: 2, checkMust: true, verifying: { at: -1, embedded: true } }));
    expect(embedded.out.ok).toMatchObject({ checkMay: 2, verifying: { at: -1, embedded: true } });
    expect(embedded.out.failed).toMatchObject({ checkMay: 2, verifying: { at: 5, embedded: false }, checkMust: true });
    const started = lint(flow({ checkMay: 2, checkMust: true, verifying: { at: 2, embedded: false } }));
    expect(started.out.ok.verifying).toBeUndefined();
  });

  it("[after-commit] writesOff while the sync can still be before COMMITTED, with a commit in the runbook", () => {
    const { reports } = lint(flow({ states: new Set(["RUNNING", "COMMITTING", "COMMITTED"]) }));
    expect(reports).toEqual([
      [
        "writes-off-before-commit",
        `This verify sends writesOff while the sync can still be RUNNING or COMMITTING: ${METADATA_BEFORE_COMMIT}. The verification then fails on those collections.`,
      ],
    ]);
  });

  it("writesOff before COMMITTED is reported when no commit step is there but the sync cannot be COMMITTED", () => {
    expect(lint(flow({ states: new Set(["RUNNING"]) }), []).rules).toEqual(["writes-off-before-commit"]);
    // COMMITTED reachable and no commit step of this runbook (another's): not this verify's mistake
    expect(lint(flow({ states: new Set(["RUNNING", "COMMITTED"]) }), []).rules).toEqual([]);
    // a commit step that never runs does not count
    const off = [{ commit: {}, when: false } as unknown as Step];
    expect(lint(flow({ states: new Set(["RUNNING", "COMMITTED"]) }), off).rules).toEqual([]);
    expect(lint(flow({ states: new Set(["RUNNING", "COMMITTED"]) }), [{ verify: {} }]).rules).toEqual([]);
  });

  it("writesOff where no stopWrites is sure to have run, unless writes are stopped externally", () => {
    expect(lint(flow({ writesStopped: false })).reports).toEqual([
      [
        "verify-writes-off-early",
        "This verify tells the verifier that writes to the source have stopped (writesOff), and no stopWrites step is sure to have run before it.",
      ],
    ]);
    expect(lint(flow({ writesStopped: false }), undefined, true).reports).toEqual([]);
    expect(lint(flow({ writesStopped: false }), undefined, false).rules).toEqual(["verify-writes-off-early"]);
  });

  it("a verification where no sync runs: reported, unless the check is already certain", () => {
    expect(lint(flow({ states: new Set(["IDLE"]) }), []).reports[0]).toEqual([
      "verify-before-cea",
      "No sync is running here (the fleet is IDLE until start), so change event application is never reached and verification cannot begin.",
    ]);
    expect(lint(flow({ states: new Set(["IDLE"]), checkMust: true }), []).rules).toEqual(["writes-off-before-commit"]);
  });
});

// issue 36, point 1: "Every verifier condition … must be judged by the same 'earned' rules as
// `verify`". The step kinds hand evaluate() earned.ts's standing for the answer they read: a
// success test whose memory passes (this cutover's check and writesOff were accepted) still fails
// on an answer that is not this cutover's result (a restarted process: idle, generation 0).
describe("assert and waitFor on the verifier ask earned.ts for every answer they read", () => {
  const SUCCESS = { phase: "idle", failedTasks: 0, metadataMismatchTasks: 0 };
  const afterWritesOff = accepted({
    writesOff: { answered: "ok", at: 1 },
    writesOffGeneration: 1,
    highestGeneration: 2,
  });
  function kind(name: "assert" | "waitFor", script: VScript, signal?: AbortSignal, more: Partial<VerifierMemory> = {}) {
    const s = setup(script, { memory: { ...afterWritesOff, ...more }, ...(signal ? { signal } : {}) });
    Object.assign(s.ctx, { kind: name });
    Object.assign(s.ctx.run.runbook, { instances: ["http://i0"] });
    return { ...s, go: () => (name === "assert" ? assertKind : waitFor).run(s.ctx, SUCCESS) };
  }

  it("assert: the success test on this cutover's result passes; on a restarted process's idle it fails, saying why", async () => {
    const ok = kind("assert", { progress: [{ ...PASSED, generation: 2 }] });
    await ok.go();
    const restarted = kind("assert", { progress: [FRESH] });
    const e = await failure(restarted.go());
    expect(e.message).toMatch(
      /^assertion failed: .*not this cutover's verification result: the verifier does not show this cutover's check \(phase idle, generation 0, no task/,
    );
    // idle in writesOff's own generation: not a result either
    const early = kind("assert", { progress: [vp("idle", 1, { total: 8, completed: 8 })] }, undefined, {
      highestGeneration: 1,
    });
    expect((await failure(early.go())).message).toMatch(
      /generation 1 is not past generation 1, the one writesOff was sent in/,
    );
  });

  it("waitFor: an answer that is not this cutover's result is waited past until the step's time limit", async () => {
    const c = new AbortController();
    const w = kind(
      "waitFor",
      { progress: (st) => (st.n > 5 ? (c.abort(new StepTimeout(2000)), FRESH) : FRESH) },
      c.signal,
    );
    const e = await failure(w.go());
    expect(e.message).toMatch(/not this cutover's verification result/);
  });
});
