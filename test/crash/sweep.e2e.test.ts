/**
 * A randomized, seeded sweep of fault schedules (issue item 4): each schedule is one to three
 * simulator faults (kind, rate, instances, endpoint, after, for) against a one- to three-instance
 * cutover, run in process. Whatever the run's outcome, zero unsafe commits:
 *
 *   - every commit POST left while the simulator showed writes off and every instance up,
 *     RUNNING with canCommit true (harness.ts `commitGuard`, read at `request.sent`);
 *   - no write was lost (`writes.lost` is 0: the runbook stops writes before commit);
 *   - a run that completed left every instance COMMITTED with no fleet error; one that halted
 *     says why, and before commit it sent no commit and undid its write stop.
 *
 * A failure prints the seed and the schedule; `SWEEP_SEED=<n>` reruns that one schedule alone.
 */
import { describe, expect, it } from "vitest";
import type { FaultSpec } from "../../src/sim/index.js";
import {
  CHECK,
  COMMIT,
  COMMITTED,
  commitGuard,
  cutoverYaml,
  DRAINED,
  fastSim,
  haltCode,
  posts,
  READY,
  runInProcess,
  START,
  stopVia,
  VERIFY,
} from "../support/crash-harness.js";
import { mulberry32 } from "../../src/sim/prng.js";

const SCHEDULES = 200;
const BATCH = 25;
const PARALLEL = 13;
const BASE_SEED = 0x5eed;

const prng = mulberry32;

interface Schedule {
  seed: number;
  instances: number;
  /** With pause / resume steps (progress may then fail "for at least two minutes after a sync is resumed"). */
  pauseResume: boolean;
  faults: FaultSpec[];
}

const ENDPOINTS = [undefined, "start", "commit", "progress"] as const;

function schedule(seed: number): Schedule {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const instances = 1 + Math.floor(r() * 3);
  const some = (): number[] => {
    const all = Array.from({ length: instances }, (_, i) => i);
    const chosen = all.filter(() => r() < 0.5);
    return chosen.length ? chosen : [pick(all)];
  };
  // simulated seconds: the copy of 1 GiB takes ~20 s, the whole cutover ~40-70 s
  const window = (): Pick<FaultSpec, "after" | "for"> => ({
    ...(r() < 0.7 ? { after: Math.round(r() * 80) } : {}),
    ...(r() < 0.6 ? { for: 1 + Math.round(r() * 60) } : {}),
  });
  const rate = (): number => Math.round((0.05 + r() * 0.5) * 100) / 100;
  const faults: FaultSpec[] = [];
  const n = 1 + Math.floor(r() * 3);
  for (let k = 0; k < n; k++) {
    const kind = pick([
      "http500",
      "non-json",
      "reset",
      "reset-after",
      "latency",
      "down",
      "lag-floor",
      "commit-refused",
      "progress-down-after-resume",
      "live-upgrade",
      "verifier-error",
    ] as const);
    switch (kind) {
      case "http500":
      case "non-json":
      case "reset":
      case "reset-after": {
        const endpoint = pick(ENDPOINTS);
        faults.push({ kind, value: rate(), instances: some(), ...(endpoint ? { endpoint } : {}), ...window() });
        break;
      }
      case "latency":
        faults.push({ kind, value: Math.round(r() * 80) / 1000, instances: some(), ...window() });
        break;
      case "down":
        faults.push({ kind, instances: [Math.floor(r() * instances)], ...window() });
        break;
      case "lag-floor":
        faults.push({ kind, value: 1 + Math.round(r() * 20), instances: some(), ...window() });
        break;
      case "commit-refused":
        faults.push({ kind, instances: [Math.floor(r() * instances)], ...window() });
        break;
      case "progress-down-after-resume":
        faults.push({ kind, value: 30 + Math.round(r() * 150), instances: some() });
        // a restart to set it off
        if (r() < 0.6)
          faults.push({
            kind: "down",
            instances: [Math.floor(r() * instances)],
            after: Math.round(r() * 60),
            for: 1 + Math.round(r() * 10),
          });
        break;
      case "live-upgrade":
        faults.push({ kind, value: Math.round(r() * 100) / 100, instances: some() });
        break;
      case "verifier-error":
        faults.push({ kind, message: "simulated verifier failure", ...window() });
        break;
    }
  }
  return { seed, instances, pauseResume: r() < 0.3, faults };
}

const PAUSE_RESUME =
  "  - { id: pause, pause: {} }\n  - { id: paused, waitFor: { state: PAUSED } }\n  - { id: resume, resume: {} }\n  - { id: ready-again, waitFor: { canCommit: true, lagBelow: 5 } }\n";

const tally = { committed: 0, haltedBeforeCommit: 0, haltedAfterCommit: 0 };

