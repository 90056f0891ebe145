/**
 * The interlocks of the command steps (src/steps/{start,commit,lifecycle}.ts `run`, and
 * kit/targets.ts for `--only` / a resumed completion), pinned against a scripted fleet
 * (test/support/fleet-fake.ts): what each refuses, with which reason, what it lets through, and
 * that a refusal sends nothing. The end-to-end versions (test/run/interlocks.e2e.test.ts) drive the
 * runner against the simulator; these are the fast ones mutation testing runs.
 *
 * - [design] DESIGN.md: "`commit` is refused, with the reason, unless every instance is RUNNING
 *   with canCommit true, a `stopWrites` step succeeded in this run (or `writesStoppedExternally`)
 *   and no instance answered with an error; `--force=<check>` names a check to skip."
 * - [spec-start] spec: "/start … The sync must be in the IDLE state."
 * - [facts-init] service facts: INITIALIZING (1.20+) is "not ready for /start" and passes by itself.
 * - [spec-states] spec: pause needs RUNNING, resume needs PAUSED, reverse needs COMMITTED.
 * - [facts-block] service facts: "`commit` and `reverse` block until they have been called on
 *   every instance".
 */
import { describe, expect, it, vi } from "vitest";
import type { RunEvent } from "../../src/events.js";
import type { Fleet } from "../../src/fleet/index.js";
import type { Step } from "../../src/runbook/types.js";
import type { StepContext } from "../../src/steps/index.js";
import { start } from "../../src/steps/start.js";
import { commit } from "../../src/steps/commit.js";
import { lifecycle } from "../../src/steps/lifecycle.js";
import { identityWayOn } from "../../src/steps/kit/fleet-ops.js";
import { context, failure, scripted, type Read, type Script } from "../support/fleet-fake.js";

type Decision = Extract<RunEvent, { type: "decision" }>;

interface Setup {
  force?: string[];
  writesStopped?: boolean;
  external?: boolean;
  mode?: "run" | "rehearse" | "resume";
  errors?: { op: string; instance: string; error: string }[];
  targets?: StepContext["targets"];
  yes?: boolean;
  prompt?: (q: string) => boolean;
  /** A journal of this cutover acted (`RunMemory.acted`): an earlier run's, or this run's own. */
  acted?: boolean;
}

/** A step context over a scripted fleet, with the run's memory and options as the test sets them. */
function setup(script: Script, o: Setup = {}) {
  const f = scripted(script);
  const bodies: unknown[] = [];
  const broadcast = f.fleet.broadcast;
  const fleet: Fleet = {
    ...f.fleet,
    broadcast: (op, body, signal, opts) => {
      bodies.push({ op, body, only: opts?.only });
      return broadcast(op, body, signal, opts);
    },
  };
  const { ctx, events } = context(fleet, { force: o.force ?? [] });
  const undo = { disarm: vi.fn(), rearm: vi.fn() };
  const questions: string[] = [];
  Object.assign(ctx.run, {
    mode: o.mode ?? "run",
    loaded: { file: "cutover.yaml" },
    // the runbook as a way on names it, with the cutover's --var values (RunContext.target)
    target: "cutover.yaml --var switch=http://live",
    plugins: { undo },
    yes: o.yes ?? false,
    prompt: o.prompt && {
      confirm: (q: string) => {
        questions.push(q);
        return Promise.resolve(o.prompt!(q));
      },
    },
  });
  Object.assign(ctx.run.runbook, { writesStoppedExternally: o.external });
  ctx.run.memory.writesStopped = o.writesStopped ?? true;
  ctx.run.memory.acted = o.acted ?? false;
  ctx.run.memory.serviceErrors.push(...((o.errors ?? []) as typeof ctx.run.memory.serviceErrors));
  Object.assign(ctx, { targets: o.targets });
  const decisions = () => events.filter((e): e is Decision => e.type === "decision");
  const check = (name: string) => decisions().filter((d) => d.check === name);
  return { f, ctx, events, undo, bodies, decisions, check, questions };
}

const each = (...reads: Read[]): Read[][] => reads.map((r) => [r]);
const body = { source: "cluster0", destination: "cluster1" };

