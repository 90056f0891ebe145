/**
 * The rules of src/steps/kit/fleet-ops.ts pinned one by one, for mutation testing (issue 19):
 * what each decision says (the journal's decision events are what a person and `--resume` read),
 * which instances a command goes to, when progress is read again, and what a refusal, a doubt or
 * the step's time limit leaves behind. fleet-ops.test.ts tells the reconcile's story; this file
 * pins its every branch and message. Sources quoted:
 *
 * - [item 1] issue 12: "After any transport failure once the request may have reached the
 *   service, the command's effect is unknown until progress proves it *took* effect, or the
 *   service refuses a repeat; wait out a settle window before judging 'did not take effect', and
 *   prefer stopping with what was seen over a resend whenever in doubt."
 * - [item 2] issue 12: "Check identity (distinct ids, one coordinator, one direction) on every
 *   progress read that carries ids, and refuse `commit`, `reverse`, `pause`, `resume` on a fleet
 *   that is not one."
 * - [block] service facts: "`commit` and `reverse` block until they have been called on every
 *   instance; send them to all at once".
 * - [multi] service facts, "Multiple instances": identical commands go to every instance.
 * - [progress] service facts: progress "may fail for minutes after a resume"; it is safe to retry.
 * - [force] DESIGN.md: an interlock refuses the step unless `--force=<check>` names it, and the
 *   override is recorded.
 * - [reverse] service facts: "COMMITTED → REVERSING → RUNNING in the opposite direction
 *   (`directionMapping` swaps Source and Destination)".
 */
import { describe, expect, it } from "vitest";
import { commandTookEffect, ServiceError, type ApiError, type CommandOperation } from "../../src/api/index.js";
import type { Progress } from "../../src/api/types.js";
import type { RunEvent } from "../../src/events.js";
import type { FleetSnapshot } from "../../src/fleet/index.js";
import { StepFailure, StepTimeout, type RunContext, type StepContext } from "../../src/steps/index.js";
import {
  checkIdentity,
  checkInterlock,
  fleetIdentityProblems,
  observeIdentity,
  readFleet,
  sendCommand,
  short,
  type CommandSpec,
} from "../../src/steps/kit/fleet-ops.js";
import { context, reasons, refOf, REQUEST_TIMEOUT, scripted, type Script } from "../support/fleet-fake.js";
import { delay } from "../../src/timers.js";

// ---- helpers --------------------------------------------------------------------------------

const url = (i: number): string => refOf(i).url;
/** The message of a scripted transport failure (`reset`, `timeout`, `not-sent`). */
const failed = (i: number, op: string, o: string): string => `${url(i)}: ${op} failed: ${o}`;
/** The message of a scripted refusal. */
const refusal = (i: number, op: string): string => `${url(i)}: ${op} refused: InvalidStateTransition: no`;
/** The same refusal from several instances, said once with them (src/api/errors.ts `errorsText`). */
const refusals = (is: number[], op: string): string =>
  `${is.length} instances (${is.map(url).join(", ")}): ${op} refused: InvalidStateTransition: no`;
const progressFailed = (i: number): string => `${url(i)}: progress failed: refused`;

/** The decision events, without what every event has (type, seq, at). */
const decisions = (events: RunEvent[]): Record<string, unknown>[] =>
  events.flatMap((e) => {
    if (e.type !== "decision") return [];
    const { type: _t, seq: _s, at: _a, ...rest } = e as unknown as Record<string, unknown>;
    return [rest];
  });

/** Records the options each emit was called with (`more`: no fsync of its own). */
function emitOptions(ctx: StepContext): unknown[] {
  const seen: unknown[] = [];
  const emit = ctx.run.emit;
  ctx.run.emit = ((type: never, payload: never, options?: never) => {
    seen.push(options);
    return emit(type, payload, options);
  }) as RunContext["emit"];
  return seen;
}

const spec = (op: CommandOperation, extra: Partial<CommandSpec> = {}): CommandSpec => ({
  op,
  body: {},
  tookEffect: (p: Progress) => commandTookEffect(op, p.state),
  ...extra,
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A scripted fleet whose progress takes 5 ms to answer, with a 1 ms request time limit: every
 * settle window is exactly one progress read, so a script's n-th read is the n-th window's.
 */
function oneReadWindows(script: Script, opts: { signal?: AbortSignal; force?: string[] } = {}) {
  const f = scripted(script);
  const progress = f.fleet.progress.bind(f.fleet);
  f.fleet.progress = async (signal) => {
    await sleep(5);
    return progress(signal);
  };
  const { ctx, events } = context(f.fleet, opts);
  ctx.run.defaults.requestTimeoutMs = 1;
  return { f, ctx, events };
}

async function failure(p: Promise<unknown>): Promise<StepFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StepFailure);
  return err as StepFailure;
}

const UNSAFE_HINT =
  "Check those instances' progress by hand before anything else; then `syncbook run rb.yaml --resume`, which reads the fleet before sending anything.";

// ---- readFleet, short -----------------------------------------------------------------------

