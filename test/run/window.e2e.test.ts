/**
 * Issue #18 against the simulator with its clock stopped (`timeScale: 0`): the test decides when
 * each condition becomes true, so the window's timings are known.
 *
 *   start → ready (canCommit; held 1.2 s) → stop-writes → drained (lagBelow 5; a lag floor holds
 *   it 1.2 s after writes stop) → commit → writable (canWrite of the first process, sync0, declared
 *   `startedFirst`; 1.2 s after the commit the clock moves into canWrite) → committed (COMMITTED;
 *   held 1.2 s more)
 *
 * Checked: the window is measured (writes stopped → the read that showed canWrite) and split
 * (the service's share covers the two held waits, the runner's is what remains); waits poll at
 * `windowPollInterval` inside the window and at `pollInterval` outside (request counts per
 * phase, from the simulator); commit's interlock still reads the fleet afresh; and never two
 * requests in flight to one instance (counted by the simulator's HTTP servers, with every
 * progress answer slower than the window's poll interval).
 */
import http from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import { WindowTracker, type WriteStopWindow } from "../../src/fleet/window.js";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import { runRunbook, type RunResult } from "../../src/run/index.js";
import { loadRunbook } from "../../src/runbook/index.js";
import { startSimulator, type Simulator } from "../../src/sim/index.js";
import { PLUGIN_CALL_KINDS, traitsOf } from "../../src/steps/index.js";

const HOLD_MS = 1200;
const POLL_MS = 400;
const WINDOW_POLL_MS = 40;

const of = <K extends RunEvent["type"]>(events: readonly RunEvent[], type: K): RunEventOf<K>[] =>
  events.filter((e): e is RunEventOf<K> => e.type === type);

/** Requests in flight per server port, and the most ever seen at once (the simulator runs in this process). */
function inFlightCounter(): { max: Map<number, number>; restore(): void } {
  const now = new Map<number, number>();
  const max = new Map<number, number>();
  const original = http.Server.prototype.emit;
  http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
    if (event === "request") {
      const port = (this.address() as { port?: number } | null)?.port ?? 0;
      const res = args[1] as http.ServerResponse;
      const n = (now.get(port) ?? 0) + 1;
      now.set(port, n);
      max.set(port, Math.max(max.get(port) ?? 0, n));
      res.once("close", () => now.set(port, (now.get(port) ?? 1) - 1));
    }
    return Reflect.apply(original, this, [event, ...args]) as boolean;
  } as typeof original;
  return { max, restore: () => void (http.Server.prototype.emit = original) };
}