describe("start", () => {
  it("[spec-start] every instance IDLE: the identical body to each once, and the direction remembered", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "IDLE" }, { state: "IDLE" }) });
    await start.run(s.ctx, body);
    expect(s.f.sent).toEqual([[0], [0]]);
    expect(s.bodies).toEqual([{ op: "start", body, only: undefined }]);
    expect(s.check("fleet-idle")).toMatchObject([{ ok: true, kind: "interlock", reason: "every instance is IDLE" }]);
    expect(s.ctx.run.memory.identity.direction).toEqual({
      source: "cluster0",
      destination: "cluster1",
      from: "the start step cmd",
    });
  });

  it("[spec-start] one instance not IDLE, one unreachable: refused, both named, nothing sent", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "IDLE" }, { state: "RUNNING" }, "error") });
    const err = await failure(start.run(s.ctx, body));
    expect(err.reason).toBe("interlock");
    expect(err.message).toBe(
      "refused (fleet-idle): start is allowed only in IDLE; sync1 is RUNNING, sync2 is unreachable (http://127.0.0.1:27184: progress failed: refused)",
    );
    expect(err.beforeResume).toBe(false);
    expect(err.hint).toBe("A sync already runs, or an instance is down.");
    expect(s.f.sent).toEqual([[], [], []]);
    expect(s.ctx.run.memory.identity.direction).toBeUndefined();
  });

  // a review: a first run's refusal offered `--resume` "adopts a run this tool started", and that
  // --resume was refused for want of a journal that acted
  it("[spec-start] not IDLE: --resume is offered only where a journal of this cutover acted", async () => {
    const hint = async (o: Setup) => {
      const s = setup({ sends: [{}], reads: each({ state: "RUNNING" }, { state: "IDLE" }) }, o);
      return (await failure(start.run(s.ctx, body))).hint;
    };
    expect(await hint({ acted: false })).toBe("A sync already runs, or an instance is down.");
    expect(await hint({ acted: true })).toBe(
      "A sync already runs (`syncbook run cutover.yaml --var switch=http://live --resume` adopts a run this tool started), or an instance is down.",
    );
    expect(await hint({ acted: true, mode: "resume" })).toMatch(/--resume` adopts a run this tool started\), or/);
    // a rehearsal's is the simulator's, acted or not, whatever the fleet shows
    const simulator =
      "The fleet is the rehearsal's simulator, stopped with the rehearsal: see why above, then rehearse again.";
    expect(await hint({ acted: true, mode: "rehearse" })).toBe(simulator);
    const committed = setup({ sends: [{}], reads: each({ state: "COMMITTED" }) }, { acted: true, mode: "rehearse" });
    expect((await failure(start.run(committed.ctx, body))).hint).toBe(simulator);
  });

  it("[spec-start] a fleet that committed a sync: refused, and the way on is not --resume (a committed sync never goes back to IDLE)", async () => {
    for (const past of ["COMMITTING", "COMMITTED", "REVERSING"] as const) {
      const s = setup({ sends: [{}], reads: each({ state: past }, { state: "COMMITTED" }, { state: "RUNNING" }) });
      const err = await failure(start.run(s.ctx, body));
      expect(err.reason).toBe("interlock");
      expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
      expect(err.hint).toBe(
        "sync0, sync1 already committed a sync, and a committed sync does not go back to IDLE: if this runbook's cutover is done, there is nothing to run again (syncbook status shows what its journal did); a new sync needs a service that is IDLE.",
      );
      expect(s.f.sent).toEqual([[], [], []]);
    }
  });

  // a trial: a split start completed by --resume was refused at its commit by no-errors, with
  // writes stopped for nothing; its question now says so before the yes
  it("[design] completing a start an instance refused: the question says the commit will need --force=no-errors", async () => {
    const confirm = async (o: Setup) => {
      const s = setup(
        { sends: [{}], reads: each({ state: "RUNNING" }, { state: "IDLE" }) },
        {
          targets: { only: [1], why: "completing the start sync0 took it" },
          yes: true,
          ...o,
        },
      );
      await start.run(s.ctx, body);
      expect(s.f.sent).toEqual([[], [0]]);
      return s.check("confirm")[0]!.reason;
    };
    const refused = [{ op: "start", instance: "sync1", error: "http://x: start refused: E" }];
    expect(await confirm({ errors: refused })).toBe(
      "answered yes by --yes: Send start to sync1 only (completing the start sync0 took it)? The refusal of the start still counts at the commit: nothing published says an instance started after the others leaves the destination a consistent copy, so a commit of this sync, in this run or a later one, goes on only with --force=no-errors.",
    );
    const plain = "answered yes by --yes: Send start to sync1 only (completing the start sync0 took it)?";
    // already forced, no refusal of a start (a lost answer is no refusal), another command's refusal
    expect(await confirm({ errors: refused, force: ["no-errors"] })).toBe(plain);
    expect(await confirm({})).toBe(plain);
    expect(await confirm({ errors: [{ op: "pause", instance: "sync1", error: "E" }] })).toBe(plain);
  });

  it("[design] --force=fleet-idle lets it through, recorded as forced", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "PAUSED" }) }, { force: ["fleet-idle"] });
    await start.run(s.ctx, body);
    expect(s.f.sent).toEqual([[0]]);
    expect(s.check("fleet-idle")).toMatchObject([{ ok: true, kind: "force" }]);
  });

  it("[facts-init] INITIALIZING beside IDLE is waited out (read again until IDLE), then start is sent once", async () => {
    const s = setup({
      sends: [{}],
      reads: [[{ state: "IDLE" }], [{ state: "INITIALIZING" }, { state: "INITIALIZING" }, { state: "IDLE" }]],
    });
    await start.run(s.ctx, body);
    expect(s.f.sent).toEqual([[0], [0]]);
    expect(s.f.reads).toBe(3);
    const retry = s.decisions().filter((d) => d.kind === "retry");
    expect(retry).toHaveLength(1);
    expect(retry[0]!.reason).toBe(
      "sync1 INITIALIZING (not ready for start yet): reading progress until every instance is IDLE",
    );
  });

  it("[facts-init] INITIALIZING beside another state is not waited out: refused at the first read", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "INITIALIZING" }, { state: "RUNNING" }) });
    const err = await failure(start.run(s.ctx, body));
    expect(err.message).toMatch(/sync0 is INITIALIZING, sync1 is RUNNING/);
    expect(s.f.reads).toBe(1);
    expect(s.decisions().filter((d) => d.kind === "retry")).toEqual([]);
  });

  // a review: a --new-cutover on a fleet that ran the earlier cutover's sync, refused by
  // fleet-identity (asked first), was pointed at its own command again, which fleet-idle then refused
  describe("refused by fleet-identity: what fleet-idle finds on the same read, said after the way on", () => {
    const of = (id: string, state = "RUNNING"): Read => ({
      state: state as "RUNNING",
      mongosyncID: id,
      coordinatorID: id,
    });
    const refused = async (reads: Read[][], o: Setup = {}) => {
      const s = setup({ sends: [{}], reads }, o);
      const err = await failure(start.run(s.ctx, body));
      expect(err.message).toMatch(/^refused \(fleet-identity\): the instances are not one fleet: /);
      expect(err.reason).toBe("interlock");
      // the interlocks' order kept: fleet-idle not asked, nothing sent, nobody asked
      expect(s.check("fleet-idle")).toEqual([]);
      expect(s.f.sent.flat()).toEqual([]);
      expect(s.questions).toEqual([]);
      return { err, way: identityWayOn(s.ctx.run) };
    };
    it("instances not IDLE: named, and fleet-idle's way on (a --resume only where a journal of this cutover acted)", async () => {
      const { err, way } = await refused([[of("a")], [of("b")], ["error"]]);
      expect(err.hint).toBe(
        `${way.hint} Start also needs every instance IDLE (fleet-idle, checked after this), and sync0 is RUNNING, sync1 is RUNNING, sync2 is unreachable (http://127.0.0.1:27184: progress failed: refused): while an instance of this sync is not IDLE, that check refuses the way on above too. A sync already runs, or an instance is down.`,
      );
      expect(err.againArgs).toEqual(way.againArgs);
      expect(err.beforeResume).toBe(way.beforeResume === true);
      const acted = await refused([[of("a")], [of("b")]], { acted: true });
      expect(acted.err.hint).toBe(
        `${acted.way.hint} Start also needs every instance IDLE (fleet-idle, checked after this), and sync0 is RUNNING, sync1 is RUNNING: while an instance of this sync is not IDLE, that check refuses the way on above too. A sync already runs (\`syncbook run cutover.yaml --var switch=http://live --resume\` adopts a run this tool started), or an instance is down.`,
      );
    });
    it("a committed one: no way on that starts it again", async () => {
      const { err, way } = await refused([[of("a", "COMMITTED")], [of("b", "IDLE")]]);
      expect(err.hint).toBe(
        `${way.hint} Start also needs every instance IDLE (fleet-idle, checked after this), and sync0 is COMMITTED: while an instance of this sync is not IDLE, that check refuses the way on above too. sync0 already committed a sync, and a committed sync does not go back to IDLE: if this runbook's cutover is done, there is nothing to run again (syncbook status shows what its journal did); a new sync needs a service that is IDLE.`,
      );
    });
    it("every instance IDLE (one listed twice): the way on alone", async () => {
      const { err, way } = await refused([[of("a", "IDLE")], [of("a", "IDLE")]]);
      expect(err.message).toMatch(/is one instance listed twice/);
      expect(err.hint).toBe(way.hint);
    });
    it("a completion (--only): the instances it goes to only", async () => {
      const targets = { only: [1, 2], why: "--only sync1 sync2" };
      const { err, way } = await refused([[of("a")], [of("a", "IDLE")], [of("b")]], {
        targets,
        yes: true,
        acted: true,
      });
      expect(err.hint).toBe(
        `${way.hint} Start also needs every instance IDLE (fleet-idle, checked after this), and sync2 is RUNNING: while an instance of this sync is not IDLE, that check refuses the way on above too. A sync already runs (\`syncbook run cutover.yaml --var switch=http://live --resume\` adopts a run this tool started), or an instance is down.`,
      );
    });
    it("a rehearsal: the way on alone (its simulator starts IDLE)", async () => {
      const { err, way } = await refused([[of("a")], [of("b")]], { mode: "rehearse" });
      expect(err.hint).toBe(way.hint);
      expect(err.hint).toMatch(/rehearse again\.$/);
    });
    it("--force=fleet-identity: fleet-idle refuses as before, with its own words", async () => {
      const s = setup({ sends: [{}], reads: [[of("a")], [of("b")]] }, { force: ["fleet-identity"] });
      const err = await failure(start.run(s.ctx, body));
      expect(err.message).toBe(
        "refused (fleet-idle): start is allowed only in IDLE; sync0 is RUNNING, sync1 is RUNNING",
      );
      expect(s.f.sent.flat()).toEqual([]);
    });
  });

  it("an IDLE fleet is read once", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "IDLE" }) });
    await start.run(s.ctx, body);
    expect(s.f.reads).toBe(1);
  });
});

