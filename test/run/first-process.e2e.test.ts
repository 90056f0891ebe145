/**
 * Issue 36, point 5: `canWrite` of the first process only. The cutover page (mongodb/docs
 * content/mongosync/current/source/reference/cutover-process.txt): "If you are running multiple
 * mongosync instances, only check that canWrite is true on the first mongosync process. The
 * canWrite status of any subsequent mongosync processes is not valid." Service facts, "Not
 * published": the first is the instance the runbook lists first and declares (`startedFirst`);
 * otherwise the window closes on COMMITTED of every instance; "Never wait on the other instances'
 * `canWrite`: it is not valid and may never turn true". The simulator makes it so (only its
 * instance 0, the first process started, ever reports canWrite true), so a wait on another
 * instance's value fails here, in a test, and not in a window.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import { WindowTracker } from "../../src/fleet/window.js";
import { traitsOf } from "../../src/steps/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openJournal } from "../../src/journal/index.js";
import { CutoverFold } from "../../src/model/fold.js";
import { runnerVerdict } from "../../src/watch/runner.js";
import { formatStatus } from "../../src/cli/status.js";
import { MASKED_VAR_WORDS, STOPPED_IN_COMMIT_NOTE, STOPPED_IN_COMMIT_RESUME } from "../../src/next-run.js";
import { readStatus } from "../../src/run/status.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { UiModel } from "../../src/ui/model.js";
import { DRAINED, READY, START, cli, runYaml, sim, tempDir, writeRunbook } from "../support/run.js";

let sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

const of = <K extends RunEvent["type"]>(events: readonly RunEvent[], type: K): RunEventOf<K>[] =>
  events.filter((e): e is RunEventOf<K> => e.type === type);

const STOP = "  - { id: stop-writes, stopWrites: { use: sim-writes } }\n";
const COMMIT = "  - { id: commit, commit: {} }\n";
const WRITABLE = "  - { id: writable, waitFor: { canWrite: true, timeout: 3s } }\n";
const COMMITTED = "  - { id: committed, waitFor: { state: COMMITTED } }\n";
/** A cutover whose verification is its own: the check started early, writesOff after COMMITTED (before it the destination's index metadata differs by design). */
const VERIFYING =
  START +
  READY +
  "  - { id: check, startVerification: {} }\n" +
  STOP +
  DRAINED +
  COMMIT +
  WRITABLE +
  COMMITTED +
  "  - { id: verify, verify: { timeout: 20s } }\n";

/** A runbook for the simulator's instances in `order`, the first of them declared `startedFirst` when asked. */
function runbook(
  s: Simulator,
  steps: string,
  /** `version: null`: the runbook declares none. `verifier`: the simulator's verifier is the runbook's. */
  opts: { order?: number[]; declare?: boolean; version?: string | null; verifier?: boolean } = {},
): string {
  const order = opts.order ?? s.instances.map((i) => i.index);
  const n = order.length;
  return `runbook: 1
name: first-process
${opts.version === null ? "" : `serviceVersion: "${opts.version ?? "1.22.0"}"\n`}clusters:
  cluster0: { topology: sharded, shards: ${n}, serverVersion: "7.0" }
  cluster1: { topology: sharded, shards: ${n}, serverVersion: "7.0" }
instances:
${order.map((i, k) => `  - { url: "${s.instances[i]!.url}", name: sync${i}${k === 0 && opts.declare ? ", startedFirst: true" : ""} }`).join("\n")}
${opts.verifier ? `verifier: "${s.verifierUrl}"\n` : ""}defaults: { pollInterval: 50ms, timeout: 20s, requestTimeout: 2s, retry: { giveUpAfter: 15s } }
steps:
${steps}`;
}

async function fleet(): Promise<Simulator> {
  const s = await sim({ instances: 3, serviceVersion: "1.22.0" });
  sims.push(s);
  return s;
}