describe("readFleet: [progress] instances that fail are read again", () => {
  it("reads again until every instance answers, and says why it waits", async () => {
    const f = scripted({
      sends: [],
      reads: [
        ["error", {}],
        ["error", { state: "PAUSED" }],
      ],
    });
    const { ctx, events } = context(f.fleet);
    const snap = await readFleet(ctx);
    expect(f.reads).toBe(2);
    expect(snap.instances.map((i) => i.progress?.state)).toEqual(["RUNNING", "PAUSED"]);
    const d = decisions(events);
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ index: 0, id: "cmd", kind: "retry", ok: true });
    expect(d[0]!.reason).toMatch(
      new RegExp(
        `^progress failing on sync0 \\(${progressFailed(0)}\\), sync1 \\(${progressFailed(1)}\\); retrying in \\d+ ms \\(progress is safe to retry and may fail for minutes after a resume\\)$`,
      ),
    );
  });

  it("before a command, each retry says that nothing has been sent yet, what the command waits for and how long it will wait", async () => {
    const f = scripted({
      sends: [],
      reads: [
        ["error", "error", {}],
        ["error", {}],
      ],
    });
    // each read takes 150 ms: the time left counts down from the first read
    const slow = { ...f.fleet, progress: (s?: AbortSignal) => delay(150).then(() => f.fleet.progress(s)) };
    const { ctx, events } = context(slow);
    await readFleet(ctx, 10_000, true, "commit");
    const d = decisions(events);
    expect(d).toHaveLength(2);
    for (const x of d)
      expect(x.reason).toMatch(
        /^progress failing on sync0 \(.*\); retrying in \d+ ms \(progress is safe to retry and may fail for minutes after a resume\); nothing has been sent yet: commit waits for (sync0, sync1|sync0) so that its interlocks judge the whole fleet, and is refused unsent if still so in 9\.\ds$/,
      );
    expect(d[0]!.reason).toContain("commit waits for sync0, sync1 so that");
    expect(d[1]!.reason).toContain("commit waits for sync0 so that");
    expect(f.sent).toEqual([[], []]);
  });

  it("an answer from every instance ends the read at once", async () => {
    const f = scripted({ sends: [], reads: [[{}], [{}]] });
    const { ctx, events } = context(f.fleet);
    await readFleet(ctx);
    expect(f.reads).toBe(1);
    expect(decisions(events)).toEqual([]);
  });

  // facts [progress 1.20]: "once initialization completes it reports IDLE, or, after a crash or restart, **the state it
  // had before the crash**": INITIALIZING is neither a failure nor IDLE; what it settles in is judged
  it("an instance INITIALIZING (a 1.20+ restart) is read again until it settles; both reasons named", async () => {
    const f = scripted({
      sends: [],
      reads: [
        ["error", { state: "INITIALIZING" }, { state: "RUNNING" }],
        [{ state: "INITIALIZING" }, { state: "INITIALIZING" }, { state: "RUNNING" }],
      ],
    });
    const { ctx, events } = context(f.fleet);
    const snap = await readFleet(ctx, 5000);
    expect(f.reads).toBe(3);
    expect(snap.instances.map((i) => i.progress?.state)).toEqual(["RUNNING", "RUNNING"]);
    const d = decisions(events);
    expect(d).toHaveLength(2);
    expect(d[0]!.reason).toMatch(
      new RegExp(
        `^progress failing on sync0 \\(${progressFailed(0)}\\); sync1 INITIALIZING \\(not settled: after a restart a 1\\.20\\+ service returns to the state it had before\\); retrying in \\d+ ms `,
      ),
    );
    expect(d[1]!.reason).toMatch(/^sync0, sync1 INITIALIZING \(not settled: .*\); retrying in \d+ ms/);
  });

  it("INITIALIZING is read as it is when the caller waits it out itself (settle false), or once it gives up", async () => {
    const f = scripted({ sends: [], reads: [[{ state: "INITIALIZING" }, { state: "IDLE" }]] });
    const { ctx, events } = context(f.fleet);
    expect((await readFleet(ctx, undefined, false)).instances[0]!.progress?.state).toBe("INITIALIZING");
    expect(f.reads).toBe(1);
    expect(decisions(events)).toEqual([]);
    const g = scripted({ sends: [], reads: [[{ state: "INITIALIZING" }]] });
    const late = context(g.fleet);
    expect((await readFleet(late.ctx, 0)).instances[0]!.progress?.state).toBe("INITIALIZING");
  });
});

describe("short: an error's message, cut at 160 characters", () => {
  const err = (message: string) => ({ message }) as ApiError;
  it("no error: empty", () => expect(short(undefined)).toBe(""));
  it("160 characters are kept whole; 161 are cut to 157 and an ellipsis", () => {
    expect(short(err("x".repeat(160)))).toBe("x".repeat(160));
    expect(short(err("y".repeat(161)))).toBe(`${"y".repeat(157)}…`);
  });
});

// ---- checkInterlock -------------------------------------------------------------------------

describe("checkInterlock: [force] refused unless --force names the check, the decision recorded either way", () => {
  const one = scripted({ sends: [], reads: [[{}]] }).fleet;

  it("ok: recorded as an interlock that passed (with the command, no fsync of its own), nothing thrown", () => {
    const { ctx, events } = context(one);
    const opts = emitOptions(ctx);
    checkInterlock(ctx, "can-commit", true, "canCommit is true on 1 instance(s)");
    expect(decisions(events)).toEqual([
      {
        index: 0,
        id: "cmd",
        kind: "interlock",
        ok: true,
        check: "can-commit",
        reason: "canCommit is true on 1 instance(s)",
      },
    ]);
    expect(opts).toEqual([{ more: true }]);
  });

  it("ok while --force names it: still a plain interlock, nothing overridden", () => {
    const { ctx, events } = context(one, { force: ["can-commit"] });
    checkInterlock(ctx, "can-commit", true, "fine");
    expect(decisions(events)).toEqual([
      { index: 0, id: "cmd", kind: "interlock", ok: true, check: "can-commit", reason: "fine" },
    ]);
  });

  it("not ok: the step is refused with the check's name and the default hint", () => {
    const { ctx, events } = context(one, { force: ["no-errors"] });
    let err: unknown;
    try {
      checkInterlock(ctx, "can-commit", false, "canCommit is false on sync0");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StepFailure);
    expect((err as StepFailure).message).toBe("refused (can-commit): canCommit is false on sync0");
    expect((err as StepFailure).reason).toBe("interlock");
    expect((err as StepFailure).beforeResume).toBe(/--resume/.test((err as StepFailure).hint ?? ""));
    expect((err as StepFailure).hint).toBe(
      "Fix the cause; only if you are certain it is safe, rerun with --force=can-commit.",
    );
    expect(decisions(events)).toEqual([
      { index: 0, id: "cmd", kind: "interlock", ok: false, check: "can-commit", reason: "canCommit is false on sync0" },
    ]);
  });

  it("not ok with a hint of its own: that hint", () => {
    const { ctx } = context(one);
    expect(() => checkInterlock(ctx, "writes-stopped", false, "no stopWrites step", "Add one.")).toThrow(
      expect.objectContaining({ hint: "Add one.", reason: "interlock", beforeResume: false }) as Error,
    );
    // a hint that says what to do before the --resume, and the flags that --resume needs then
    const resume = { beforeResume: true as const, resumeFlags: ["--allow-changed-runbook"] };
    expect(() => checkInterlock(ctx, "writes-stopped", false, "no stopWrites step", "Edit it.", resume)).toThrow(
      expect.objectContaining({ beforeResume: true, resumeFlags: ["--allow-changed-runbook"] }) as Error,
    );
    // the default hint names no edit: the mark and the flags are not its
    expect(() => checkInterlock(ctx, "writes-stopped", false, "no stopWrites step", undefined, resume)).toThrow(
      expect.objectContaining({ beforeResume: false, resumeFlags: undefined }) as Error,
    );
    // ok: nothing thrown, whatever it carries
    expect(() => checkInterlock(ctx, "writes-stopped", true, "stopped", "Edit it.", resume)).not.toThrow();
  });

  it("not ok, --force names it: let through, recorded as forced with the reason and the override", () => {
    const { ctx, events } = context(one, { force: ["can-commit"] });
    const opts = emitOptions(ctx);
    expect(() => checkInterlock(ctx, "can-commit", false, "canCommit is false on sync0")).not.toThrow();
    expect(decisions(events)).toEqual([
      {
        index: 0,
        id: "cmd",
        kind: "force",
        ok: true,
        check: "can-commit",
        reason: "canCommit is false on sync0 — overridden by --force=can-commit",
      },
    ]);
    expect(opts).toEqual([{ more: true }]);
  });
});

// ---- fleet identity -------------------------------------------------------------------------