describe("commit", () => {
  const ready: Read = { state: "RUNNING", canCommit: true };

  it("[design] writes stopped, no errors, every instance RUNNING with canCommit: sent once to each, nothing undone after", async () => {
    const s = setup({ sends: [{}], reads: each(ready, ready) });
    await commit.run(s.ctx, {});
    expect(s.f.sent).toEqual([[0], [0]]);
    expect(s.bodies).toEqual([{ op: "commit", body: {}, only: undefined }]);
    expect(s.ctx.run.memory.commitSent).toBe(true);
    expect(s.ctx.run.memory.commitAccepted).toBe(true);
    expect(s.undo.disarm).toHaveBeenCalledTimes(1);
    expect(s.check("writes-stopped")).toMatchObject([
      { ok: true, reason: "a stopWrites step of this cutover held, and no undo of it ran since" },
    ]);
    expect(s.check("no-errors")).toMatchObject([
      { ok: true, reason: "no instance answered with an error in this run" },
    ]);
    expect(s.check("can-commit")).toMatchObject([
      { ok: true, reason: "every instance is RUNNING with canCommit true" },
    ]);
    const sent = s.events.filter((e) => e.type === "commit.sent");
    expect(sent).toMatchObject([{ instances: ["sync0", "sync1"], skewMs: 0 }]);
  });

  it("[design] no stopWrites succeeded: refused before the fleet is even read, nothing sent", async () => {
    const s = setup({ sends: [{}], reads: each(ready) }, { writesStopped: false });
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.message).toBe(
      "refused (writes-stopped): no stopWrites step has succeeded in this run: writes during commit may lose data",
    );
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toMatch(/^Run the stopWrites step first/);
    expect(s.f.reads).toBe(0);
    expect(s.f.sent).toEqual([[]]);
    expect(s.ctx.run.memory.commitSent).toBe(false);
    expect(s.undo.disarm).not.toHaveBeenCalled();
  });

  it("[design] on resume the hint says the journal shows no stopWrites that held", async () => {
    const s = setup({ sends: [{}], reads: each(ready) }, { writesStopped: false, mode: "resume" });
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toMatch(/^The journal shows no stopWrites that held/);
  });

  it("[design] writesStoppedExternally stands in for a stopWrites step, and says so", async () => {
    const s = setup({ sends: [{}], reads: each(ready) }, { writesStopped: false, external: true });
    await commit.run(s.ctx, {});
    expect(s.check("writes-stopped")).toMatchObject([
      { ok: true, reason: "the runbook declares writes stopped outside it" },
    ]);
    expect(s.f.sent).toEqual([[0]]);
  });

  it("[design] --force=writes-stopped: forced, recorded, sent, and remembered as sent with writes not known stopped", async () => {
    const s = setup({ sends: [{}], reads: each(ready) }, { writesStopped: false, force: ["writes-stopped"] });
    await commit.run(s.ctx, {});
    expect(s.check("writes-stopped")).toMatchObject([{ ok: true, kind: "force" }]);
    expect(s.f.sent).toEqual([[0]]);
    // verify's writes-stopped interlock does not count this commit (src/steps/verify.ts)
    expect(s.ctx.run.memory.commitWritesForced).toBe(true);
  });

  it("--force=writes-stopped not needed (a stop held): the commit is not remembered as forced", async () => {
    const s = setup({ sends: [{}], reads: each(ready) }, { force: ["writes-stopped"] });
    await commit.run(s.ctx, {});
    expect(s.check("writes-stopped")).toMatchObject([{ ok: true, kind: "interlock" }]);
    expect(s.ctx.run.memory.commitSent).toBe(true);
    expect(s.ctx.run.memory.commitWritesForced).toBeUndefined();
  });

  it("forced past writes-stopped, refused by a later interlock: nothing sent, nothing remembered as forced", async () => {
    const s = setup(
      { sends: [{}], reads: each({ state: "RUNNING", canCommit: false }) },
      { writesStopped: false, force: ["writes-stopped"] },
    );
    await failure(commit.run(s.ctx, {}));
    expect(s.f.sent).toEqual([[]]);
    expect(s.ctx.run.memory.commitWritesForced).toBeUndefined();
  });

  it("[design] an instance answered with an error earlier: refused (no-errors), naming it", async () => {
    const s = setup(
      { sends: [{}], reads: each(ready) },
      { errors: [{ op: "pause", instance: "sync0", error: "InvalidStateTransition" }] },
    );
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.message).toBe(
      "refused (no-errors): instances answered with errors earlier: pause: InvalidStateTransition",
    );
    expect(s.f.reads).toBe(0);
    expect(s.f.sent).toEqual([[]]);
    // its way on names the command (it said "rerun with --force=no-errors"), a completed split
    // start among its causes, and is said with the forced --resume that status and the page offer
    expect(err.hint).toBe(
      "Find out from the service's log why it refused. A command refused and taken later (a split `start` completed) counts too: nothing published says an instance started after the others leaves the destination a consistent copy, and a commit cannot be undone; the verifier's progress shows differences it found so far. Only if you are certain it is safe: `syncbook run cutover.yaml --var switch=http://live --resume --force=no-errors`.",
    );
    expect(err.beforeResume).toBe(true);
    expect(err.resumeFlags).toEqual(["--force=no-errors"]);
    const two = setup(
      { sends: [{}], reads: each(ready) },
      {
        errors: [
          { op: "pause", instance: "sync0", error: "A" },
          { op: "start", instance: "sync1", error: "B" },
        ],
      },
    );
    expect((await failure(commit.run(two.ctx, {}))).hint).toMatch(
      /^Find out from the service's log why they refused\. /,
    );
  });

  it("completing a split commit forgives only the commit refusals of the instances it completes", async () => {
    const targets = { only: [1], why: "completing the commit", forgive: ["sync1"] };
    const comp: Read[][] = [[{ state: "COMMITTING" }], [ready]];
    const ok = setup(
      { sends: [{}], reads: comp },
      { targets, yes: true, errors: [{ op: "commit", instance: "sync1", error: "X" }] },
    );
    await commit.run(ok.ctx, {});
    expect(ok.check("no-errors")).toMatchObject([
      {
        ok: true,
        reason: "no instance answered with an error in this run, besides the commit refusals of sync1 being completed",
      },
    ]);
    expect(ok.f.sent).toEqual([[], [0]]);
    expect(ok.check("can-commit")).toMatchObject([
      { ok: true, reason: "every instance it goes to is RUNNING with canCommit true" },
    ]);
    expect(ok.events.filter((e) => e.type === "commit.sent")).toMatchObject([{ instances: ["sync1"] }]);
    for (const errors of [
      [{ op: "start", instance: "sync1", error: "X" }],
      [{ op: "commit", instance: "sync0", error: "X" }],
    ]) {
      const s = setup({ sends: [{}], reads: comp }, { targets, yes: true, errors });
      await expect(commit.run(s.ctx, {})).rejects.toThrow(/refused \(no-errors\)/);
    }
  });

  it("[design] an instance not RUNNING with canCommit: refused (can-commit), each named with what it shows", async () => {
    const s = setup({
      sends: [{}],
      reads: each(ready, { state: "RUNNING", canCommit: false }, { state: "PAUSED", canCommit: true }, "error"),
    });
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.message).toBe(
      "refused (can-commit): commit needs every instance RUNNING with canCommit true; sync1 is RUNNING with canCommit false, sync2 is PAUSED with canCommit true, sync3 is unreachable (http://127.0.0.1:27185: progress failed: refused)",
    );
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toBe("Wait for canCommit (a waitFor step) before commit.");
    expect(s.f.sent).toEqual([[], [], [], []]);
    expect(s.ctx.run.memory.commitSent).toBe(false);
  });

  it("[facts-block] refused by some instances while the others took it: a split, said as such with the way out", async () => {
    const s = setup({ sends: [{ 1: "refused" }], reads: each(ready, ready, ready) });
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.message).toBe(
      "split: commit reached 2 of 3 instances (refused by sync1): sync1: http://127.0.0.1:27183: commit refused: InvalidStateTransition: no; commit blocks until every instance has it, so the instances that took it hold it until sync1 has it; nothing was resent",
    );
    expect(s.ctx.run.memory.split).toBe("commit reached 2 of 3 instances (refused by sync1)");
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toMatch(/^Find out why sync1 refused/);
    expect(err.hint).toMatch(
      /`syncbook run cutover.yaml --var switch=http:\/\/live --resume` completes it: it sends commit to that instance only/,
    );
    expect(s.ctx.run.memory.commitSent).toBe(true);
    expect(s.events.filter((e) => e.type === "commit.sent")).toEqual([]);
  });

  it("two refusers are 'those instances'; every instance refusing is no split", async () => {
    const two = setup({ sends: [{ 0: "refused", 1: "refused" }], reads: each(ready, ready, ready) });
    const err = await failure(commit.run(two.ctx, {}));
    expect(err.message).toMatch(/^split: commit reached 1 of 3 instances \(refused by sync0, sync1\)/);
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toMatch(/sends commit to those instances only/);
    expect(err.message).toMatch(/hold it until sync0, sync1 have it; nothing was resent$/);
    const all = setup({ sends: [{ 0: "refused", 1: "refused" }], reads: each(ready, ready) });
    const e2 = await failure(commit.run(all.ctx, {}));
    expect(e2.message).not.toMatch(/split/);
    expect(all.ctx.run.memory.split).toBeUndefined();
  });

  it("a commit refusal from before this send (forced past no-errors) does not make this send's failure a split", async () => {
    const s = setup({ sends: [{ 0: "reset", 1: "reset" }], reads: each(ready, ready) }, { force: ["no-errors"] });
    s.ctx.run.memory.serviceErrors.push({ op: "commit", instance: "sync0", error: "old" });
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.message).not.toMatch(/split/);
  });

  it("a completion refused again: the instances that hold the commit are said to hold it (never 'nothing took effect'); a fresh targeted commit refused is not called a split", async () => {
    const targets = { only: [1], why: "completing the commit", forgive: ["sync1"] };
    const s = setup({ sends: [{ 1: "refused" }], reads: each(ready, ready) }, { targets, yes: true });
    s.ctx.run.memory.split = "commit reached 1 of 2 instances (not sync1)";
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.message).toBe(
      "split: commit reached 1 of 2 instances (not sync1): sync1 refused it again (sync1: http://127.0.0.1:27183: commit refused: InvalidStateTransition: no); nothing took effect on it, and the other instances still hold the commit; nothing was resent",
    );
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toMatch(
      /^Find out why sync1 refused and fix it .* completes it: it sends commit to that instance only/,
    );
    expect(s.ctx.run.memory.split).toBe("commit reached 1 of 2 instances (not sync1)");
    const two = setup(
      { sends: [{ 0: "refused", 1: "refused" }], reads: each(ready, ready, ready) },
      { targets: { only: [0, 1], why: "completing the commit", forgive: ["sync0", "sync1"] }, yes: true },
    );
    two.ctx.run.memory.split = "commit reached 1 of 3 instances (not sync0, sync1)";
    const e2 = await failure(commit.run(two.ctx, {}));
    expect(e2.message).toBe(
      "split: commit reached 1 of 3 instances (not sync0, sync1): sync0, sync1 refused it again (sync0: http://127.0.0.1:27182: commit refused: InvalidStateTransition: no; sync1: http://127.0.0.1:27183: commit refused: InvalidStateTransition: no); nothing took effect on them, and the other instances still hold the commit; nothing was resent",
    );
    expect(e2.beforeResume).toBe(/--resume/.test(e2.hint ?? ""));
    expect(e2.hint).toMatch(/^Find out why sync0, sync1 refused and fix it .* sends commit to those instances only/);
    const fresh = setup(
      { sends: [{ 1: "refused" }], reads: each(ready, ready) },
      { targets: { only: [1], why: "--only sync1" }, yes: true },
    );
    const e3 = await failure(commit.run(fresh.ctx, {}));
    expect(e3.message).not.toMatch(/split/);
    expect(e3.message).toMatch(/it was sent to 1 of 2 instances only\)$/);
  });

  it("a completed split is whole again", async () => {
    const s = setup({ sends: [{}], reads: each(ready) });
    s.ctx.run.memory.split = "commit reached 1 of 2 instances";
    await commit.run(s.ctx, {});
    expect(s.ctx.run.memory.split).toBeUndefined();
  });
});