describe("the write-stop window, with known timings (the simulator's clock is the test's)", () => {
  let s: Simulator;
  let dir: string;
  let flight: ReturnType<typeof inFlightCounter>;
  const events: RunEvent[] = [];
  let result: RunResult;
  const truth: Record<string, number> = {};
  const gets: Record<string, number[]> = {};
  let window: WriteStopWindow;

  const progressGets = (): number[] => s.control.counts().instances.map((c) => c["GET /api/v1/progress"] ?? 0);

  beforeAll(async () => {
    flight = inFlightCounter();
    const cluster = { topology: "sharded", shards: 2 } as const;
    s = await startSimulator({
      instances: 2,
      timeScale: 0,
      data: "1GiB",
      clusters: { cluster0: cluster, cluster1: cluster },
      // every progress answer takes longer than the window's poll interval: a runner that did not
      // wait for the previous read would have two in flight
      faults: ["latency=60ms@*/progress"],
    });
    dir = mkdtempSync(join(tmpdir(), "syncbook-window-"));
    const file = join(dir, "window.yaml");
    writeFileSync(
      file,
      `runbook: 1
name: window
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: sharded, shards: 2, serverVersion: "6.0" }
  cluster1: { topology: sharded, shards: 2, serverVersion: "6.0" }
instances:
${s.instances.map((i) => `  - { url: "${i.url}", name: sync${i.index}${i.index === 0 ? ", startedFirst: true" : ""} }`).join("\n")}
defaults: { pollInterval: ${POLL_MS}ms, windowPollInterval: ${WINDOW_POLL_MS}ms, timeout: 60s, requestTimeout: 5s }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: ready, waitFor: { canCommit: true } }
  - { id: stop-writes, stopWrites: { use: sim-writes } }
  - { id: drained, waitFor: { canCommit: true, lagBelow: 5 } }
  - { id: commit, commit: {} }
  - { id: writable, waitFor: { canWrite: true } }
  - { id: committed, waitFor: { state: COMMITTED } }
`,
    );
    const loaded = await loadRunbook(file, { env: {} });
    if (!loaded.runbook) throw new Error(loaded.diagnostics.map((d) => d.message).join("; "));
    const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    let readyHeld = false;
    let lagFloor: number | undefined;
    const later = (ms: number, f: () => void) => void setTimeout(f, ms);
    const listener = (e: RunEvent): void => {
      events.push(e);
      if (e.type === "wait.status" && e.id === "ready" && !e.met && !readyHeld) {
        readyHeld = true;
        // the drain will be held by a lag floor from before writes stop
        lagFloor = s.control.addFault("lag-floor=10").id;
        later(HOLD_MS, () => s.control.advance(60)); // the copy ends: canCommit
      }
      if (e.type === "window.opened") {
        // the stop hook's success (the event follows the stop step's check, when it has one)
        expect(e.openedAt).toBeLessThanOrEqual(e.at);
        truth.opened = e.openedAt ?? e.at;
        gets.opened = progressGets();
        later(HOLD_MS, () => {
          s.control.removeFault(lagFloor!); // drained from here on: lag back to the no-op 2 s
          truth.drained = Date.now();
        });
      }
      if (e.type === "commit.sent") {
        truth.commitAnswered = e.at;
        later(HOLD_MS, () => {
          s.control.advance(1.2); // COMMITTING for the 2 s of lag; canWrite from half-way
          truth.canWrite = Date.now();
        });
      }
      if (e.type === "window.closed") {
        truth.closed = e.seenAt;
        gets.closed = progressGets();
        later(HOLD_MS, () => s.control.advance(5)); // COMMITTED
      }
    };
    result = await runRunbook({ loaded, registry, mode: "run", yes: true, env: {}, listeners: [listener] });
    gets.end = progressGets();
    const w = new WindowTracker(traitsOf);
    for (const e of events) w.apply(e);
    window = w.current()!;
    if (process.env.WINDOW_DEBUG) console.log(JSON.stringify({ truth, gets, window }, null, 1));
  }, 60_000);

  afterAll(async () => {
    flight.restore();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the run committed", () => {
    expect(result.outcome, result.message).toBe("ok");
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
  });

  it("measures the window from writes stopped to the read that showed canWrite", () => {
    const [closed] = of(events, "window.closed");
    expect(closed).toMatchObject({ reason: "canWrite", openedAt: truth.opened, seenAt: truth.closed });
    expect(window).toMatchObject({ openedAt: truth.opened, closedAt: truth.closed, closedBy: "canWrite", open: false });
    expect(window.durationMs).toBe(truth.closed! - truth.opened!);
    // the true end lies between the fleet's last canWrite false and the read that showed it
    expect(window.unmetAt).toBeLessThanOrEqual(truth.canWrite! + 100);
    expect(truth.closed).toBeGreaterThanOrEqual(truth.canWrite!);
    // the shares add up to the window
    const sum = Object.values(window.shares).reduce((a, b) => a + b, 0);
    expect(sum).toBe(window.measuredMs);
    expect(window.measuredMs).toBe(window.durationMs);
  });

  it("gives the service the two held waits, and the runner what is left", () => {
    // the service needed at least the drain and the commit's wait for canWrite, less at most a
    // poll interval each (the flip happens between two reads); it never gets more than the truth
    const held = truth.drained! - truth.opened! + (truth.canWrite! - truth.commitAnswered!);
    expect(window.shares.service).toBeGreaterThanOrEqual(held - 2 * (WINDOW_POLL_MS + 100) - 200);
    expect(window.shares.service).toBeLessThanOrEqual(held + 400);
    expect(window.shares.operator).toBe(0);
    expect(window.shares.steps).toBe(0);
    expect(window.shares.runner).toBe(window.measuredMs - window.shares.service);
    // the drained wait: unmet until the floor was lifted, met at the next reads
    const drained = window.parts.find((p) => p.id === "drained" && p.share === "service");
    expect(drained?.to).toBeLessThanOrEqual(truth.drained! + 100);
  });

  it("polls at windowPollInterval inside the window and at pollInterval outside it", () => {
    const inside = gets.closed!.map((n, i) => n - gets.opened![i]!);
    const after = gets.end!.map((n, i) => n - gets.closed![i]!);
    const insideMs = truth.closed! - truth.opened!;
    const afterMs = of(events, "run.finished")[0]!.at - truth.closed!;
    for (const i of [0, 1]) {
      // ≥ 2 held waits of 1.2 s at 40 ms (+60 ms per answer) ≈ 24 reads; at 400 ms there would be ~6
      expect(inside[i], `instance ${i} inside`).toBeGreaterThanOrEqual(insideMs / (WINDOW_POLL_MS + 60) / 2);
      // the COMMITTED wait after canWrite, held 1.2 s: at most one read per 400 ms (and the first)
      expect(after[i], `instance ${i} after`).toBeLessThanOrEqual(Math.ceil(afterMs / (POLL_MS * 0.9)) + 2);
      // `ready` (before the window) was held 1.2 s too: one read per 400 ms, plus the first
      const readyReads = gets.opened![i]!;
      expect(readyReads, `instance ${i} before`).toBeLessThanOrEqual(Math.ceil(HOLD_MS / (POLL_MS * 0.9)) + 4);
    }
    const insideRate = inside[0]! / insideMs;
    const afterRate = after[0]! / afterMs;
    expect(insideRate).toBeGreaterThan(afterRate * 3);
  });

  it("commit's interlock still reads every instance afresh, after the wait, before the POST", () => {
    const canCommit = of(events, "decision").find((d) => d.check === "can-commit");
    expect(canCommit?.ok).toBe(true);
    const commitStart = of(events, "step.started").find((e) => e.id === "commit")!;
    const firstPost = of(events, "request.sent").find((e) => e.path === "/api/v1/commit")!;
    const samples = of(events, "progress.sampled").filter((e) => e.seq > commitStart.seq && e.seq < firstPost.seq);
    expect(samples.map((e) => e.instance.index).sort()).toEqual([0, 1]);
  });

  it("the canWrite wait reads the first process alone, and the other instance only every four intervals", () => {
    // issue 41: canWrite is valid on the first process only (the cutover page), so inside the
    // window the wait reads it alone at the bound; the whole fleet is read for people now and then
    const from = of(events, "step.started").find((e) => e.id === "writable")!;
    const to = of(events, "window.closed")[0]!;
    const samples = of(events, "progress.sampled").filter((e) => e.seq > from.seq && e.seq <= to.seq);
    const count = (i: number): number => samples.filter((e) => e.instance.index === i).length;
    const ms = to.at - from.at;
    expect(count(1)).toBeLessThanOrEqual(Math.ceil(ms / (4 * WINDOW_POLL_MS)) + 1);
    expect(count(0)).toBeGreaterThan(2 * count(1));
  });

  it("never has two requests in flight to one instance", () => {
    const ports = s.instances.map((i) => Number(new URL(i.url).port));
    expect(ports.map((p) => flight.max.get(p))).toEqual([1, 1]);
  });
});