async function runSchedule(sc: Schedule): Promise<void> {
  const where = `seed ${sc.seed}: ${JSON.stringify(sc)} (rerun alone: SWEEP_SEED=${sc.seed})`;
  // facts: live upgrades "only where release notes say so — 1.12 → 1.13 [versioning page], to 1.18"
  const upgrade = sc.faults.some((f) => f.kind === "live-upgrade") ? { serviceVersion: "1.13.0" } : {};
  const s = await fastSim({ instances: sc.instances, seed: sc.seed, timeScale: 250, ...upgrade });
  try {
    for (const f of sc.faults) s.control.addFault(f);
    const steps =
      START +
      READY +
      (sc.pauseResume ? PAUSE_RESUME : "") +
      CHECK +
      stopVia(s.verifierUrl) +
      DRAINED +
      COMMIT +
      COMMITTED +
      VERIFY;
    const yaml = cutoverYaml(s, {
      steps,
      defaults: "{ pollInterval: 40ms, timeout: 1500ms, requestTimeout: 500ms, retry: { giveUpAfter: 700ms } }",
    });
    const guard = commitGuard(s);
    const { result, events } = await runInProcess(yaml, { listeners: [guard.listener] });
    const st = s.control.state();
    const outcome = `${where}\n  → exit ${result.exitCode}: ${result.message ?? "ok"}`;
    expect(guard.violations, outcome).toEqual([]);
    expect(st.writes.lost, outcome).toBe(0);
    tally[result.exitCode === 0 ? "committed" : result.commitSent ? "haltedAfterCommit" : "haltedBeforeCommit"]++;
    if (result.exitCode === 0) {
      expect(
        st.instances.every((i) => i.state === "COMMITTED"),
        outcome,
      ).toBe(true);
      expect(st.fleetErrors, outcome).toEqual([]);
      return;
    }
    // 3 when an interlock refused the command (an unreachable instance is refused too), else 1
    expect(result.exitCode, outcome).toBe(haltCode(events));
    expect(result.message, outcome).toMatch(/^step [\w-]+ failed: \S/);
    if (!result.commitSent) {
      expect(
        posts(s, "commit").every((n) => n === 0),
        outcome,
      ).toBe(true);
      const stopped = events.some((e) => e.type === "step.finished" && e.id === "stop-writes" && e.outcome === "ok");
      // undone, unless the fleet could not be read as a whole before the undo: a commit may have
      // reached the unread instance outside this run, so writes stay stopped, said (issue 42)
      const unread = /writes stay STOPPED: the fleet could not be read/.test(result.message ?? "");
      if (stopped)
        expect(
          st.writes.enabled,
          `${outcome}\n  (${unread ? "writes kept stopped, as said" : "the write stop was not undone"})`,
        ).toBe(!unread);
    }
  } finally {
    await s.close();
  }
}

async function pool<T>(items: readonly T[], width: number, f: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const x = items[next++]!;
        try {
          await f(x);
        } catch (err) {
          errors.push(err);
        }
      }
    }),
  );
  if (errors.length === 1) throw errors[0];
  if (errors.length)
    throw new Error(
      `${errors.length} schedules failed:\n${errors.map((e) => (e instanceof Error ? e.message : String(e))).join("\n\n")}`,
    );
}

const only = process.env.SWEEP_SEED;
const seeds = only ? [Number(only)] : Array.from({ length: SCHEDULES }, (_, i) => BASE_SEED + i);
const batches = Array.from({ length: Math.ceil(seeds.length / BATCH) }, (_, b) =>
  seeds.slice(b * BATCH, (b + 1) * BATCH),
);

describe(`seeded sweep of ${seeds.length} fault schedules: zero unsafe commits`, () => {
  it("schedules are reproducible from their seed", () => {
    expect(schedule(BASE_SEED)).toEqual(schedule(BASE_SEED));
    expect(new Set(seeds.map((x) => JSON.stringify(schedule(x).faults))).size).toBeGreaterThan(seeds.length * 0.95);
  });

  it.each(batches.map((b, i) => ({ i, b, label: `seeds ${b[0]}..${b[b.length - 1]}` })))(
    "batch $i ($label)",
    async ({ b }) => {
      await pool(b.map(schedule), PARALLEL, runSchedule);
    },
    60_000,
  );

  it.skipIf(only)(
    "the sweep exercised both outcomes (not every schedule halts early, not every one is harmless)",
    () => {
      expect(tally.committed + tally.haltedBeforeCommit + tally.haltedAfterCommit).toBe(seeds.length);
      expect(tally.committed, JSON.stringify(tally)).toBeGreaterThan(seeds.length * 0.2);
      expect(tally.haltedBeforeCommit + tally.haltedAfterCommit, JSON.stringify(tally)).toBeGreaterThan(
        seeds.length * 0.1,
      );
    },
  );
});