/**
 * Issue 42, invariant 2: "Nothing commits while a write-on may still happen": every hook process
 * an earlier run of this cutover started must be known to have exited (src/run/orphans.ts judges
 * them); where that cannot be known, the runbook's `check:` decides only when one exists.
 */
describe("commit: the hook processes earlier runs left (hook-processes)", () => {
  const ready: Read = { state: "RUNNING", canCommit: true };
  const CHECKED = { stopWrites: { use: "flag", check: { use: "read-switch" } } } as Step;

  /** A commit at step 2 of [stopWrites, commit], the gate answering as given, the check (when there is one) as given. */
  function gated(
    judge: { live: string[]; unknown: string[] },
    o: Setup & { check?: boolean; switchOff?: boolean } = {},
  ) {
    const s = setup({ sends: [{}], reads: each(ready) }, o);
    const steps = [o.check ? CHECKED : ({ stopWrites: { use: "flag" } } as Step), { commit: {} } as Step];
    Object.assign(s.ctx.run.runbook, { steps });
    Object.assign(s.ctx, { index: 1, id: "commit" });
    const judged = vi.fn(() => judge);
    Object.assign(s.ctx.run, { earlierHooks: { judge: judged } });
    Object.assign(s.ctx.run.plugins, {
      registry: {
        hook: (name: string) =>
          name === "read-switch"
            ? {
                run: () => {
                  if (o.switchOff === false) throw new Error("writes flow");
                },
              }
            : undefined,
      },
      ctx: { runbook: { name: "t", file: "cutover.yaml" }, cwd: ".", redact: (t: string) => t, log: () => undefined },
    });
    return { ...s, judged };
  }

  it("no earlier run left a hook call: no gate, no decision", async () => {
    const s = setup({ sends: [{}], reads: each(ready) });
    await commit.run(s.ctx, {});
    expect(s.check("hook-processes")).toEqual([]);
    expect(s.f.sent).toEqual([[0]]);
  });

  it("every one has exited: decided ok, then sent", async () => {
    const s = gated({ live: [], unknown: [] });
    await commit.run(s.ctx, {});
    expect(s.check("hook-processes")).toMatchObject([
      { ok: true, kind: "interlock", reason: "every hook process an earlier run started has exited" },
    ]);
    expect(s.judged).toHaveBeenCalledTimes(1);
    expect(s.f.sent).toEqual([[0]]);
  });

  it("one still runs: refused (exit 3), naming it, before the fleet is read; nothing sent, nothing disarmed", async () => {
    // the --resume in either mode: a plain run again would begin another cutover (a review)
    for (const mode of ["run", "resume"] as const) {
      const s = gated({ live: ['the undo of step 1 "stop" (shell; pid 42)'], unknown: [] }, { mode });
      const err = await failure(commit.run(s.ctx, {}));
      expect(err.reason).toBe("interlock");
      expect(err.message).toBe(
        'refused (hook-processes): the undo of step 1 "stop" (shell; pid 42) was started by an earlier run and is still running: it may turn application writes back on behind this commit',
      );
      // what to do before the --resume that asks again (status and the page say it with it)
      expect(err.beforeResume).toBe(true);
      expect(err.resumeFlags).toBeUndefined();
      expect(err.hint).toBe(
        `Wait for it to exit, or stop it and check what it did to the application's writes, then \`syncbook run ${s.ctx.run.target} --resume\`; nothing was sent.`,
      );
      expect(s.f.reads).toBe(0);
      expect(s.f.sent).toEqual([[]]);
      expect(s.undo.disarm).not.toHaveBeenCalled();
    }
    const two = gated({ live: ["a", "b"], unknown: ["c"] }, { check: true });
    const err = await failure(commit.run(two.ctx, {}));
    expect(err.message).toBe(
      "refused (hook-processes): a; b were started by an earlier run and are still running: they may turn application writes back on behind this commit",
    );
    expect(err.beforeResume).toBe(true);
    expect(err.hint).toMatch(/^Wait for them to exit, or stop them and check what they did/);
  });

  it("cannot be told and no stopWrites has a check: refused, saying what to check and --force=hook-processes", async () => {
    const s = gated({ live: [], unknown: ['the undo of step 1 "stop" (shell): it ran on host b'] }, { mode: "resume" });
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.message).toBe(
      'refused (hook-processes): the processes earlier runs started cannot all be known to have exited (the undo of step 1 "stop" (shell): it ran on host b): one may still turn application writes back on behind this commit, and no stopWrites here has a `check:` to read the write switch',
    );
    // a plain --resume is refused again while it stays unknowable (a review): status and the page
    // offer the forced one, said with this hint
    expect(err.beforeResume).toBe(true);
    expect(err.resumeFlags).toEqual(["--force=hook-processes"]);
    expect(err.hint).toMatch(/^Check where it ran that no process of it is left .*SYNCBOOK_HOOK_TOKEN/);
    expect(err.hint).toMatch(
      /then `syncbook run cutover\.yaml --var switch=http:\/\/live --resume --force=hook-processes`\. A `check:` on the stopWrites step/,
    );
    expect(s.f.sent).toEqual([[]]);
    // every one named
    const two = gated({ live: [], unknown: ["x on host b", "y on host c"] }, { mode: "resume" });
    expect((await failure(commit.run(two.ctx, {}))).message).toContain(
      "cannot all be known to have exited (x on host b; y on host c)",
    );
  });

  it("cannot be told, --force=hook-processes: forced, recorded, sent", async () => {
    const s = gated({ live: [], unknown: ["x: it ran on host b"] }, { force: ["hook-processes"] });
    await commit.run(s.ctx, {});
    expect(s.check("hook-processes")).toMatchObject([{ ok: true, kind: "force" }]);
    expect(s.f.sent).toEqual([[0]]);
  });

  it("cannot be told, a check exists: the check decides (passes: sent; writes flowing: refused by it)", async () => {
    const ok = gated({ live: [], unknown: ["x: it ran on host b"] }, { check: true });
    await commit.run(ok.ctx, {});
    expect(ok.check("hook-processes")).toMatchObject([
      {
        ok: true,
        kind: "interlock",
        reason:
          "the processes earlier runs started cannot all be known to have exited (x: it ran on host b); the write stop's check reads the write switch right before this commit and decides",
      },
    ]);
    expect(ok.f.sent).toEqual([[0]]);
    const flowing = gated({ live: [], unknown: ["x: it ran on host b"] }, { check: true, switchOff: false });
    const err = await failure(commit.run(flowing.ctx, {}));
    expect(err.message).toMatch(/^refused \(writes-stopped\): application writes are not seen stopped now/);
    expect(flowing.f.sent).toEqual([[]]);
  });
});