describe("a hook that says writes are on again (`writesOn: true`)", () => {
  let s: Simulator;
  let dir: string;
  afterEach(async () => {
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function run(steps: string): Promise<{ result: RunResult; events: RunEvent[] }> {
    s = await startSimulator({
      instances: 1,
      timeScale: 50,
      data: "1GiB",
      clusters: { cluster0: { topology: "replicaSet" }, cluster1: { topology: "replicaSet" } },
    });
    dir = mkdtempSync(join(tmpdir(), "syncbook-writes-on-"));
    const file = join(dir, "on.yaml");
    const on = `  - { id: app-on, hook: { use: http, with: { url: "${s.instances[0]!.url}/sim/state", method: GET }, writesOn: true } }\n`;
    writeFileSync(
      file,
      `runbook: 1
name: on
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "6.0" }
instances: ["${s.instances[0]!.url}"]
defaults: { pollInterval: 50ms, timeout: 30s, requestTimeout: 2s }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - { id: stop-writes, stopWrites: { use: sim-writes } }
${steps.replace("ON", on.trimEnd())}
`,
    );
    const loaded = await loadRunbook(file, { env: {} });
    if (!loaded.runbook) throw new Error(loaded.diagnostics.map((d) => d.message).join("; "));
    const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    const events: RunEvent[] = [];
    const result = await runRunbook({
      loaded,
      registry,
      mode: "run",
      yes: true,
      env: {},
      listeners: [(e) => void events.push(e)],
    });
    return { result, events };
  }

  it("after canWrite: ends the measured window where the application writes again", async () => {
    const { result, events } = await run(
      "  - { id: commit, commit: {} }\n  - { id: writable, waitFor: { canWrite: true } }\nON\n  - { id: committed, waitFor: { state: COMMITTED } }",
    );
    expect(result.outcome, result.message).toBe("ok");
    const on = of(events, "window.writes-on");
    expect(on).toHaveLength(1);
    const w = new WindowTracker(traitsOf);
    for (const e of events) w.apply(e);
    const m = w.current()!;
    expect(m.writesOnAt).toBe(on[0]!.at);
    expect(m.toWritesOnMs).toBe(on[0]!.at - m.openedAt!);
    expect(m.toWritesOnMs).toBeGreaterThanOrEqual(m.durationMs!);
    expect(m.parts.some((p) => p.id === "app-on" && p.share === "steps")).toBe(true);
    // the poll counts wait while the application cannot write: not in the window, nor between its
    // close (canWrite) and the hook that turns writes on; after it, at the next step's end
    const opened = of(events, "window.opened")[0]!;
    const hook = of(events, "hook.started").find((e) => e.id === "app-on")!;
    const summaries = of(events, "polls.summary");
    expect(summaries.filter((e) => e.seq > opened.seq && e.seq < hook.seq)).toEqual([]);
    expect(summaries.some((e) => e.seq > hook.seq)).toBe(true);
  });

  it("before commit (a library caller, past lint): commit's writes-stopped interlock no longer trusts the stop", async () => {
    const { result, events } = await run("ON\n  - { id: commit, commit: {} }");
    expect(result.exitCode).toBe(3);
    const refused = of(events, "decision").find((d) => d.check === "writes-stopped" && !d.ok);
    expect(refused?.reason).toMatch(/no stopWrites step has succeeded/);
    expect(s.control.counts().instances[0]!["POST /api/v1/commit"]).toBeUndefined();
  });
});