describe("canWrite of the first process only", () => {
  it("the simulator: only the first process ever says canWrite true; the others' stays false, COMMITTED included", async () => {
    const s = await fleet();
    const { result } = await runYaml(runbook(s, START + READY + STOP + DRAINED + COMMIT + COMMITTED));
    expect(result.exitCode, result.message).toBe(0);
    const answers = await Promise.all(
      s.instances.map(
        async (i) =>
          (
            (await (await fetch(`${i.url}/api/v1/progress`)).json()) as {
              progress: { state: string; canWrite: unknown };
            }
          ).progress,
      ),
    );
    expect(answers.map((p) => [p.state, p.canWrite])).toEqual([
      ["COMMITTED", true],
      ["COMMITTED", false],
      ["COMMITTED", false],
    ]);
  });

  it("declared: the wait reads the first process alone, and the window closes on its canWrite", async () => {
    const s = await fleet();
    const { result, events } = await runYaml(
      runbook(s, START + READY + STOP + DRAINED + COMMIT + WRITABLE + COMMITTED, { declare: true }),
    );
    expect(result.exitCode, result.message).toBe(0);
    const started = of(events, "run.started")[0]!;
    expect(started.destinationWrites).toEqual({ on: "canWrite", instance: 0 });
    expect(started.canWriteFrom).toBe(0);
    const closed = of(events, "window.closed");
    expect(closed.map((e) => e.reason)).toEqual(["canWrite"]);
    // the read that closed it: the first process's, with canWrite true (the others said false then)
    const shown = of(events, "progress.sampled").filter((e) => e.seq < closed[0]!.seq && e.progress.canWrite === true);
    expect(new Set(shown.map((e) => e.instance.index))).toEqual(new Set([0]));
    // the live view shows the first process's canWrite alone
    const ui = new UiModel();
    for (const e of events) ui.apply(e);
    expect(ui.instanceLines().map((l) => [l.split(/\s+/)[0], l.includes("canWrite")])).toEqual([
      ["sync0", true],
      ["sync1", false],
      ["sync2", false],
    ]);
  });

  // the page calls the others' canWrite "not valid", and says no more: it may as well be true too
  // early (an outside conformance read: the simulator only ever had it false, which shows a client
  // that waits on it, not one that believes it). `model.otherCanWriteAfter: 0`: true from the commit on
  for (const declare of [true, false])
    it(`the others' canWrite true from the commit on, before the first process's: ${declare ? "declared, the window closes on the first process's alone" : "not declared, on every instance COMMITTED"}`, async () => {
      const s = await sim({ instances: 3, serviceVersion: "1.22.0", model: { otherCanWriteAfter: 0 } });
      sims.push(s);
      const { result, events } = await runYaml(
        runbook(s, START + READY + STOP + DRAINED + COMMIT + (declare ? WRITABLE : "") + COMMITTED, { declare }),
      );
      expect(result.exitCode, result.message).toBe(0);
      const closed = of(events, "window.closed");
      expect(closed.map((e) => e.reason)).toEqual([declare ? "canWrite" : "committed"]);
      const before = of(events, "progress.sampled").filter((e) => e.seq < closed[0]!.seq);
      // the others said canWrite true while the first process did not: that never closed it
      const firstTrue = before.find((e) => e.instance.index === 0 && e.progress.canWrite === true);
      const last = new Map<number, string>();
      for (const e of before) last.set(e.instance.index, e.progress.state);
      if (declare) expect(firstTrue, "the first process's canWrite true closed it").toBeDefined();
      else expect([...last.values()]).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
      // the model: the others' value is true, as it turned at the commit
      const answers = await Promise.all(
        s.instances.map(
          async (i) =>
            ((await (await fetch(`${i.url}/api/v1/progress`)).json()) as { progress: { canWrite: unknown } }).progress
              .canWrite,
        ),
      );
      expect(answers).toEqual([true, true, true]);
    });

  it("`syncbook status` gives the first process's canWrite, and no other instance's (none when none is declared)", async () => {
    const s = await fleet();
    const yaml = runbook(s, START + READY + STOP + DRAINED + COMMIT + COMMITTED, { declare: true });
    expect((await runYaml(yaml)).result.exitCode).toBe(0);
    const dir = tempDir();
    try {
      const status = async (text: string) =>
        (await readStatus(await parseRunbook(text, `${dir}/rb.yaml`, { env: {} }), { journalDir: `${dir}/.syncbook` }))
          .instances;
      expect((await status(yaml)).map((i) => [i.state, i.canWrite])).toEqual([
        ["COMMITTED", true],
        ["COMMITTED", undefined],
        ["COMMITTED", undefined],
      ]);
      const undeclared = yaml.replace(", startedFirst: true", "");
      expect((await status(undeclared)).map((i) => i.canWrite)).toEqual([undefined, undefined, undefined]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("declared on the wrong instance (one that is not the first process): the wait never ends, it times out", async () => {
    // the operator started sync0 first but the runbook lists sync2 first and declares it: its canWrite is not valid
    const s = await fleet();
    const { result, events } = await runYaml(
      runbook(s, START + READY + STOP + DRAINED + COMMIT + WRITABLE + COMMITTED, { order: [2, 1, 0], declare: true }),
    );
    expect(result.exitCode).toBe(1);
    const failed = of(events, "step.finished").find((e) => e.id === "writable");
    expect(failed).toMatchObject({ outcome: "failed" });
    expect(failed?.error).toMatch(/timed out/);
    // every instance was COMMITTED meanwhile: the wait was on a value that never turns true
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
  });

  it("not declared: a canWrite wait is refused at once (no value may be read), after commit, with the way out", async () => {
    const s = await fleet();
    const { result, events } = await runYaml(
      runbook(s, START + READY + STOP + DRAINED + COMMIT + WRITABLE + COMMITTED),
    );
    expect(result.exitCode).toBe(1);
    const failed = of(events, "step.finished").find((e) => e.id === "writable")!;
    expect(failed.outcome).toBe("failed");
    expect(failed.error).toBe(
      "this condition reads canWrite, but only the first mongosync process's canWrite is valid (the others' \"is not valid\"), and none of the 3 instances is declared the first process the operator starts (`startedFirst: true` on the instance listed first)",
    );
    // refused, not waited out: far below its 3 s (×50 in simulated time) limit
    expect(failed.durationMs).toBeLessThan(1000);
    expect(result.hint ?? "").toMatch(/startedFirst: true|state: COMMITTED/);
  });

  it("not declared: the window closes when every instance is COMMITTED, not on anyone's canWrite", async () => {
    const s = await fleet();
    const { result, events } = await runYaml(runbook(s, START + READY + STOP + DRAINED + COMMIT + COMMITTED));
    expect(result.exitCode, result.message).toBe(0);
    expect(of(events, "run.started")[0]!.destinationWrites).toMatchObject({ on: "committed" });
    const closed = of(events, "window.closed");
    expect(closed.map((e) => e.reason)).toEqual(["committed"]);
    // by then every instance had answered COMMITTED
    const seen = new Map<number, string>();
    for (const e of of(events, "progress.sampled").filter((x) => x.seq < closed[0]!.seq))
      seen.set(e.instance.index, e.progress.state);
    expect([...seen.values()]).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    // the report's fold says the same
    const w = new WindowTracker(traitsOf);
    for (const e of events) w.apply(e);
    expect(w.current()).toMatchObject({ closedBy: "committed", open: false });
  });
});

/**
 * What status and the watch page say after the writes-on hook refused for an instance stopped
 * during the commit: it, and no plain `--resume`, which is refused again (an adversarial run
 * followed status's offer into the same refusal). The run's own events, journaled as its runner
 * journals them, read back by `status` and folded for the watch page.
 */
async function saidAfterRefusal(
  s: Simulator,
  steps: string,
  events: readonly RunEvent[],
  opts: { verifier?: boolean } = {},
): Promise<void> {
  const dir = tempDir();
  try {
    const started = of(events, "run.started")[0]!;
    const j = openJournal({ dir: join(dir, ".syncbook"), runbookName: started.runbook, runbookHash: started.hash });
    for (const e of events) j.write(e);
    j.close();
    const yaml = runbook(s, START + READY + STOP + DRAINED + COMMIT + WRITABLE + steps, { declare: true, ...opts });
    const st = await readStatus(await parseRunbook(yaml, join(dir, "rb.yaml"), { env: {} }), {
      journalDir: join(dir, ".syncbook"),
    });
    expect(st.journal?.stoppedInCommit).toMatchObject({
      instance: "sync0",
      how: "refused",
      refused: true,
      refusesAhead: true,
    });
    expect(st.journal?.next?.runs.map((r) => r.args)).toEqual(["--new-cutover", STOPPED_IN_COMMIT_RESUME.args]);
    expect(st.journal?.next?.notes?.[0]).toBe(STOPPED_IN_COMMIT_NOTE);
    const said = formatStatus(st).join("\n");
    expect(said).toMatch(
      / {2}commit: sync0 refused its progress read \(no process listening\) at [^,]*, during the commit and before the destination took writes: the documentation says .*the entire migration must be restarted/,
    );
    expect(said).not.toMatch(/--resume\n/);
    // the watch page, folded from the same events: the state left says it, the way on is the forced one
    const fold = new CutoverFold({ traits: traitsOf });
    for (const e of events) fold.apply(e);
    const model = fold.view();
    expect(model.window?.stoppedInCommit).toMatchObject({ instance: "sync0", how: "refused" });
    // the page of a runner that is gone, its runbook named
    const pageOf = (m: typeof model, more: Partial<Parameters<typeof runnerVerdict>[0]> = {}) =>
      runnerVerdict({
        model: m,
        lock: undefined,
        now: Date.now(),
        host: "h",
        isAlive: () => false,
        runbook: "rb.yaml",
        ...more,
      });
    const v = pageOf(model);
    expect(v.left.some((l) => l.startsWith("sync0 refused its progress read"))).toBe(true);
    expect(v.next).toMatch(/^syncbook run rb\.yaml --new-cutover /);
    expect(v.next).toContain(`or syncbook run rb.yaml ${STOPPED_IN_COMMIT_RESUME.args}`);
    expect(v.next).toContain(STOPPED_IN_COMMIT_NOTE);
    // a --var given with a secret: the restart is a new cutover, which checks no value against the
    // cutover's, so the page names every one its steps read from the first, a secret one masked;
    // without the runbook it says the one it cannot name (a review: left out, the default was read)
    const secret = { ...model, cutoverValues: { vars: { pw: "***" }, given: ["pw"] } };
    const asked: string[] = [];
    const kept = pageOf(secret, {
      goOnVars: (_known, from) => {
        asked.push(from);
        return { vars: ["pw=***"], note: MASKED_VAR_WORDS };
      },
    });
    expect(asked).toEqual([model.steps[0]!.id]);
    expect(kept.next).toMatch(/^syncbook run rb\.yaml --new-cutover --var 'pw=\*\*\*' {3}\(/);
    expect(kept.next).toContain(`; ${MASKED_VAR_WORDS}); or syncbook run rb.yaml ${STOPPED_IN_COMMIT_RESUME.args}`);
    const bare = pageOf(secret);
    expect(bare.next).toMatch(/^syncbook run rb\.yaml --new-cutover {3}\(/);
    expect(bare.next).toContain("; add --var pw as its runs were given it: it holds a secret, not shown); or");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the first process down inside the write-stop window", () => {
  // what an operator meets when the one instance whose canWrite counts stops answering after the
  // commit: the window must stay open (no other instance's canWrite stands in), the wait must keep
  // reading it and say so, and the application must not be told to write until its canWrite is read
  // the first process down is a process stopped during the commit: "If mongosync stops during
  // commit, before the /progress endpoint reports canWrite: true, you must restart the entire
  // migration to ensure that it's verified" (docs-cluster-to-cluster-sync,
  // source/includes/fact-verification.rst; src/fleet/window.ts `StoppedInCommit`): the write-on hook
  // is refused (an adversarial run: it ran, and the run ended ok), unless forced
  for (const forced of [false, true])
    it(`after the commit, until it is back: the wait says every failed read, the window stays open and closes on its canWrite once it answers; the write-on hook ${forced ? "runs only then, under --force=stopped-in-commit" : "is refused: the process stopped during the commit (stopped-in-commit, exit 3)"}`, async () => {
      const s = await fleet();
      const APP_ON = "  - { id: app-on, hook: { use: sim-writes, with: { enabled: true }, writesOn: true } }\n";
      let downAt = 0;
      let upAt = 0;
      let failedReads = 0;
      let down: Promise<void> | undefined;
      let up: Promise<void> | undefined;
      const { result, events } = await runYaml(
        runbook(s, START + READY + STOP + DRAINED + COMMIT + WRITABLE + APP_ON, { declare: true }),
        {
          ...(forced ? { force: ["stopped-in-commit"] } : {}),
          onEvent: (e) => {
            // the simulated clock stops as the commit leaves (COMMITTING then lasts; canWrite stays false)
            if (e.type === "request.sent" && e.path === "/api/v1/commit") s.control.setTimeScale(0);
            if (e.type === "step.started" && e.id === "writable") {
              downAt = Date.now();
              down = s.control.down(0);
            }
            if (
              e.type === "poll.failed" &&
              e.instance?.index === 0 &&
              downAt > 0 &&
              upAt === 0 &&
              ++failedReads === 3
            ) {
              upAt = Date.now();
              up = down!.then(() => s.control.up(0)).then(() => s.control.setTimeScale(50));
            }
          },
        },
      );
      await up;
      expect(result.exitCode, result.message).toBe(forced ? 0 : 3);
      expect(failedReads, "the wait kept reading the first process while it was down").toBeGreaterThanOrEqual(3);
      // each failed read was said, with the instance and what failed
      const failed = of(events, "poll.failed").filter((e) => e.instance?.index === 0 && e.at >= downAt);
      expect(failed.length).toBeGreaterThanOrEqual(3);
      expect(failed[0]!.error).toMatch(/ECONNREFUSED|ECONNRESET|other side closed/);
      // and the wait's status named it, for the live view and the watch page
      const said = of(events, "wait.status").filter((e) => e.id === "writable" && !e.met);
      expect(
        said.some((e) => e.failing.some((f) => f.instance === "sync0" && f.condition === "progress answered")),
      ).toBe(true);
      // the window closed on the first process's canWrite, read after it was back, and only once
      const closed = of(events, "window.closed");
      expect(closed.map((e) => e.reason)).toEqual(["canWrite"]);
      expect(closed[0]!.seenAt).toBeGreaterThanOrEqual(upAt);
      // (the simulator says canWrite true on the first process alone: that no other instance's value
      // stands in is the window's reason and its time above, not these samples)
      const closing = of(events, "progress.sampled").filter((e) => e.progress.canWrite === true);
      expect(closing.length).toBeGreaterThan(0);
      expect(closing.every((e) => e.at >= upAt)).toBe(true);
      expect(of(events, "step.finished").find((e) => e.id === "writable")).toMatchObject({ outcome: "ok" });
      const decided = of(events, "decision").filter((e) => e.check === "stopped-in-commit" && e.id === "app-on");
      expect(decided).toHaveLength(1);
      expect(decided[0]!.reason).toMatch(
        /^sync0 refused its progress read \(no process listening\) at .*, during the commit and before the destination took writes: the documentation says that if mongosync stops during commit before canWrite is true, the entire migration must be restarted/,
      );
      // said at once, as a warning, before any hook could be refused (a runbook without a writes-on
      // hook ended "ok · committed" without a word of it), once
      const warned = of(events, "log").filter(
        (e) => e.level === "warn" && e.message.startsWith("sync0 refused its progress read"),
      );
      expect(warned).toHaveLength(1);
      expect(decided[0]!.reason.startsWith(warned[0]!.message)).toBe(true);
      expect(warned[0]!.seq).toBeLessThan(decided[0]!.seq);
      const hookRan = of(events, "hook.started").some((e) => e.id === "app-on");
      if (!forced) {
        // refused before the hook: writes stay stopped, and the run says why and what to do
        expect(decided[0]).toMatchObject({ kind: "interlock", ok: false });
        expect(hookRan).toBe(false);
        expect(result.refused).toBe("stopped-in-commit");
        expect(result.hint).toContain("--resume --force=stopped-in-commit");
        await saidAfterRefusal(s, APP_ON, events);
        return;
      }
      expect(decided[0]).toMatchObject({ kind: "force", ok: true });
      // the application was told to write only after the window closed
      const seqOf = (p: (e: RunEvent) => boolean): number => events.findIndex(p);
      const hookStarted = seqOf((e) => e.type === "step.started" && e.id === "app-on");
      expect(hookStarted).toBeGreaterThan(seqOf((e) => e.type === "window.closed"));
      expect(hookRan).toBe(true);
    });
});

/**
 * sync1 restarts during the commit: the simulated clock stops as the commit leaves (COMMITTING
 * lasts), and once sync1 is read after it (the canWrite wait's first read of the whole fleet; from
 * then on that wait reads the first process alone) it goes down and up, and the clock goes on.
 */
function sync1RestartsInCommit(s: Simulator): {
  onEvent: (e: RunEvent) => void;
  done: () => Promise<void> | undefined;
  commitSentAt: () => number;
} {
  let restarted: Promise<void> | undefined;
  let commitSentAt = 0;
  return {
    onEvent: (e) => {
      if (e.type === "request.sent" && e.path === "/api/v1/commit") {
        s.control.setTimeScale(0);
        commitSentAt = e.at;
      }
      if (e.type === "progress.sampled" && e.instance.index === 1 && commitSentAt > 0 && !restarted)
        restarted = s.control
          .down(1)
          .then(() => s.control.up(1))
          .then(() => s.control.setTimeScale(50));
    },
    done: () => restarted,
    commitSentAt: () => commitSentAt,
  };
}

// helper 96's false positive, and the gap behind it: the canWrite wait reads the first process
// alone, so another process that restarted during the commit was never read before the writes-on
// hook (and one restarted after COMMITTED was later counted from its read in the commit). The wait
// now reads the others once as it ends (src/steps/wait-for.ts `readTheOthers`).
describe("another process restarted during the commit, while the wait read the first alone", () => {
  const APP_ON = "  - { id: app-on, hook: { use: sim-writes, with: { enabled: true }, writesOn: true } }\n";
  it("the read of the others as the wait ends sees it, and the write-on hook is refused (stopped-in-commit, exit 3)", async () => {
    const s = await fleet();
    const restart = sync1RestartsInCommit(s);
    const { result, events } = await runYaml(
      runbook(s, START + READY + STOP + DRAINED + COMMIT + WRITABLE + APP_ON, { declare: true }),
      { onEvent: restart.onEvent },
    );
    await restart.done();
    const commitSentAt = restart.commitSentAt();
    expect(result.exitCode, result.message).toBe(3);
    expect(result.refused).toBe("stopped-in-commit");
    // the wait read the first process alone once the fleet was read as it began: sync1 was read
    // again only as the wait ended, after the window closed
    // by the stream's order (seq), not the clock: a loopback read can answer within the same ms
    const closed = of(events, "window.closed")[0]!;
    const waitEnd = of(events, "step.finished").find((e) => e.id === "writable")!;
    expect(waitEnd.outcome).toBe("ok");
    const sync1 = of(events, "progress.sampled").filter((e) => e.instance.index === 1 && e.at >= commitSentAt);
    expect(sync1.filter((e) => e.seq > closed.seq).length, "sync1 read once as the wait ended").toBe(1);
    expect(sync1.at(-1)!.seq).toBeLessThan(waitEnd.seq);
    const decided = of(events, "decision").filter((e) => e.check === "stopped-in-commit" && e.id === "app-on");
    expect(decided).toMatchObject([{ kind: "interlock", ok: false }]);
    expect(decided[0]!.reason).toMatch(/^sync1 (reported INITIALIZING|reported fewer events applied)/);
    expect(commitSentAt).toBeGreaterThan(0);
    expect(of(events, "hook.started").some((e) => e.id === "app-on")).toBe(false);
    expect(s.control.state().writes.enabled, "the application was not told to write").toBe(false);
  });

  it("no restart: the others answer as the wait ends, and the write-on hook runs", async () => {
    const s = await fleet();
    const { result, events } = await runYaml(
      runbook(s, START + READY + STOP + DRAINED + COMMIT + WRITABLE + APP_ON, { declare: true }),
    );
    expect(result.exitCode, result.message).toBe(0);
    const waitEnd = of(events, "step.finished").find((e) => e.id === "writable")!;
    // by the stream's order (seq), not the clock: CI once read sync1 within the ms the window closed
    const closed = of(events, "window.closed")[0]!;
    const others = of(events, "progress.sampled").filter(
      (e) => e.instance.index !== 0 && e.seq > closed.seq && e.seq < waitEnd.seq,
    );
    expect(new Set(others.map((e) => e.instance.index))).toEqual(new Set([1, 2]));
    expect(of(events, "decision").some((e) => e.check === "stopped-in-commit")).toBe(false);
    expect(of(events, "hook.started").some((e) => e.id === "app-on")).toBe(true);
    expect(s.control.state().writes.enabled).toBe(true);
  });
});

// a runbook without a writes-on hook (the example runbooks' shape: commit, canWrite, verify): the
// stop in the commit refused nothing, the verify waited for its result and passed, and the run
// ended "ok", exit 0; only the verdict said "not verified". The verify step asks the interlock too
// (src/steps/kit/stopped-in-commit.ts): "you must restart the entire migration to ensure that it's
// verified" (docs-cluster-to-cluster-sync source/includes/fact-verification.rst)
describe("another process restarted during the commit, and the runbook verifies after it", () => {
  for (const forced of [false, true])
    it(`the verify step is ${forced ? "forced past the refusal: it runs, and the run ends not verified" : "refused before it sends the verifier anything (stopped-in-commit, exit 3), and status offers the restart"}`, async () => {
      const s = await fleet();
      const restart = sync1RestartsInCommit(s);
      // COMMITTED before writesOff: before it the destination's index metadata differs by design
      const yaml = runbook(s, VERIFYING, {
        declare: true,
        verifier: true,
      });
      const { result, events } = await runYaml(yaml, {
        ...(forced ? { force: ["stopped-in-commit"] } : {}),
        onEvent: restart.onEvent,
      });
      await restart.done();
      const decided = of(events, "decision").filter((e) => e.check === "stopped-in-commit" && e.id === "verify");
      expect(decided.length, "the verify step asked the interlock").toBeGreaterThan(0);
      expect(decided[0]!.reason).toMatch(/^sync1 (reported INITIALIZING|reported fewer events applied)/);
      const writesOff = of(events, "request.sent").filter((e) => e.path === "/api/v1/writesOff");
      expect(result.verified).toBe(false);
      if (!("unverified" in result)) throw new Error("a verdict without its why");
      expect(result.unverified).toMatch(/^sync1 stopped during the commit before the destination took writes/);
      if (forced) {
        expect(result.exitCode, result.message).toBe(0);
        expect(decided.every((d) => d.kind === "force" && d.ok)).toBe(true);
        expect(writesOff, "forced, the verify ran").toHaveLength(1);
        expect(of(events, "step.finished").find((e) => e.id === "verify")).toMatchObject({ outcome: "ok" });
        // status says the run's end as the run did: not verified (a review saw "· verified" beside
        // "verification: not verified")
        const dir = tempDir();
        try {
          const started = of(events, "run.started")[0]!;
          const j = openJournal({
            dir: join(dir, ".syncbook"),
            runbookName: started.runbook,
            runbookHash: started.hash,
          });
          for (const e of events) j.write(e);
          j.close();
          const st = await readStatus(await parseRunbook(yaml, join(dir, "rb.yaml"), { env: {} }), {
            journalDir: join(dir, ".syncbook"),
          });
          expect(st.journal?.finished).toMatchObject({ outcome: "ok", committed: true, verified: false });
          const said = formatStatus(st).join("\n");
          expect(said).toMatch(/run ended ok \(committed\) · not verified/);
          expect(said).not.toMatch(/· verified/);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
        return;
      }
      expect(result.exitCode, result.message).toBe(3);
      expect(result.refused).toBe("stopped-in-commit");
      expect(result.failedStep).toBe("verify");
      expect(decided).toMatchObject([{ kind: "interlock", ok: false }]);
      expect(writesOff, "nothing was sent to the verifier").toHaveLength(0);
      expect(result.hint).toMatch(/^This step took no verification result for this cutover, and the commit holds/);
      expect(result.hint).toContain("--new-cutover");
      // status, from the run's journal: the restart, not a plain --resume that would be refused again
      const dir = tempDir();
      try {
        const started = of(events, "run.started")[0]!;
        const j = openJournal({ dir: join(dir, ".syncbook"), runbookName: started.runbook, runbookHash: started.hash });
        for (const e of events) j.write(e);
        j.close();
        const st = await readStatus(await parseRunbook(yaml, join(dir, "rb.yaml"), { env: {} }), {
          journalDir: join(dir, ".syncbook"),
        });
        expect(st.journal?.stoppedInCommit).toMatchObject({ instance: "sync1", refused: true, refusesAhead: true });
        expect(st.journal?.next?.runs.map((r) => r.args)).toEqual(["--new-cutover", STOPPED_IN_COMMIT_RESUME.args]);
        // the watch page, folded from the same events, offers the same
        const fold = new CutoverFold({ traits: traitsOf });
        for (const e of events) fold.apply(e);
        const v = runnerVerdict({
          model: fold.view(),
          lock: undefined,
          now: Date.now(),
          host: "h",
          isAlive: () => false,
          runbook: "rb.yaml",
        });
        expect(v.next).toMatch(/^syncbook run rb\.yaml --new-cutover /);
        expect(v.next).toContain(STOPPED_IN_COMMIT_NOTE);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
});

// the last note's "read, not tried": a --from verify after the refusal continues the cutover, and
// its window is folded from the cutover's other journals (src/cli/run.ts `cutoverRunsBefore`), so
// the verify meets the same refusal: nothing sent to the verifier, exit 3, the restart offered
describe("another process restarted during the commit: the CLI's --from verify and --resume after the refusal", () => {
  it("each is refused again before it sends the verifier anything (stopped-in-commit, exit 3)", async () => {
    const s = await fleet();
    const restart = sync1RestartsInCommit(s);
    const yaml = runbook(s, VERIFYING, { declare: true, verifier: true });
    const { result, events } = await runYaml(yaml, { onEvent: restart.onEvent });
    await restart.done();
    expect(result.refused, result.message).toBe("stopped-in-commit");
    const dir = tempDir();
    try {
      writeRunbook(dir, yaml);
      const started = of(events, "run.started")[0]!;
      // where the CLI keeps the runbook's journals (src/journal/format.ts `journalDir`)
      const j = openJournal({
        dir: join(dir, ".syncbook", started.runbook),
        runbookName: started.runbook,
        runbookHash: started.hash,
      });
      for (const e of events) j.write(e);
      j.close();
      const writesOff = () => s.control.counts().verifier["POST /api/v1/writesOff"] ?? 0;
      for (const way of [["--from", "verify"], ["--resume"]]) {
        const out = await cli(["run", "rb.yaml", ...way, "--renderer", "simple"], { cwd: dir });
        expect(out.code, `${way.join(" ")}\n${out.all}`).toBe(3);
        expect(out.all).toMatch(/refused \(stopped-in-commit\): sync1 /);
        expect(out.all).toContain("syncbook run rb.yaml --new-cutover");
        expect(out.all).not.toMatch(/Error:|\n\s+at /);
        expect(writesOff(), `${way.join(" ")}: nothing was sent to the verifier`).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// a review: after the forced verify passed and a later step failed, nothing ahead refuses; the
// watch page offered the restart and the forced resume (and "refused again at the writes-on hook or
// verify step") to a runbook with no writes-on hook, where a plain --resume went on
describe("forced past the stop in the commit, then a later step failed", () => {
  it("status and the watch page offer a plain --resume: no step ahead asks the interlock", async () => {
    const s = await fleet();
    const restart = sync1RestartsInCommit(s);
    const FAILS = "  - { id: paused, waitFor: { state: PAUSED, timeout: 300ms } }\n";
    const yaml = runbook(s, VERIFYING + FAILS, { declare: true, verifier: true });
    const { result, events } = await runYaml(yaml, {
      force: ["stopped-in-commit"],
      onEvent: restart.onEvent,
    });
    await restart.done();
    expect(result.exitCode, result.message).toBe(1);
    expect(result.failedStep, result.message).toBe("paused");
    expect(of(events, "decision").some((d) => d.check === "stopped-in-commit" && d.kind === "force")).toBe(true);
    const dir = tempDir();
    try {
      const started = of(events, "run.started")[0]!;
      const j = openJournal({ dir: join(dir, ".syncbook"), runbookName: started.runbook, runbookHash: started.hash });
      for (const e of events) j.write(e);
      j.close();
      const st = await readStatus(await parseRunbook(yaml, join(dir, "rb.yaml"), { env: {} }), {
        journalDir: join(dir, ".syncbook"),
      });
      expect(st.journal?.stoppedInCommit).toMatchObject({ instance: "sync1", refused: true });
      expect(st.journal?.stoppedInCommit?.refusesAhead).toBeUndefined();
      expect(st.journal?.next?.runs.map((r) => r.args)).toEqual(["--resume"]);
      expect(st.journal?.next?.runs[0]!.does).not.toContain("refuses");
      const fold = new CutoverFold({ traits: traitsOf });
      for (const e of events) fold.apply(e);
      const v = runnerVerdict({
        model: fold.view(),
        lock: undefined,
        now: Date.now(),
        host: "h",
        isAlive: () => false,
        runbook: "rb.yaml",
      });
      expect(v.next).toBe("syncbook run rb.yaml --resume");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("1.11–1.19 without write blocking: COMMITTED, whatever the start says of the verifier", () => {
  // mongodb/docs content/mongosync/v1.11/source/reference/cutover-process.txt: "… or the verifier is
  // turned on, you can write to the destination after /progress reports canWrite: true. Otherwise,
  // wait until the state is COMMITTED"; the verifier can be off whatever the start says
  // (docs-cluster-to-cluster-sync v1.13, includes/opts/disableVerification.rst: "Verification
  // remains disabled for subsequent restarts and reversals"): src/runbook/can-write.ts
  it("a start that leaves the verifier on does not make canWrite close the window: every instance COMMITTED does", async () => {
    const s = await sim({ instances: 3, serviceVersion: "1.17.0" });
    sims.push(s);
    const start =
      "  - { id: start, start: { source: cluster0, destination: cluster1, enableUserWriteBlocking: none, verification: { enabled: true } } }\n";
    const { result, events } = await runYaml(
      runbook(s, start + READY + STOP + DRAINED + COMMIT + WRITABLE + COMMITTED, { declare: true, version: "1.17.0" }),
    );
    expect(result.exitCode, result.message).toBe(0);
    expect(of(events, "run.started")[0]!.destinationWrites).toEqual({
      on: "committed",
      why: expect.stringMatching(/write blocking off, and whether the embedded verifier is on cannot be told/),
    });
    const closed = of(events, "window.closed");
    expect(closed.map((e) => e.reason)).toEqual(["committed"]);
    // the first process said canWrite before then, and it did not count
    const samples = of(events, "progress.sampled").filter((x) => x.seq < closed[0]!.seq);
    expect(samples.some((x) => x.instance.index === 0 && x.progress.canWrite === true)).toBe(true);
    const seen = new Map<number, string>();
    for (const e of samples) seen.set(e.instance.index, e.progress.state);
    expect([...seen.values()]).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
  });

  // an outside conformance read of the sources (2026-12-06): both closed the window on canWrite
  const cases = [
    {
      name: "a runbook that declares no serviceVersion (it may drive 1.11–1.19; enableUserWriteBlocking exists only before 1.20)",
      start: "enableUserWriteBlocking: none",
      version: null,
      why: /^the runbook declares no serviceVersion \(it may drive service 1\.11–1\.19\), and there the start turns write blocking off/,
    },
    {
      // mongodb/docs content/mongosync/v1.17/source/reference/api/start.txt: "mongosync does not
      // enable write-blocking when you enable this feature"; "The default write-blocking mode is
      // changed from "destinationOnly" to "none""
      name: "a start with preExistingDestinationData: true (the service enables no write blocking)",
      start: "preExistingDestinationData: true, includeNamespaces: [{ database: app }]",
      version: "1.17.0",
      why: /^on service 1\.11–1\.19 the start sets `preExistingDestinationData: true`, with which the service enables no write blocking/,
    },
  ];
  for (const c of cases)
    it(`${c.name}: the window closes when every instance is COMMITTED, and lint says the write-on hook needs COMMITTED`, async () => {
      const s = await sim({ instances: 3, serviceVersion: "1.17.0" });
      sims.push(s);
      const start = `  - { id: start, start: { source: cluster0, destination: cluster1, ${c.start} } }\n`;
      const text = runbook(s, start + READY + STOP + DRAINED + COMMIT + WRITABLE + COMMITTED, {
        declare: true,
        version: c.version,
      });
      const { result, events } = await runYaml(text);
      expect(result.exitCode, result.message).toBe(0);
      expect(of(events, "run.started")[0]!.destinationWrites).toEqual({
        on: "committed",
        why: expect.stringMatching(c.why),
      });
      const closed = of(events, "window.closed");
      expect(closed.map((e) => e.reason)).toEqual(["committed"]);
      const seen = new Map<number, string>();
      for (const e of of(events, "progress.sampled").filter((x) => x.seq < closed[0]!.seq))
        seen.set(e.instance.index, e.progress.state);
      expect([...seen.values()]).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
      // the same reading at lint: a write-on hook after a canWrite wait alone is warned of
      const hooked = await parseRunbook(
        runbook(
          s,
          start +
            READY +
            STOP +
            DRAINED +
            COMMIT +
            WRITABLE +
            "  - { id: app-on, hook: { use: stdout, writesOn: true } }\n",
          {
            declare: true,
            version: c.version,
          },
        ),
        "rb.yaml",
        { env: "lint" },
      );
      const { lintWithLoader } = await import("../../src/lint/index.js");
      expect(lintWithLoader(hooked).filter((d) => d.rule === "writes-on-before-committed")).toHaveLength(1);
    });
});