describe("pause, resume, reverse", () => {
  it("[spec-states] each is sent only from its state, to every instance, once", async () => {
    for (const [op, from] of [
      ["pause", "RUNNING"],
      ["resume", "PAUSED"],
      ["reverse", "COMMITTED"],
    ] as const) {
      const s = setup({ sends: [{}], reads: each({ state: from }, { state: from }) });
      await lifecycle(op).run(s.ctx, {});
      expect(s.f.sent).toEqual([[0], [0]]);
      expect(s.bodies).toEqual([{ op, body: {}, only: undefined }]);
      expect(s.check("fleet-state")).toMatchObject([{ ok: true, reason: `every instance is ${from}` }]);
    }
  });

  it("[spec-states] an instance in another state: refused, named, nothing sent", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "RUNNING" }, { state: "PAUSED" }, "error") });
    const err = await failure(lifecycle("pause").run(s.ctx, {}));
    expect(err.message).toBe(
      "refused (fleet-state): pause is allowed only in RUNNING; sync1 is PAUSED, sync2 is unreachable (http://127.0.0.1:27184: progress failed: refused)",
    );
    expect(s.f.sent).toEqual([[], [], []]);
  });

  it("reverse: its own write stop and commit after it, the undo rearmed, either direction legal until it shows", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "COMMITTED" }) });
    s.ctx.run.memory.identity.direction = { source: "cluster0", destination: "cluster1", from: "the start step s" };
    // a commit the sync before refused everywhere says nothing of the new sync's
    Object.assign(s.ctx.run.memory, {
      commitSent: true,
      commitAccepted: true,
      commitRefused: true,
      commitWritesForced: true,
    });
    s.ctx.run.memory.verifier = { check: { answered: "ok", at: 1 }, verified: { at: 2, generation: 3 } };
    // the sync before's refusals (a split commit completed): the new sync's commit does not count them
    s.ctx.run.memory.serviceErrors.push({ op: "commit", instance: "sync1", error: "refused" });
    await lifecycle("reverse").run(s.ctx, {});
    expect(s.ctx.run.memory.serviceErrors).toEqual([]);
    // the verification so far compared the sync before it
    expect(s.ctx.run.memory.verifier).toEqual({ reversed: "cmd" });
    expect(s.ctx.run.memory.writesStopped).toBe(false);
    expect(s.ctx.run.memory.commitSent).toBe(false);
    expect(s.ctx.run.memory.commitAccepted).toBe(false);
    expect(s.ctx.run.memory.commitRefused).toBeUndefined();
    // the new sync's commit has its own writes-stopped interlock
    expect(s.ctx.run.memory.commitWritesForced).toBeUndefined();
    // the run's end says "not committed since the reverse (step cmd)"
    expect(s.ctx.run.memory.reversed).toBe("cmd");
    expect(s.undo.rearm).toHaveBeenCalledTimes(1);
    expect(s.ctx.run.memory.identity.direction).toEqual({
      source: "cluster0",
      destination: "cluster1",
      from: "the reverse step cmd",
      either: true,
    });
  });

  it("a reverse refused by part of the fleet: the step fails, and the verification before it no longer counts (it may have reached an instance)", async () => {
    const s = setup({
      sends: [{ 0: "ok", 1: "refused" }],
      reads: each({ state: "COMMITTED" }, { state: "COMMITTED" }),
    });
    s.ctx.run.memory.verifier = { check: { answered: "ok", at: 1 }, verified: { at: 2, generation: 3 } };
    s.ctx.run.memory.serviceErrors.push({ op: "start", instance: "sync1", error: "refused" });
    await failure(lifecycle("reverse").run(s.ctx, {}));
    expect(s.ctx.run.memory.verifier).toEqual({ reversed: "cmd" });
    // not a new sync for sure: every refusal still counts, the reverse's own too
    expect(s.ctx.run.memory.serviceErrors.map((e) => e.op)).toEqual(["start", "reverse"]);
    // its step did not end ok: the sync may run either way, the run's end does not say it reversed
    expect(s.ctx.run.memory.reversed).toBeUndefined();
    // refused by its interlock before anything is sent: the verification stands
    const before = setup({ sends: [{}], reads: each({ state: "RUNNING" }) });
    before.ctx.run.memory.verifier = { check: { answered: "ok", at: 1 } };
    await failure(lifecycle("reverse").run(before.ctx, {}));
    expect(before.ctx.run.memory.verifier).toEqual({ check: { answered: "ok", at: 1 } });
  });

  // the run's end said "· committed ·" after a reverse whose answer was lost (src/run/runner.ts
  // `run.finished.reverseInDoubt`): the journal's rule, src/run/earlier.ts `reverseInDoubt`
  it("a reverse that may have reached the fleet and did not end ok is remembered in doubt; one every instance refused, or that never left, is not", async () => {
    const committed: Read = { state: "COMMITTED" };
    const doubtOf = async (sends: Script["sends"], reads: Read[][]) => {
      const s = setup({ sends, reads });
      await failure(lifecycle("reverse").run(s.ctx, {}));
      // absent, not merely undefined: the run's end reads its presence
      return "reverseInDoubt" in s.ctx.run.memory ? s.ctx.run.memory.reverseInDoubt : "absent";
    };
    // accepted by one, refused by the other: split, it runs either way
    expect(await doubtOf([{ 0: "ok", 1: "refused" }], each(committed, committed))).toBe("cmd");
    // one refused, one with no usable answer that progress settled (still COMMITTED proves nothing)
    expect(await doubtOf([{ 0: "refused", 1: "reset" }], each(committed, committed))).toBe("cmd");
    expect(await doubtOf([{ 0: "refused", 1: "refused" }], each(committed, committed))).toBe("absent");
    expect(
      await doubtOf(
        [{ 0: "not-sent", 1: "not-sent" }],
        [
          [committed, "error"],
          [committed, "error"],
        ],
      ),
    ).toBe("absent");
    // refused by its interlock before anything is sent
    expect(await doubtOf([{}], each({ state: "RUNNING" }))).toBe("absent");
    // a resume completing an earlier run's reverse (src/run/resume-decide.ts seeds it): refused
    // everywhere this time, the earlier send may still hold on the instances it reached
    const seeded = setup({ sends: [{ 0: "refused", 1: "refused" }], reads: each(committed, committed) });
    seeded.ctx.run.memory.reverseInDoubt = "earlier";
    await failure(lifecycle("reverse").run(seeded.ctx, {}));
    expect(seeded.ctx.run.memory.reverseInDoubt).toBe("earlier");
    // a send the journal's failure cut short after its requests left (no settling): in doubt
    const cut = setup({ sends: [{}], reads: each(committed, committed) });
    const send = cut.ctx.run.fleet.broadcast;
    cut.ctx.run.fleet = {
      ...cut.ctx.run.fleet,
      broadcast: async (...a) => {
        await send(...a);
        throw new Error("journal: no space left on device");
      },
    };
    await expect(lifecycle("reverse").run(cut.ctx, {})).rejects.toThrow(/no space left/);
    expect(cut.ctx.run.memory.reverseInDoubt).toBe("cmd");
    // ended ok: reversed, not in doubt
    const ok = setup({ sends: [{}], reads: each(committed, committed) });
    await lifecycle("reverse").run(ok.ctx, {});
    expect(ok.ctx.run.memory.reversed).toBe("cmd");
    expect(ok.ctx.run.memory).not.toHaveProperty("reverseInDoubt");
  });

  it("pause and resume keep the run's write stop, its commit memory and the direction", async () => {
    for (const [op, from] of [
      ["pause", "RUNNING"],
      ["resume", "PAUSED"],
    ] as const) {
      const s = setup({ sends: [{}], reads: each({ state: from }) });
      const direction = { source: "cluster0", destination: "cluster1", from: "the start step s" };
      s.ctx.run.memory.identity.direction = direction;
      const verifier = { check: { answered: "ok" as const, at: 1 } };
      s.ctx.run.memory.verifier = verifier;
      await lifecycle(op).run(s.ctx, {});
      expect(s.ctx.run.memory.verifier).toEqual({ check: { answered: "ok", at: 1 } });
      expect(s.ctx.run.memory.writesStopped).toBe(true);
      expect(s.undo.rearm).not.toHaveBeenCalled();
      expect(s.ctx.run.memory.identity.direction).toBe(direction);
    }
  });

  it("reverse without a known direction leaves none", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "COMMITTED" }) });
    await lifecycle("reverse").run(s.ctx, {});
    expect(s.ctx.run.memory.identity.direction).toBeUndefined();
  });
});