describe("fleet identity: [item 2] the problems, the memory, what is said and refused", () => {
  const AT = Date.parse("2026-01-01T03:00:00Z");
  const snap = (...ps: (Partial<Progress> | "error")[]): FleetSnapshot => ({
    at: AT,
    instances: ps.map((p, i) =>
      p === "error"
        ? { ref: refOf(i), error: new ServiceError(url(i), "progress", "E", "down", 500) }
        : { ref: refOf(i), progress: { state: "RUNNING", ...p } },
    ),
  });
  const dir = (s: string, d: string) => ({ directionMapping: { Source: `${s}: h:1`, Destination: `${d}: h:2` } });
  const one = scripted({ sends: [], reads: [[{}], [{}]] }).fleet;
  /** Two problems: a duplicate id and a second coordinator. */
  const twoProblems = snap({ mongosyncID: "a", coordinatorID: "a" }, { mongosyncID: "a", coordinatorID: "z" });

  it("the runbook's clusters are checked; without `clusters:` they are not", () => {
    const { ctx } = context(one);
    expect(fleetIdentityProblems(ctx.run, snap(dir("cluster0", "cluster9")))).toEqual([
      'the fleet syncs cluster0: h:1 → cluster9: h:2: destination cluster "cluster9" is not one the runbook names ("cluster0", "cluster1")',
    ]);
    (ctx.run.runbook as { clusters?: unknown }).clusters = undefined;
    expect(fleetIdentityProblems(ctx.run, snap(dir("cluster0", "cluster9")))).toEqual([]);
  });

  it("a direction other than the run's is said with where the run's comes from; other problems are not", () => {
    const { ctx } = context(one);
    ctx.run.memory.identity.direction = { source: "cluster0", destination: "cluster1", from: "this run's start" };
    expect(
      fleetIdentityProblems(
        ctx.run,
        snap(
          { mongosyncID: "a", coordinatorID: "a", ...dir("cluster1", "cluster0") },
          { mongosyncID: "b", coordinatorID: "z", ...dir("cluster1", "cluster0") },
        ),
      ),
    ).toEqual([
      'sync1 reports coordinatorID "z"; 1 other instance reports "a": is it an instance of another fleet?',
      'expected source cluster "cluster0", but the fleet syncs cluster1: h:1 → cluster0: h:2 (the direction of this run\'s start)',
      'expected destination cluster "cluster1", but the fleet syncs cluster1: h:1 → cluster0: h:2 (the direction of this run\'s start)',
    ]);
  });

  it("with no direction known, the problems are left as they are (even one whose instance is named 'expected …')", () => {
    const { ctx } = context(one);
    const s = snap({ coordinatorID: "a" }, { coordinatorID: "z" });
    s.instances[1]!.ref = { ...s.instances[1]!.ref, name: "expected one" };
    expect(fleetIdentityProblems(ctx.run, s)).toEqual([
      'expected one reports coordinatorID "z"; 1 other instance reports "a": is it an instance of another fleet?',
    ]);
  });

  it("[reverse] during a reverse either way round of the pair passes; another pair is said with where the pair comes from", () => {
    const { ctx } = context(one);
    ctx.run.runbook.clusters = {
      cluster0: {},
      cluster1: {},
      cluster2: {},
    } as unknown as RunContext["runbook"]["clusters"];
    // the pair as the reverse put it (the new way first): not in sorted order
    ctx.run.memory.identity.direction = {
      source: "cluster1",
      destination: "cluster0",
      from: "the reverse of step 3",
      either: true,
    };
    expect(fleetIdentityProblems(ctx.run, snap(dir("cluster0", "cluster1"), dir("cluster0", "cluster1")))).toEqual([]);
    expect(fleetIdentityProblems(ctx.run, snap(dir("cluster1", "cluster0"), dir("cluster1", "cluster0")))).toEqual([]);
    expect(fleetIdentityProblems(ctx.run, snap(dir("cluster2", "cluster0"), { state: "IDLE" }))).toEqual([
      "sync0 syncs cluster2 → cluster0, neither way of cluster1 ↔ cluster0 (the reverse of step 3)",
    ]);
  });

  it("an instance that did not answer, or answers without an id or a direction, says nothing", () => {
    const { ctx, events } = context(one);
    observeIdentity(ctx.run, snap({ mongosyncID: "a", coordinatorID: "a" }, { mongosyncID: "b", coordinatorID: "a" }));
    // sync0 down, sync1 IDLE (ids null, spec progress rule 1)
    const s = snap("error", { state: "IDLE", mongosyncID: null, coordinatorID: null });
    observeIdentity(ctx.run, s);
    expect(fleetIdentityProblems(ctx.run, s)).toEqual([]);
    expect(() => checkIdentity(ctx, s)).not.toThrow();
    expect(ctx.run.memory.identity.ids).toEqual(
      new Map([
        [0, "a"],
        [1, "b"],
      ]),
    );
    expect(reasons(events, "identity")).toEqual(["2 instance(s) form one fleet"]);
  });

  it("an id is learned from the first read that has one, and never replaced", () => {
    const { ctx } = context(one);
    observeIdentity(ctx.run, snap({ state: "IDLE", mongosyncID: null }));
    expect(ctx.run.memory.identity.ids.size).toBe(0);
    observeIdentity(ctx.run, snap({ mongosyncID: "a" }));
    expect(() => checkIdentity(ctx, snap({ mongosyncID: "a" }))).not.toThrow();
    observeIdentity(ctx.run, snap({ mongosyncID: "b" }));
    expect(ctx.run.memory.identity.ids.get(0)).toBe("a");
    expect(fleetIdentityProblems(ctx.run, snap({ mongosyncID: "b" }))).toEqual([
      'sync0 now reports mongosyncID "b", and "a" earlier in this run: another process answers at its address',
    ]);
  });

  it("a directionMapping whose sides are not both strings tells no direction", () => {
    const { ctx } = context(one);
    const s: FleetSnapshot = {
      at: AT,
      instances: [
        {
          ref: refOf(0),
          progress: { state: "RUNNING", directionMapping: { Source: null, Destination: "cluster1: h:2" } },
        },
        {
          ref: refOf(1),
          progress: { state: "RUNNING", directionMapping: { Source: "cluster0: h:1", Destination: null } },
        },
      ] as unknown as FleetSnapshot["instances"],
    };
    expect(() => observeIdentity(ctx.run, s)).not.toThrow();
    expect(ctx.run.memory.identity.direction).toBeUndefined();
  });

  it("the direction is learned from the first instance that tells it, only from a read with no problem", () => {
    const a = context(one);
    observeIdentity(a.ctx.run, snap({ state: "IDLE" }, dir("cluster0", "cluster1")));
    expect(a.ctx.run.memory.identity.direction).toEqual({
      source: "cluster0",
      destination: "cluster1",
      from: "the fleet's first progress in this run",
    });
    // a read that tells no direction teaches none
    const b = context(one);
    observeIdentity(b.ctx.run, snap({ state: "IDLE" }, { state: "IDLE" }));
    expect(b.ctx.run.memory.identity.direction).toBeUndefined();
    // nor does one whose instances are not one fleet
    const c = context(one);
    observeIdentity(
      c.ctx.run,
      snap(
        { mongosyncID: "a", coordinatorID: "a", ...dir("cluster0", "cluster1") },
        { mongosyncID: "b", coordinatorID: "z", ...dir("cluster0", "cluster1") },
      ),
    );
    expect(c.ctx.run.memory.identity.direction).toBeUndefined();
  });

  it("a read that is not one fleet is said once with every problem, remembered, and the recovery said once", () => {
    const { ctx, events } = context(one);
    const problems = fleetIdentityProblems(ctx.run, twoProblems);
    expect(problems).toHaveLength(2);
    const text = problems.join("; ");
    observeIdentity(ctx.run, twoProblems);
    observeIdentity(ctx.run, twoProblems);
    expect(ctx.run.memory.identity.broken).toEqual({ reason: text, at: AT });
    const good = snap({ mongosyncID: "a", coordinatorID: "a" }, { coordinatorID: "a" });
    observeIdentity(ctx.run, good);
    observeIdentity(ctx.run, good);
    const said = decisions(events);
    expect(said).toEqual([
      {
        kind: "identity",
        ok: false,
        check: "fleet-identity",
        reason: `the instances are not one fleet: ${text}; no command will be sent to them in this run`,
      },
      {
        kind: "identity",
        ok: false,
        check: "fleet-identity",
        reason: `the instances report one fleet again, but they did not at 2026-01-01T03:00:00.000Z (${text}): no command will be sent to them in this run`,
      },
    ]);
    expect(ctx.run.memory.identity.broken).toEqual({ reason: text, at: AT });
  });

  it("nothing broken, nothing to say of a recovery", () => {
    const { ctx, events } = context(one);
    ctx.run.memory.identity.said = "a problem said by a read whose memory was not kept";
    observeIdentity(ctx.run, snap({ mongosyncID: "a" }));
    expect(decisions(events)).toEqual([]);
    expect(ctx.run.memory.identity.said).toBe("");
  });

  it("checkIdentity: one fleet passes, recorded with the command (no fsync of its own)", () => {
    const { ctx, events } = context(one);
    const opts = emitOptions(ctx);
    checkIdentity(ctx, snap({ mongosyncID: "a", coordinatorID: "a" }, { mongosyncID: "b", coordinatorID: "a" }));
    expect(decisions(events)).toEqual([
      {
        index: 0,
        id: "cmd",
        kind: "identity",
        ok: true,
        check: "fleet-identity",
        reason: "2 instance(s) form one fleet",
      },
    ]);
    expect(opts).toEqual([{ more: true }]);
  });

  it("checkIdentity: not one fleet is refused with every problem and what to check", () => {
    const { ctx, events } = context(one, { force: ["can-commit"] });
    const text = fleetIdentityProblems(ctx.run, twoProblems).join("; ");
    let err: unknown;
    try {
      checkIdentity(ctx, twoProblems);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StepFailure);
    expect((err as StepFailure).message).toBe(`refused (fleet-identity): the instances are not one fleet: ${text}`);
    expect((err as StepFailure).reason).toBe("interlock");
    // nothing of the cutover was sent: the list corrected, this run's command again (the run's end
    // names it, with its flags), and no --resume is offered with the hint (it refuses a changed list)
    expect((err as StepFailure).beforeResume).toBe(false);
    expect((err as StepFailure).hint).toBe(
      "Nothing of this cutover has been sent yet. Correct the `instances:` list (every instance of this sync, and only those) or what answers at each address, then give this run's command again, as the run's end names it (a `--resume` refuses a changed list).",
    );
    expect(decisions(events)).toEqual([
      { index: 0, id: "cmd", kind: "identity", ok: false, check: "fleet-identity", reason: text },
    ]);
  });

  /** The refusal checkIdentity throws for `twoProblems`, in a run set up by `set`. */
  const refusedIn = (set: (run: RunContext) => void): StepFailure => {
    const { ctx } = context(one);
    set(ctx.run);
    try {
      checkIdentity(ctx, twoProblems);
    } catch (e) {
      return e as StepFailure;
    }
    throw new Error("checkIdentity let a fleet that is not one through");
  };

  it("checkIdentity: once this run acted, the list stays and `--resume` (with the cutover's values) goes on", () => {
    const err = refusedIn((run) =>
      Object.assign(run, {
        target: "rb.yaml --var env=a",
        memory: { ...run.memory, acted: true, actedNow: true, sentToFleet: true },
      }),
    );
    expect(err.hint).toBe(
      "The refused command was not sent. Do not edit the `instances:` list mid-cutover: `--resume` refuses a changed list. Put right what answers at each address (the instance of this sync that answered there before), then `syncbook run rb.yaml --var env=a --resume`: it reads the fleet again before it sends anything.",
    );
    // status and the watch page say it with the --resume they offer (`StepFailure.beforeResume`)
    expect(err.beforeResume).toBe(true);
    expect(err.resumeFlags).toBeUndefined();
    // its --resume goes on from this run: no command of its own again
    const told = refusedIn((run) =>
      Object.assign(run, { again: ["--from", "cmd"], memory: { ...run.memory, acted: true, actedNow: true } }),
    );
    expect(told.againArgs).toBeUndefined();
  });

  // a review: a --from run continuing the cutover that sent nothing was told `--resume`, which
  // passes its journal over for the last run that acted (that one's place, or nothing to resume
  // after a cutover that ended ok); a --new-cutover run the plain run, refused by the unfinished one
  it("checkIdentity: the cutover acted before, this run not: the list stays, and this run's command again", () => {
    const err = refusedIn((run) =>
      Object.assign(run, {
        target: "rb.yaml --var env=a",
        memory: { ...run.memory, acted: true, actedNow: false, sentToFleet: true },
      }),
    );
    expect(err.hint).toBe(
      "This run sent nothing. Do not edit the `instances:` list mid-cutover: `--resume` refuses a changed list. Put right what answers at each address (the instance of this sync that answered there before), then give this run's command again, as the run's end names it.",
    );
    expect(err.hint).not.toContain("syncbook run");
    expect(err.beforeResume).toBe(false);
    // the command the run's end names, journaled for status and the watch page (`againArgs`)
    expect(err.againArgs).toBeUndefined();
    for (const acted of [false, true]) {
      const told = refusedIn((run) =>
        Object.assign(run, { again: ["--from", "cmd"], memory: { ...run.memory, acted, actedNow: false } }),
      );
      expect(told.againArgs).toEqual(["--from", "cmd"]);
    }
  });

  // a review: a cutover whose hooks alone ran (one before its start) was told to keep the list and
  // put right what answers at each address, where the list itself may be wrong and only a new
  // cutover takes a corrected one (a plain run and --resume are refused)
  it("checkIdentity: only hooks ran: the corrected list as a new cutover (every --var kept), else this run's way on", () => {
    const hooksOnly = (actedNow: boolean) =>
      refusedIn((run) =>
        Object.assign(run, {
          target: "rb.yaml --var env=a",
          targetKept: "rb.yaml --var env=a --var pw=***",
          keptNote: " (set --var pw again: it holds a secret)",
          memory: { ...run.memory, acted: true, actedNow, sentToFleet: false },
        }),
      );
    const head =
      "Nothing has been sent to the fleet yet: only the runbook's hooks ran. Correct the `instances:` list (every instance of this sync, and only those) or what answers at each address. With the list corrected, `syncbook run rb.yaml --var env=a --var pw=*** --new-cutover` (set --var pw again: it holds a secret) starts over from the first step, its hooks again (a plain run is refused by this unfinished cutover, a `--resume` by the changed list); with it unchanged, ";
    const now = hooksOnly(true);
    expect(now.hint).toBe(`${head}\`syncbook run rb.yaml --var env=a --resume\`.`);
    expect(now.beforeResume).toBe(true);
    const before = hooksOnly(false);
    expect(before.hint).toBe(`${head}give this run's command again, as the run's end names it.`);
    expect(before.beforeResume).toBe(false);
    // nothing acted at all: the first words, the list may be corrected and the run given again
    const none = refusedIn((run) =>
      Object.assign(run, { memory: { ...run.memory, acted: false, sentToFleet: false } }),
    );
    expect(none.hint).toMatch(/^Nothing of this cutover has been sent yet\./);
  });

  it("checkIdentity: a rehearsal names no syncbook run, acted or not", () => {
    for (const acted of [false, true]) {
      const err = refusedIn((run) =>
        Object.assign(run, { mode: "rehearse", again: ["--resume"], memory: { ...run.memory, acted } }),
      );
      expect(err.hint).toBe(
        "Check the `instances:` list (every instance of this sync, and only those) and the rehearsal's `--fault`s, then rehearse again.",
      );
      expect(err.beforeResume).toBe(false);
      expect(err.againArgs).toBeUndefined();
    }
  });

  it("checkIdentity: --force=fleet-identity lets it through, recorded as overridden", () => {
    const { ctx, events } = context(one, { force: ["fleet-identity"] });
    const opts = emitOptions(ctx);
    const text = fleetIdentityProblems(ctx.run, twoProblems).join("; ");
    checkIdentity(ctx, twoProblems);
    expect(decisions(events)).toEqual([
      {
        index: 0,
        id: "cmd",
        kind: "identity",
        ok: true,
        check: "fleet-identity",
        reason: `${text} — overridden by --force=fleet-identity`,
      },
    ]);
    expect(opts).toEqual([{ more: true }]);
  });

  it("checkIdentity: one fleet now but not earlier in the run is refused, saying when and why", () => {
    const { ctx } = context(one);
    ctx.run.memory.identity.broken = { reason: "two coordinators", at: AT };
    expect(() => checkIdentity(ctx, snap({ mongosyncID: "a" }))).toThrow(
      "refused (fleet-identity): the instances are not one fleet: they report one fleet now, but did not at 2026-01-01T03:00:00.000Z: two coordinators",
    );
  });
});