describe("a targeted command (--only, or a resumed completion): only the rest of one the others have", () => {
  const targets = { only: [1], why: "--only sync1" };

  it("the others show its effect: asked, then sent to the named instance only", async () => {
    const s = setup(
      { sends: [{}], reads: each({ state: "PAUSED" }, { state: "RUNNING" }) },
      { targets, prompt: () => true },
    );
    await lifecycle("pause").run(s.ctx, {});
    expect(s.questions).toEqual(["Send pause to sync1 only (--only sync1)?"]);
    expect(s.bodies).toEqual([{ op: "pause", body: {}, only: [1] }]);
    expect(s.f.sent).toEqual([[], [0]]);
    expect(s.check("fleet-state")[0]).toMatchObject({
      ok: true,
      reason: "pause to sync1 only (--only sync1); the others are sync0 PAUSED",
    });
    expect(s.check("confirm")).toMatchObject([{ ok: true, reason: "yes: Send pause to sync1 only (--only sync1)?" }]);
  });

  it("an other instance that has not taken it: refused, the fleet would split; nothing asked, nothing sent", async () => {
    const s = setup(
      { sends: [{}], reads: each({ state: "RUNNING" }, { state: "RUNNING" }, "error") },
      { targets, prompt: () => true },
    );
    const err = await failure(lifecycle("pause").run(s.ctx, {}));
    expect(err.message).toBe(
      "refused (fleet-state): pause to sync1 only would split the fleet: sync0 is RUNNING, sync2 is unreachable (http://127.0.0.1:27184: progress failed: refused), which has not taken pause (PAUSED)",
    );
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toMatch(/send it to the whole fleet \(without --only\)/);
    expect(s.questions).toEqual([]);
    expect(s.f.sent).toEqual([[], [], []]);
  });

  it("[facts-block] commit and reverse: the others may still wait in the state before (they block until every instance has it)", async () => {
    const ready: Read = { state: "RUNNING", canCommit: true };
    const s = setup({ sends: [{}], reads: each(ready, ready) }, { targets, yes: true });
    await commit.run(s.ctx, {});
    expect(s.f.sent).toEqual([[], [0]]);
    const r = setup(
      { sends: [{}], reads: each({ state: "COMMITTED" }, { state: "COMMITTED" }) },
      { targets, yes: true },
    );
    await lifecycle("reverse").run(r.ctx, {});
    expect(r.f.sent).toEqual([[], [0]]);
    // not a blocking command: an other instance still before it has not taken it
    const p = setup({ sends: [{}], reads: each({ state: "IDLE" }, { state: "IDLE" }) }, { targets, yes: true });
    const err = await failure(start.run(p.ctx, body));
    expect(err.message).toMatch(/sync0 is IDLE, which has not taken start \(RUNNING\/PAUSED/);
    // a blocking one whose other instance is in neither state
    const q = setup(
      { sends: [{}], reads: each({ state: "PAUSED" }, { state: "RUNNING", canCommit: true }) },
      { targets, yes: true },
    );
    const e2 = await failure(commit.run(q.ctx, {}));
    expect(e2.message).toMatch(
      /sync0 is PAUSED, which is neither waiting for commit \(RUNNING\) nor past it \(COMMITTING\/COMMITTED\)/,
    );
  });

  it("the named instance still passes the command's own interlock", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "PAUSED" }, { state: "PAUSED" }) }, { targets, yes: true });
    await expect(lifecycle("pause").run(s.ctx, {})).rejects.toThrow(
      /pause is allowed only in RUNNING; sync1 is PAUSED/,
    );
  });

  it("no other instance: said so", async () => {
    const s = setup(
      { sends: [{}], reads: each({ state: "RUNNING" }) },
      { targets: { only: [0], why: "w" }, yes: true },
    );
    await lifecycle("pause").run(s.ctx, {});
    expect(s.check("fleet-state")[0]!.reason).toBe("pause to sync0 only (w); no other instance");
    expect(s.check("confirm")).toMatchObject([
      { ok: true, reason: "answered yes by --yes: Send pause to sync0 only (w)?" },
    ]);
    // a rehearsal answers every confirm, --yes or not: said as its own answer
    const r = setup(
      { sends: [{}], reads: each({ state: "RUNNING" }) },
      { targets: { only: [0], why: "w" }, yes: true, mode: "rehearse" },
    );
    await lifecycle("pause").run(r.ctx, {});
    expect(r.check("confirm")).toMatchObject([
      { ok: true, reason: "answered yes by the rehearsal: Send pause to sync0 only (w)?" },
    ]);
  });

  it("a no, or no terminal and no --yes: nothing sent", async () => {
    const no = setup(
      { sends: [{}], reads: each({ state: "PAUSED" }, { state: "RUNNING" }) },
      { targets, prompt: () => false },
    );
    const e1 = await failure(lifecycle("pause").run(no.ctx, {}));
    expect(e1.reason).toBe("declined");
    expect(e1.message).toBe("the operator answered no: Send pause to sync1 only (--only sync1)?");
    expect(no.f.sent).toEqual([[], []]);
    const none = setup({ sends: [{}], reads: each({ state: "PAUSED" }, { state: "RUNNING" }) }, { targets });
    const e2 = await failure(lifecycle("pause").run(none.ctx, {}));
    expect(e2.message).toMatch(/^a targeted pause needs an answer and there is no terminal/);
    expect(none.f.sent).toEqual([[], []]);
  });

  it("--force=fleet-state lets a targeted command through", async () => {
    const s = setup(
      { sends: [{}], reads: each({ state: "RUNNING" }, { state: "RUNNING" }) },
      { targets, yes: true, force: ["fleet-state"] },
    );
    await lifecycle("pause").run(s.ctx, {});
    expect(s.f.sent).toEqual([[], [0]]);
  });
});

describe("what the command steps plan, and how they are named", () => {
  const to = (serviceVersion?: string) => ({
    instances: ["http://a:27182", "http://b:27182"],
    verifier: "http://v:27020",
    redact: (t: string) => t.replace(/hunter2/g, "***"),
    serviceVersion,
  });

  it("start: the interlock read, then the body as sent (redacted), with what depends on the version", () => {
    const b = { source: "cluster0", destination: "cluster1", reversible: true, buildIndexes: "never" as const };
    expect(start.title(b)).toBe("Start the sync cluster0 → cluster1");
    expect(start.body({ id: "s", start: b })).toBe(b);
    expect(start.body({ id: "s", commit: {} })).toBeUndefined();
    expect(start.plan(b, to("1.8.0"))).toMatchInlineSnapshot(`
      [
        {
          "method": "GET",
          "note": "interlock: every instance IDLE",
          "path": "/api/v1/progress",
          "target": "http://a:27182",
        },
        {
          "method": "GET",
          "note": "interlock: every instance IDLE",
          "path": "/api/v1/progress",
          "target": "http://b:27182",
        },
        {
          "body": {
            "buildIndexes": "never",
            "destination": "cluster1",
            "reversible": true,
            "source": "cluster0",
          },
          "method": "POST",
          "note": "service 1.8.0: buildIndexes (service 1.3+)",
          "path": "/api/v1/start",
          "target": "http://a:27182",
        },
        {
          "body": {
            "buildIndexes": "never",
            "destination": "cluster1",
            "reversible": true,
            "source": "cluster0",
          },
          "method": "POST",
          "note": "service 1.8.0: buildIndexes (service 1.3+)",
          "path": "/api/v1/start",
          "target": "http://b:27182",
        },
      ]
    `);
    expect(start.plan(b, to("1.20.0"))[0]).toMatchInlineSnapshot(`
      {
        "method": "GET",
        "note": "interlock: every instance IDLE (INITIALIZING, 1.20+, is waited out)",
        "path": "/api/v1/progress",
        "target": "http://a:27182",
      }
    `);
    // no serviceVersion: the same requests; the notes say what is assumed
    const idle = "interlock: every instance IDLE (INITIALIZING, 1.20+, is waited out)";
    const parts = "no serviceVersion: buildIndexes (service 1.3+)";
    expect(start.plan(b, to()).map((r) => r.note)).toEqual([idle, idle, parts, parts]);
    expect(start.plan(body, to("1.8.0"))[2]).toStrictEqual({
      method: "POST",
      target: "http://a:27182",
      path: "/api/v1/start",
      body,
    });
    // a secret in the body (here through x-passthrough, sent at the top level) is shown redacted
    const secret = { source: "cluster0", destination: "cluster1", "x-passthrough": { token: "hunter2" } } as never;
    const shown = start.plan(secret, to("1.8.0")).filter((r) => r.method === "POST");
    expect(shown.map((r) => r.body)).toEqual([
      { source: "cluster0", destination: "cluster1", token: "***" },
      { source: "cluster0", destination: "cluster1", token: "***" },
    ]);
  });

  it("commit, pause, resume, reverse: the interlock read, then `{}` to every instance", () => {
    expect(commit.title({})).toBe("Commit");
    expect(commit.body({ id: "c", commit: {} })).toStrictEqual({});
    expect(commit.body({ id: "c", pause: {} })).toBeUndefined();
    expect(commit.plan({}, to())).toMatchInlineSnapshot(`
      [
        {
          "method": "GET",
          "note": "interlock: RUNNING, canCommit true; writes stopped; no errors",
          "path": "/api/v1/progress",
          "target": "http://a:27182",
        },
        {
          "method": "GET",
          "note": "interlock: RUNNING, canCommit true; writes stopped; no errors",
          "path": "/api/v1/progress",
          "target": "http://b:27182",
        },
        {
          "body": {},
          "method": "POST",
          "path": "/api/v1/commit",
          "target": "http://a:27182",
        },
        {
          "body": {},
          "method": "POST",
          "path": "/api/v1/commit",
          "target": "http://b:27182",
        },
      ]
    `);
    for (const op of ["pause", "resume", "reverse"] as const) {
      const def = lifecycle(op);
      expect(def.title({})).toBe(op[0]!.toUpperCase() + op.slice(1));
      expect(def.body({ id: "x", [op]: {} } as unknown as Step)).toStrictEqual({});
      expect(def.body({ id: "x", commit: {} })).toBeUndefined();
      expect(def.plan({}, to())).toStrictEqual([
        { method: "GET", target: "http://a:27182", path: "/api/v1/progress", note: "interlock: state" },
        { method: "GET", target: "http://b:27182", path: "/api/v1/progress", note: "interlock: state" },
        { method: "POST", target: "http://a:27182", path: `/api/v1/${op}`, body: {} },
        { method: "POST", target: "http://b:27182", path: `/api/v1/${op}`, body: {} },
      ]);
    }
  });
});