// ---- sendCommand ----------------------------------------------------------------------------

describe("sendCommand: [multi] [item 1] [block] every branch and what it says", () => {
  it("a targeted command goes to the instances named only", async () => {
    const f = scripted({ sends: [{}], reads: [[{}], [{}], [{}]] });
    const { ctx } = context(f.fleet);
    await sendCommand(ctx, spec("pause", { only: [1, 2] }));
    expect(f.sent).toEqual([[], [0], [0]]);
  });

  it("a spec without onAccepted is fine, whether the command succeeds or fails", async () => {
    const ok = scripted({ sends: [{}], reads: [[{}]] });
    await expect(sendCommand(context(ok.fleet).ctx, spec("pause"))).resolves.toEqual({ skewMs: 0, resent: [] });
    const no = scripted({ sends: [{ 0: "refused" }], reads: [[{}]] });
    await expect(sendCommand(context(no.fleet).ctx, spec("pause"))).rejects.toThrow(StepFailure);
  });

  it("the fan-out skew reported is the largest of every send", async () => {
    const f = scripted({ sends: [{ 1: "not-sent" }, {}], reads: [[{}], [{ state: "IDLE" }]] });
    const skews = [7, 3];
    const broadcast = f.fleet.broadcast.bind(f.fleet);
    f.fleet.broadcast = async (...a) => ({ ...(await broadcast(...a)), skewMs: skews.shift()! });
    const { ctx } = context(f.fleet);
    await expect(sendCommand(ctx, spec("start"))).resolves.toEqual({ skewMs: 7, resent: ["sync1"] });
  });

  it("a refusal is remembered for commit's no-errors, by instance, command and message", async () => {
    const f = scripted({ sends: [{ 1: "refused" }], reads: [[{}], [{}]] });
    const { ctx } = context(f.fleet);
    await failure(sendCommand(ctx, spec("pause")));
    expect(ctx.run.memory.serviceErrors).toEqual([{ instance: "sync1", op: "pause", error: refusal(1, "pause") }]);
  });

  it("refused by some, accepted by others: the fleet is split, said with every refusal", async () => {
    const f = scripted({ sends: [{ 0: "refused", 2: "refused" }], reads: [[{}], [{}], [{}]] });
    const { ctx } = context(f.fleet);
    const err = await failure(sendCommand(ctx, spec("pause")));
    expect(err.message).toBe(
      `pause refused by ${refusals([0, 2], "pause")} (accepted by 1 other instance(s): the fleet is now split)`,
    );
    expect(err.reason).toBe("failed");
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toBe(
      "Identical commands must reach every instance: look at the refusing instances' errors before doing anything else.",
    );
  });

  it("refused by every instance: nothing took effect", async () => {
    const f = scripted({ sends: [{ 0: "refused", 1: "refused" }], reads: [[{}], [{}]] });
    const { ctx } = context(f.fleet);
    const err = await failure(sendCommand(ctx, spec("pause")));
    expect(err.message).toBe(
      `pause refused by ${refusals([0, 1], "pause")} (no instance accepted it: this request took no effect)`,
    );
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toBe("Read the error above; the command did not take effect.");
  });

  it("[block] a blocking command refused by one instance while another has not answered: the split is news at the refusal, said once, and judged without a settle window", async () => {
    const f = scripted({
      sends: [{ 0: "refused", 1: "timeout", 2: "refused", 3: "ok" }],
      reads: [[{}], [{}], [{}], [{}]],
    });
    const { ctx, events } = context(f.fleet);
    const t0 = Date.now();
    const err = await failure(sendCommand(ctx, spec("commit")));
    // a settle window would be twice the request time limit after a timeout
    expect(Date.now() - t0).toBeLessThan(2 * REQUEST_TIMEOUT);
    expect(err.message).toMatch(/^commit refused by .*; sync1 gave no usable answer .* which proves nothing/);
    const d = decisions(events);
    expect(d[0]).toMatchObject({ kind: "reconcile", ok: false });
    expect(d[0]!.reason).toBe(
      `sync0 refused commit (${refusal(0, "commit")}) while 3 other instance(s) have not answered: commit blocks until every instance has it, so those that took it hold it: the fleet is split; nothing more is sent, and the step ends once their answers are in (at most 150ms)`,
    );
    expect(d.filter((x) => String(x.reason).includes("the fleet is split"))).toHaveLength(1);
    expect(d[1]!.reason).toMatch(
      /^commit: no answer from sync1 \(.*\); reading progress to learn whether it took effect/,
    );
  });

  it("[block] the last answer refusing, or a command that does not block: no news (nothing is left waiting in its round), and a non-blocking one keeps its settle window", async () => {
    const last = scripted({ sends: [{ 1: "refused" }], reads: [[{}], [{}]] });
    const a = context(last.fleet);
    await failure(sendCommand(a.ctx, spec("commit")));
    expect(decisions(a.events).filter((x) => String(x.reason).includes("split"))).toEqual([]);
    const ok = scripted({ sends: [{}], reads: [[{}], [{}]] });
    const b = context(ok.fleet);
    await sendCommand(b.ctx, spec("commit"));
    expect(decisions(b.events)).toEqual([]);
    const pause = scripted({ sends: [{ 0: "refused", 1: "timeout" }], reads: [[{}], [{ state: "PAUSED" }]] });
    const c = context(pause.fleet);
    await failure(sendCommand(c.ctx, spec("pause")));
    const dc = decisions(c.events);
    expect(dc.filter((x) => String(x.reason).includes("split"))).toEqual([]);
    expect(dc[0]!.reason).toMatch(/^pause: no answer from sync1 .*; reading progress for up to 300ms/);
  });

  it("a targeted command refused by every instance it was sent to: not 'nothing took effect' (the others were never sent it here)", async () => {
    const f = scripted({ sends: [{ 1: "refused" }], reads: [[{}], [{}], [{}]] });
    const { ctx } = context(f.fleet);
    const err = await failure(sendCommand(ctx, spec("commit", { only: [1] })));
    expect(err.message).toBe(
      `commit refused by ${refusal(1, "commit")} (no instance it was sent to accepted it; it was sent to 1 of 3 instances only)`,
    );
  });

  it("what a reconcile round says: the instances without an answer, and how long progress is read", async () => {
    const { ctx, events } = oneReadWindows({
      sends: [{ 0: "reset", 1: "reset" }],
      reads: [[{ state: "RUNNING" }], [{ state: "RUNNING" }]],
    });
    await sendCommand(ctx, spec("start"));
    expect(decisions(events)[0]).toEqual({
      index: 0,
      id: "cmd",
      kind: "reconcile",
      ok: true,
      reason: `start: no answer from sync0 (${failed(0, "start", "reset")}), sync1 (${failed(1, "start", "reset")}); reading progress for up to 1ms to learn whether it took effect (never resent blindly)`,
    });
  });

  it("a request that certainly never left: no settle window, said without one", async () => {
    const { ctx, events } = oneReadWindows({ sends: [{ 1: "not-sent" }], reads: [[{}], [{ state: "RUNNING" }]] });
    await sendCommand(ctx, spec("start"));
    expect(reasons(events, "reconcile")[0]).toBe(
      `start: no answer from sync1 (${failed(1, "start", "not-sent")}); reading progress to learn whether it took effect (never resent blindly)`,
    );
  });

  it("the settle window: the request's time limit when any request may have reached the service, twice that when any timed out", async () => {
    const mixed = oneReadWindows({
      sends: [{ 0: "not-sent", 1: "reset" }],
      reads: [[{ state: "RUNNING" }], [{ state: "RUNNING" }]],
    });
    await sendCommand(mixed.ctx, spec("start"));
    expect(reasons(mixed.events, "reconcile")[0]).toMatch(/reading progress for up to 1ms to learn/);
    const timedOut = oneReadWindows({
      sends: [{ 0: "timeout", 1: "reset" }],
      reads: [[{ state: "RUNNING" }], [{ state: "RUNNING" }]],
    });
    await sendCommand(timedOut.ctx, spec("start"));
    expect(reasons(timedOut.events, "reconcile")[0]).toMatch(/reading progress for up to 2ms to learn/);
  });

  it("[item 1] a repeat refused after a timeout is no longer in flight: the next window is the time limit, not twice it", async () => {
    const f = scripted({ sends: [{ 1: "timeout" }, { 1: "refused" }], reads: [[{}], [{ state: "RUNNING" }]] });
    const { ctx, events } = context(f.fleet);
    ctx.run.defaults.requestTimeoutMs = 20;
    const err = await failure(sendCommand(ctx, spec("pause")));
    expect(err.message).toMatch(/^sync1 refused a repeat \(InvalidStateTransition: no\) yet still shows state RUNNING/);
    const r = reasons(events, "reconcile");
    expect(r).toHaveLength(2);
    expect(r[0]).toMatch(/for up to 40ms/);
    expect(r[1]).toBe(
      `pause: no answer from sync1 (${failed(1, "pause", "timeout")}); reading progress for up to 20ms to learn whether it took effect (never resent blindly)`,
    );
  });

  it("[item 1] a request that may have reached the service stays so after a repeat that never left: a window again, never 'never left'", async () => {
    const { f, ctx, events } = oneReadWindows({
      sends: [{ 1: "reset" }, { 1: "not-sent" }, {}],
      reads: [[{}], [{ state: "RUNNING" }]],
    });
    const r = await sendCommand(ctx, spec("pause"));
    expect(r.resent).toEqual(["sync1", "sync1"]);
    expect(f.sent).toEqual([[0], [0, 1, 2]]);
    expect(reasons(events, "reconcile")[1]).toMatch(/reading progress for up to 1ms to learn/);
    expect(reasons(events, "retry")).toEqual([
      "pause had not taken effect on sync1 (progress still shows RUNNING after 1ms): sending it again to that instance only",
      "pause had not taken effect on sync1 (progress still shows RUNNING after 1ms): sending it again to that instance only",
    ]);
  });

  it("[item 1] a refused repeat, then the effect shows: recorded as taken, with the service's description of the refusal", async () => {
    const { f, ctx, events } = oneReadWindows({
      sends: [{ 1: "reset" }, { 1: "refused" }],
      reads: [[{}], [{ state: "RUNNING" }, { state: "PAUSED" }]],
    });
    await sendCommand(ctx, spec("pause"));
    expect(f.sent).toEqual([[0], [0, 1]]);
    expect(decisions(events).filter((d) => /took effect on/.test(d.reason as string))).toEqual([
      {
        index: 0,
        id: "cmd",
        kind: "reconcile",
        ok: true,
        reason: "pause took effect on sync1 (state PAUSED; the repeat was refused: no): not sent again",
      },
    ]);
  });

  it("[item 1] a refused repeat without a description: the service's error name", async () => {
    const { f, ctx, events } = oneReadWindows({
      sends: [{ 1: "reset" }, { 1: "refused" }],
      reads: [[{}], [{ state: "RUNNING" }, { state: "PAUSED" }]],
    });
    const broadcast = f.fleet.broadcast.bind(f.fleet);
    f.fleet.broadcast = async (...a) => {
      const r = await broadcast(...a);
      return {
        ...r,
        results: r.results.map((x) =>
          !x.ok && x.error instanceof ServiceError
            ? { ...x, error: new ServiceError(x.error.url, "start", "SyncAlreadyStarted", "", 400) }
            : x,
        ),
      };
    };
    await sendCommand(ctx, spec("pause"));
    expect(reasons(events, "reconcile")).toContain(
      "pause took effect on sync1 (state PAUSED; the repeat was refused: SyncAlreadyStarted): not sent again",
    );
  });

  it("[item 1] a refused repeat, then a state that tells nothing: cannot tell (not 'refused a repeat … still shows')", async () => {
    const { ctx } = oneReadWindows({
      sends: [{ 1: "reset" }, { 1: "refused" }],
      reads: [[{}], [{ state: "RUNNING" }, { state: "INITIALIZING" }]],
    });
    const err = await failure(sendCommand(ctx, spec("pause")));
    expect(err.message).toBe(
      "cannot tell whether pause took effect on sync1 (state INITIALIZING); nothing more was sent (pause accepted by 1 instance(s), sent again to sync1)",
    );
    expect(err.reason).toBe("unsafe");
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toBe(UNSAFE_HINT);
  });

  it("an instance progress says nothing about: cannot tell, state unknown", async () => {
    const f = scripted({ sends: [{ 1: "reset" }], reads: [[{}], [{}]] });
    const progress = f.fleet.progress.bind(f.fleet);
    f.fleet.progress = async (s) => {
      const snap = await progress(s);
      return { ...snap, instances: snap.instances.filter((i) => i.ref.index !== 1) };
    };
    const { ctx } = context(f.fleet);
    ctx.run.defaults.requestTimeoutMs = 1;
    const err = await failure(sendCommand(ctx, spec("start")));
    expect(err.message).toBe(
      "cannot tell whether start took effect on sync1 (state unknown); nothing was resent (start accepted by 1 instance(s))",
    );
  });

  it("[block] a blocking command in doubt with nothing to resend: stops at once (no identity check, no resend round)", async () => {
    const { f, ctx, events } = oneReadWindows({ sends: [{ 1: "reset" }], reads: [[{}], [{}]] });
    let sends = 0;
    const broadcast = f.fleet.broadcast.bind(f.fleet);
    f.fleet.broadcast = (...a) => {
      sends++;
      return broadcast(...a);
    };
    const err = await failure(sendCommand(ctx, spec("commit")));
    expect(err.message).toBe(
      `sync1 gave no usable answer (${failed(1, "commit", "reset")}) and shows state RUNNING, which proves nothing: commit blocks until every instance has received it, so it may be holding one, which takes effect as soon as the last instance has it; nothing was resent (commit accepted by 1 instance(s))`,
    );
    expect(sends).toBe(1);
    expect(decisions(events).map((d) => d.kind)).toEqual(["reconcile"]);
  });

  it("[item 1] a command that does not block, with one instance to resend and one in doubt: stops, and says no resend happened", async () => {
    const { f, ctx } = oneReadWindows({
      sends: [{ 0: "reset", 1: "not-sent" }],
      reads: [[{ state: "COMMITTING" }], [{ state: "PAUSED" }]],
    });
    const err = await failure(sendCommand(ctx, spec("resume")));
    expect(err.message).toBe(
      "cannot tell whether resume took effect on sync0 (state COMMITTING); nothing was resent (resume answered by no instance)",
    );
    expect(f.sent).toEqual([[0], [0]]);
  });

  it("[item 1] a refusal and a doubt: both said, the refusals first", async () => {
    const { ctx } = oneReadWindows({
      sends: [{ 0: "refused", 1: "refused", 2: "reset" }],
      reads: [[{}], [{}], [{ state: "COMMITTING" }]],
    });
    const err = await failure(sendCommand(ctx, spec("pause")));
    expect(err.message).toBe(
      `pause refused by ${refusals([0, 1], "pause")}; cannot tell whether pause took effect on sync2 (state COMMITTING); nothing was resent (pause answered by no instance)`,
    );
    expect(err.reason).toBe("unsafe");
  });

  it("[design] at most three resends: what was sent, to whom, and that nothing more was", async () => {
    const { ctx } = oneReadWindows({
      sends: [{ 1: "not-sent" }, { 1: "not-sent" }, { 1: "not-sent" }, { 1: "not-sent" }],
      reads: [[{}], [{ state: "IDLE" }]],
    });
    const err = await failure(sendCommand(ctx, spec("start")));
    expect(err.message).toBe(
      "still no proof that start took effect on sync1 after 3 resends; nothing more was sent (start accepted by 1 instance(s), sent again to sync1, sync1, sync1)",
    );
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toBe(UNSAFE_HINT);
  });

  it("[design] three resends to two instances: both named in what is said", async () => {
    const never = { 0: "not-sent", 1: "not-sent" } as const;
    const { f, ctx } = oneReadWindows({
      sends: [never, never, never, never],
      reads: [[{ state: "IDLE" }], [{ state: "IDLE" }]],
    });
    const err = await failure(sendCommand(ctx, spec("start")));
    expect(err.message).toBe(
      "still no proof that start took effect on sync0, sync1 after 3 resends; nothing more was sent (start answered by no instance, sent again to sync0, sync1, sync0, sync1, sync0, sync1)",
    );
    expect(f.sent).toEqual([
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
  });

  it("the resend's decision: which instances, why, and to whom", async () => {
    const a = oneReadWindows({ sends: [{ 1: "not-sent" }], reads: [[{}], [{ state: "RUNNING" }]] });
    await sendCommand(a.ctx, spec("pause"));
    expect(decisions(a.events).filter((d) => d.kind === "retry")).toEqual([
      {
        index: 0,
        id: "cmd",
        kind: "retry",
        ok: true,
        reason: "pause had not taken effect on sync1 (the request never left): sending it again to that instance only",
      },
    ]);
    // one may have reached the service: the state seen after the window is the reason
    const b = oneReadWindows({
      sends: [{ 0: "reset", 1: "not-sent" }],
      reads: [[{ state: "RUNNING" }], [{ state: "RUNNING" }]],
    });
    await sendCommand(b.ctx, spec("pause"));
    expect(reasons(b.events, "retry")).toEqual([
      "pause had not taken effect on sync0, sync1 (progress still shows RUNNING after 1ms): sending it again to those instances only",
    ]);
  });

  it("[block] a blocking command goes again to the instance it never reached while another may hold it, saying so", async () => {
    const held = ({ sends }: { sends: number[] }) => ({ state: sends[1]! >= 2 ? "COMMITTING" : "RUNNING" }) as const;
    const { f, ctx, events } = oneReadWindows({ sends: [{ 0: "timeout", 1: "not-sent" }, {}], reads: [held, held] });
    const r = await sendCommand(ctx, spec("commit"));
    expect(r.resent).toEqual(["sync1"]);
    expect(f.sent).toEqual([[0], [0, 1]]);
    expect(reasons(events, "retry")).toEqual([
      "commit had not taken effect on sync1 (the request never left): sending it again to that instance only; still unsure of 1 other(s)",
    ]);
  });

  it("settle: an effect seen on the first read ends the window at once", async () => {
    const f = scripted({ sends: [{ 1: "reset" }], reads: [[{}], [{ state: "RUNNING" }]] });
    const { ctx } = context(f.fleet);
    await sendCommand(ctx, spec("start"));
    expect(f.reads).toBe(1);
  });

  it("[progress] settle, no window: the read retries every failing instance before judging", async () => {
    const f = scripted({ sends: [{ 1: "not-sent" }], reads: [["error", {}], [{ state: "IDLE" }]] });
    const { ctx } = context(f.fleet);
    await sendCommand(ctx, spec("start"));
    expect(f.reads).toBe(2);
    expect(f.sent).toEqual([[0], [0, 1]]);
  });

  it("settle: progress is read every quarter of the window (at most the step's poll interval)", async () => {
    const f = scripted({ sends: [{ 1: "reset" }, {}], reads: [[{}], [{ state: "RUNNING" }]] });
    const { ctx } = context(f.fleet);
    ctx.run.defaults.requestTimeoutMs = 600;
    ctx.pollMs = 600;
    await sendCommand(ctx, spec("pause"));
    // reads at 0, 150, 300, 450, 600 ms (every 600 ms would be 2, every 20 ms 31); wide bounds: a
    // loaded machine may stall a read by a few hundred ms
    expect(f.reads).toBeGreaterThanOrEqual(3);
    expect(f.reads).toBeLessThanOrEqual(10);
  });

  it("settle: no read after the window when every instance in doubt was seen", async () => {
    // the window's one read shows RUNNING; a read after it would show PAUSED and skip the resend
    const { f, ctx } = oneReadWindows({
      sends: [{ 1: "reset" }, {}],
      reads: [[{}], [{ state: "RUNNING" }, { state: "PAUSED" }]],
    });
    await sendCommand(ctx, spec("pause"));
    expect(f.sent).toEqual([[0], [0, 1]]);
    expect(f.reads).toBe(1);
  });

  it("[progress] settle: an instance in doubt whose progress failed through the window is read again (with retries) before judging", async () => {
    const { f, ctx } = oneReadWindows({
      sends: [{ 0: "reset", 1: "reset" }, {}],
      reads: [[{ state: "RUNNING" }], ["error", { state: "RUNNING" }]],
    });
    await sendCommand(ctx, spec("pause"));
    expect(f.reads).toBe(2);
    expect(f.sent).toEqual([
      [0, 1],
      [0, 1],
    ]);
  });

  it("the step's time limit before any progress was read: says what was sent, refused, and not seen", async () => {
    const ac = new AbortController();
    const { ctx } = oneReadWindows(
      { sends: [{ 0: "refused", 1: "refused", 2: "reset", 3: "timeout" }], reads: [[{}], [{}], [{}], [{}], [{}]] },
      { signal: ac.signal },
    );
    const err = await failure(sendCommand(ctx, spec("commit", { beforeSend: () => ac.abort(new StepTimeout(1000)) })));
    expect(err.message).toBe(
      `commit was sent (accepted by 1 instance(s); refused by ${refusals([0, 1], "commit")}); the step's time limit (1s) passed while reading progress to learn whether it took effect on sync2 (${failed(2, "commit", "reset")}; no progress read), sync3 (${failed(3, "commit", "timeout")}; no progress read); nothing more was sent`,
    );
    expect(err.reason).toBe("unsafe");
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toBe(
      `${UNSAFE_HINT} A command step's \`timeout\` should leave room for twice the request timeout.`,
    );
  });

  it("the step's time limit with no instance left in doubt (the journal failed meanwhile): still says what was sent", async () => {
    const ac = new AbortController();
    const { ctx } = oneReadWindows({ sends: [{ 1: "reset" }], reads: [[{}], [{}]] }, { signal: ac.signal });
    const emit = ctx.run.emit;
    ctx.run.emit = ((type: never, payload: { reason?: string }, options?: never) => {
      if (/took effect on/.test(payload.reason ?? "")) {
        ac.abort(new StepTimeout(1000));
        throw new Error("the journal cannot record");
      }
      return emit(type, payload as never, options);
    }) as RunContext["emit"];
    const err = await failure(sendCommand(ctx, spec("start")));
    expect(err.message).toBe(
      "start was sent (accepted by 2 instance(s)); the step's time limit (1s) passed while reading progress to learn whether it took effect on the other instances; nothing more was sent",
    );
  });

  it("a step failure decided as the time limit passes is passed on as decided", async () => {
    const ac = new AbortController();
    const { ctx } = oneReadWindows({ sends: [{ 1: "reset" }], reads: [[{}], [{}]] }, { signal: ac.signal });
    const err = await failure(
      sendCommand(
        ctx,
        spec("commit", {
          tookEffect: (p) => {
            ac.abort(new StepTimeout(1000));
            return commandTookEffect("commit", p.state);
          },
        }),
      ),
    );
    expect(err.message).toMatch(/^sync1 gave no usable answer/);
  });
});

describe("a refusal from many instances: every one named when the command split the fleet (the --only list), else the first three", () => {
  const many = (is: number[], op: string, every: boolean): string =>
    `${is.length} instances (${(every ? is : is.slice(0, 3)).map(url).join(", ")}${every || is.length <= 3 ? "" : ` and ${is.length - 3} more`}): ${op} refused: InvalidStateTransition: no`;
  const refused4 = { 0: "refused", 1: "refused", 2: "refused", 3: "refused" } as const;

  it("refused by four, accepted by one: all four named; refused by all four: three and one more", async () => {
    const split = scripted({ sends: [refused4], reads: [[{}], [{}], [{}], [{}], [{}]] });
    const a = await failure(sendCommand(context(split.fleet).ctx, spec("pause")));
    expect(a.message).toBe(
      `pause refused by ${many([0, 1, 2, 3], "pause", true)} (accepted by 1 other instance(s): the fleet is now split)`,
    );
    const none = scripted({ sends: [refused4], reads: [[{}], [{}], [{}], [{}]] });
    const b = await failure(sendCommand(context(none.fleet).ctx, spec("pause")));
    expect(b.message).toBe(
      `pause refused by ${many([0, 1, 2, 3], "pause", false)} (no instance accepted it: this request took no effect)`,
    );
  });

  it("refusals and a doubt: the same rule", async () => {
    const split = oneReadWindows({
      sends: [{ ...refused4, 4: "reset" }],
      reads: [[{}], [{}], [{}], [{}], [{ state: "COMMITTING" }], [{}]],
    });
    const a = await failure(sendCommand(split.ctx, spec("pause")));
    expect(a.message.startsWith(`pause refused by ${many([0, 1, 2, 3], "pause", true)}; cannot tell`)).toBe(true);
    const none = oneReadWindows({
      sends: [{ ...refused4, 4: "reset" }],
      reads: [[{}], [{}], [{}], [{}], [{ state: "COMMITTING" }]],
    });
    const b = await failure(sendCommand(none.ctx, spec("pause")));
    expect(b.message.startsWith(`pause refused by ${many([0, 1, 2, 3], "pause", false)}; cannot tell`)).toBe(true);
  });

  it("the step's time limit: the same rule", async () => {
    const cut = async (n: number): Promise<string> => {
      const ac = new AbortController();
      const { ctx } = oneReadWindows(
        { sends: [{ ...refused4, 4: "reset" }], reads: Array.from({ length: n }, () => [{}]) },
        { signal: ac.signal },
      );
      const err = await failure(
        sendCommand(ctx, spec("commit", { beforeSend: () => ac.abort(new StepTimeout(1000)) })),
      );
      return err.message;
    };
    expect(await cut(6)).toContain(`(accepted by 1 instance(s); refused by ${many([0, 1, 2, 3], "commit", true)})`);
    expect(await cut(5)).toContain(`(accepted by 0 instance(s); refused by ${many([0, 1, 2, 3], "commit", false)})`);
  });
});