describe("the details an operator reads, and a lost answer judged by each command's own effect", () => {
  it("[facts-init] every INITIALIZING instance is named; the wait is a decision that lets the step go on", async () => {
    const s = setup({
      sends: [{}],
      reads: [
        [{ state: "IDLE" }],
        [{ state: "INITIALIZING" }, { state: "IDLE" }],
        [{ state: "INITIALIZING" }, { state: "IDLE" }],
      ],
    });
    await start.run(s.ctx, body);
    expect(s.decisions().filter((d) => d.kind === "retry")).toMatchObject([
      {
        ok: true,
        reason: "sync1, sync2 INITIALIZING (not ready for start yet): reading progress until every instance is IDLE",
      },
    ]);
  });

  it("[facts-init] INITIALIZING beside an unreachable instance: not waited out, refused at once", async () => {
    const s = setup({ sends: [{}], reads: each({ state: "INITIALIZING" }, "error") });
    const err = await failure(start.run(s.ctx, body));
    expect(err.message).toMatch(/sync0 is INITIALIZING, sync1 is unreachable/);
    // (the progress reads' own retries are the only ones)
    expect(s.decisions().filter((d) => /not ready for start yet/.test(d.reason))).toEqual([]);
  });

  it("start, commit, pause: an answer lost after the request left, and progress then shows the command's effect: taken, never resent", async () => {
    const ready: Read = { state: "RUNNING", canCommit: true };
    const st = setup({
      sends: [{ 1: "reset" }],
      reads: [[{ state: "IDLE" }], [{ state: "IDLE" }, { state: "RUNNING" }]],
    });
    await start.run(st.ctx, body);
    expect(st.f.sent).toEqual([[0], [0]]);
    const co = setup({ sends: [{ 0: "reset" }], reads: [[ready, { state: "COMMITTING" }]] });
    await commit.run(co.ctx, {});
    expect(co.f.sent).toEqual([[0]]);
    expect(co.events.filter((e) => e.type === "commit.sent")).toHaveLength(1);
    const pa = setup({ sends: [{ 0: "reset" }], reads: [[{ state: "RUNNING" }, { state: "PAUSED" }]] });
    await lifecycle("pause").run(pa.ctx, {});
    expect(pa.f.sent).toEqual([[0]]);
  });

  // the run's end says "commit in doubt" of a commit sent and not accepted unless this is known
  // (src/run/runner.ts): a commit whose answers were lost ended "not committed" on a fleet holding it
  it("[facts-block] whether a commit that no instance accepted took no effect (every instance refused it, or it never left) or may hold", async () => {
    const ready: Read = { state: "RUNNING", canCommit: true };
    const refusedBy = async (sends: Script["sends"], reads: Read[][]) => {
      const s = setup({ sends, reads });
      await failure(commit.run(s.ctx, {}));
      expect(s.ctx.run.memory.commitAccepted).toBe(false);
      return s.ctx.run.memory.commitRefused;
    };
    expect(await refusedBy([{ 0: "refused", 1: "refused" }], each(ready, ready))).toBe(true);
    // never left, and progress unreadable: it cannot have taken effect there
    expect(
      await refusedBy(
        [{ 0: "not-sent", 1: "not-sent" }],
        [
          [ready, "error"],
          [ready, "error"],
        ],
      ),
    ).toBe(true);
    // one refused, one with no usable answer: that one may hold it (RUNNING proves nothing)
    expect(await refusedBy([{ 0: "refused", 1: "reset" }], each(ready, ready))).toBeUndefined();
    expect(await refusedBy([{ 0: "reset", 1: "reset" }], each(ready, ready))).toBeUndefined();
    // refused everywhere it went, after an earlier send that may hold (a split's completion, a
    // --from --only): that one is not refused by this (an outside review: "not committed")
    const again = setup({ sends: [{ 0: "refused", 1: "refused" }], reads: each(ready, ready) });
    Object.assign(again.ctx.run.memory, { commitSent: true, commitAccepted: false });
    await failure(commit.run(again.ctx, {}));
    expect(again.ctx.run.memory.commitRefused).toBeUndefined();
    // a split: accepted by the others
    const split = setup({ sends: [{ 1: "refused" }], reads: each(ready, ready, ready) });
    await failure(commit.run(split.ctx, {}));
    expect(split.ctx.run.memory.commitAccepted).toBe(true);
    expect(split.ctx.run.memory.commitRefused).toBeUndefined();
  });

  it("[design] a commit every instance refused: not accepted anywhere, the run knows it", async () => {
    const ready: Read = { state: "RUNNING", canCommit: true };
    const s = setup({ sends: [{ 0: "refused", 1: "refused" }], reads: each(ready, ready) });
    await failure(commit.run(s.ctx, {}));
    expect(s.ctx.run.memory.commitAccepted).toBe(false);
    expect(s.ctx.run.memory.commitSent).toBe(true);
  });

  it("every earlier error and every forgiven refusal is named", async () => {
    const ready: Read = { state: "RUNNING", canCommit: true };
    const errors = [
      { op: "pause", instance: "sync0", error: "A" },
      { op: "start", instance: "sync1", error: "B" },
    ];
    const s = setup({ sends: [{}], reads: each(ready, ready) }, { errors });
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.message).toBe("refused (no-errors): instances answered with errors earlier: pause: A; start: B");
    const targets = { only: [1, 2], why: "completing the commit", forgive: ["sync1", "sync2"] };
    const f = setup(
      { sends: [{}], reads: [[{ state: "COMMITTING" }], [ready], [ready]] },
      {
        targets,
        yes: true,
        errors: [
          { op: "commit", instance: "sync1", error: "X" },
          { op: "commit", instance: "sync2", error: "X" },
        ],
      },
    );
    await commit.run(f.ctx, {});
    expect(f.check("no-errors")[0]!.reason).toBe(
      "no instance answered with an error in this run, besides the commit refusals of sync1, sync2 being completed",
    );
    expect(f.questions).toEqual([]);
    expect(f.check("confirm")[0]!.reason).toBe(
      "answered yes by --yes: Send commit to sync1, sync2 only (completing the commit)?",
    );
    // `--only` forgives the instances it goes to (src/run/runner.ts): named only where a refusal
    // was forgiven, once each (one earlier journal's refusal and another's of the same instance)
    for (const [errors, reason] of [
      [[], "no instance answered with an error in this run"],
      [
        [
          { op: "commit", instance: "sync2", error: "X" },
          { op: "commit", instance: "sync2", error: "Y" },
        ],
        "no instance answered with an error in this run, besides the commit refusals of sync2 being completed",
      ],
    ] as const) {
      const g = setup(
        { sends: [{}], reads: [[{ state: "COMMITTING" }], [ready], [ready]] },
        { targets, yes: true, errors: [...errors] },
      );
      await commit.run(g.ctx, {});
      expect(g.check("no-errors")[0]!.reason).toBe(reason);
    }
  });

  it("a split's hint names every refuser", async () => {
    const ready: Read = { state: "RUNNING", canCommit: true };
    const s = setup({ sends: [{ 0: "refused", 1: "refused" }], reads: each(ready, ready, ready) });
    const err = await failure(commit.run(s.ctx, {}));
    expect(err.beforeResume).toBe(/--resume/.test(err.hint ?? ""));
    expect(err.hint).toMatch(/^Find out why sync0, sync1 refused and fix it/);
  });

  it("a targeted command names every other instance; its refusals say what to do", async () => {
    const s = setup(
      { sends: [{}], reads: each({ state: "PAUSED" }, { state: "RUNNING" }, { state: "PAUSED" }) },
      { targets: { only: [1], why: "w" }, yes: true },
    );
    await lifecycle("pause").run(s.ctx, {});
    expect(s.check("fleet-state")[0]!.reason).toBe(
      "pause to sync1 only (w); the others are sync0 PAUSED, sync2 PAUSED",
    );
    // a start's refusal is said at a targeted start alone (it counts at the commit)
    const afterStart = setup(
      { sends: [{}], reads: each({ state: "PAUSED" }, { state: "RUNNING" }) },
      { targets: { only: [1], why: "w" }, yes: true, errors: [{ op: "start", instance: "sync1", error: "E" }] },
    );
    await lifecycle("pause").run(afterStart.ctx, {});
    expect(afterStart.check("confirm")[0]!.reason).toBe("answered yes by --yes: Send pause to sync1 only (w)?");
    const none = setup(
      { sends: [{}], reads: each({ state: "PAUSED" }, { state: "RUNNING" }) },
      { targets: { only: [1], why: "w" } },
    );
    expect((await failure(lifecycle("pause").run(none.ctx, {}))).hint).toBe(
      "Run it in a terminal, or pass --yes to confirm it.",
    );
    const no = setup(
      { sends: [{}], reads: each({ state: "PAUSED" }, { state: "RUNNING" }) },
      { targets: { only: [1], why: "w" }, prompt: () => false },
    );
    expect((await failure(lifecycle("pause").run(no.ctx, {}))).hint).toBe("Nothing was sent.");
  });

  it("start's plan names every part that depends on the service version", () => {
    const b = {
      source: "cluster0",
      destination: "cluster1",
      buildIndexes: "never" as const,
      verification: { enabled: true },
    };
    const plan = start.plan(b, {
      instances: ["http://a:27182"],
      verifier: "http://v:27020",
      redact: (t: string) => t,
      serviceVersion: "1.8.0",
    });
    expect(plan[1]!.note).toMatch(/^service 1\.8\.0: .+; .+$/);
  });
});

describe("a command waiting for an instance's progress says nothing has been sent yet", () => {
  const cases: [string, Read, (ctx: StepContext) => Promise<void>][] = [
    ["start", { state: "IDLE" }, (ctx) => start.run(ctx, body)],
    ["commit", { state: "RUNNING", canCommit: true }, (ctx) => commit.run(ctx, {})],
    ["pause", { state: "RUNNING" }, (ctx) => lifecycle("pause").run(ctx, {})],
  ];
  it.each(cases)("%s: each retry before it names the command and the instance it waits for", async (op, ok, run) => {
    const s = setup({ sends: [{}], reads: [[ok], ["error", ok]] });
    await run(s.ctx);
    const retries = s.decisions().filter((d) => d.kind === "retry");
    expect(retries).toHaveLength(1);
    expect(retries[0]!.reason).toContain(`; nothing has been sent yet: ${op} waits for sync1 so that its interlocks`);
    expect(s.f.sent).toEqual([[0], [0]]);
  });

  it("start: also while it waits out INITIALIZING", async () => {
    const s = setup({
      sends: [{}],
      reads: [[{ state: "INITIALIZING" }, "error", { state: "IDLE" }], [{ state: "IDLE" }]],
    });
    await start.run(s.ctx, body);
    const retries = s.decisions().filter((d) => d.kind === "retry" && d.reason.startsWith("progress failing"));
    expect(retries).toHaveLength(1);
    expect(retries[0]!.reason).toContain("; nothing has been sent yet: start waits for sync0 so that its interlocks");
  });
});
