/**
 * Shared by the crash suites: a fast simulator, a cutover runbook pointing at it, the runner in
 * process (events recorded), and the safety invariant seen from the simulator:
 *
 *   "commit only when every instance is RUNNING with canCommit true, a stopWrites step has
 *    succeeded earlier in this run, and no instance answered with an error" (DESIGN, interlocks);
 *   "Preconditions: application writes to the source are stopped … state RUNNING and canCommit
 *    true" (spec, POST /api/v1/commit).
 *
 * `commitGuard` reads the simulator's state synchronously at every commit `request.sent` (the
 * fleet emits it right before the POST leaves), so a commit sent while writes were on, or while
 * an instance was down, not RUNNING or not able to commit, is recorded as a violation.
 */
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import type { RunEvent, RunListener } from "../../src/events.js";
import { runRunbook, type RunResult } from "../../src/run/runner.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { startSimulator, type Simulator, type SimulatorOptions } from "../../src/sim/index.js";
import { cli } from "./run.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

export function tempDir(prefix = "syncbook-crash-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * What a file's cases start and make, closed and removed after all its tests (call it once, at
 * the file's top level): push each simulator and folder as it is made.
 */
export function cleanedUpAfterAll(): { sims: Simulator[]; dirs: string[] } {
  const sims: Simulator[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });
  return { sims, dirs };
}

/**
 * `node writes.mjs <url> on|off <delay ms> [mark]`: the application's write switch (the
 * simulator's `/sim/writes` at `url`), slow on purpose; `mark` gets its pid when it starts and
 * `mark.done` once it has switched.
 */
export const WRITE_SWITCH = `import { writeFileSync } from "node:fs";
const [url, to, wait, mark] = process.argv.slice(2);
if (mark) writeFileSync(mark, String(process.pid));
await new Promise((r) => setTimeout(r, Number(wait)));
const r = await fetch(url + "/sim/writes", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ enabled: to === "on" }) });
if (!r.ok) { console.error("switch failed", r.status); process.exit(1); }
if (mark) writeFileSync(mark + ".done", "");
`;

/** `node hold.mjs <mark>`: blocks the first time (writing its pid to `mark`), passes after. */
export const HOLD_ONCE = `import { existsSync, writeFileSync } from "node:fs";
const mark = process.argv[2];
if (!existsSync(mark)) { writeFileSync(mark, String(process.pid)); await new Promise((r) => setTimeout(r, 60_000)); }
`;

/**
 * The write switch and the hold in `dir` (writes.mjs, hold.mjs), and the two steps that use them:
 * a stopWrites that switches writes off at once, whose undo (after `prefix`: `env -i`, `setsid`…)
 * switches them on after `delayMs` and marks `mark`; and `hold`, a hook that blocks the first
 * time (marker `held`).
 */
export function writeSwitchSteps(
  dir: string,
  url: string,
  o: { delayMs: number; mark: string; prefix?: readonly string[]; undoTimeout?: string; check?: string },
): { stopWrites: string; hold: string } {
  writeFileSync(join(dir, "writes.mjs"), WRITE_SWITCH);
  writeFileSync(join(dir, "hold.mjs"), HOLD_ONCE);
  const node = JSON.stringify(process.execPath);
  const w = JSON.stringify(join(dir, "writes.mjs"));
  const u = JSON.stringify(url);
  const undo = [
    ...(o.prefix ?? []).map((a) => JSON.stringify(a)),
    node,
    w,
    u,
    '"on"',
    `"${o.delayMs}"`,
    JSON.stringify(o.mark),
  ];
  return {
    stopWrites: `  - { id: stop-writes, stopWrites: { use: shell, with: { command: [${node}, ${w}, ${u}, "off", "0"] }, undo: { use: shell, with: { command: [${undo.join(", ")}] }, timeout: ${o.undoTimeout ?? "30s"} }${o.check ?? ""} } }\n`,
    hold: `  - { id: hold, hook: { use: shell, with: { command: [${node}, ${JSON.stringify(join(dir, "hold.mjs"))}, ${JSON.stringify(join(dir, "held"))}] } } }\n`,
  };
}

/** Defaults of the CLI cases that kill and resume a runner around a hook: 20 s waits, 10 s of failing reads. */
export const KILL_RESUME_DEFAULTS =
  "{ pollInterval: 50ms, timeout: 20s, requestTimeout: 2s, retry: { giveUpAfter: 10s } }";

/** One instance: replica set to replica set; N: sharded to sharded with N shards. Small data, fast clock. */
export function fastSim(opts: SimulatorOptions = {}): Promise<Simulator> {
  const n = opts.instances ?? 1;
  const cluster = n > 1 ? ({ topology: "sharded", shards: n } as const) : ({ topology: "replicaSet" } as const);
  return startSimulator({
    instances: n,
    data: "1GiB",
    timeScale: 200,
    clusters: { cluster0: cluster, cluster1: cluster },
    ...opts,
  });
}

export interface RunbookOptions {
  /** YAML under `steps:` (each line indented two spaces). */
  steps?: string;
  /** The `defaults:` flow mapping. */
  defaults?: string;
  /** Extra top-level YAML before `steps:`. */
  head?: string;
  name?: string;
  /** Instance URLs as written in the runbook (default: the simulator's). */
  urls?: string[];
}

export const START = "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n";
export const READY = "  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n";
export const STOP =
  "  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n";
/** The write stop through a given control URL (the verifier's port serves /sim/ too, and is never down). */
export const stopVia = (url: string): string =>
  `  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${url}" }, undo: { use: sim-writes, with: { url: "${url}", enabled: true } } } }\n`;
export const DRAINED = "  - { id: drained, waitFor: { canCommit: true, lagBelow: 3 } }\n";
/** The verifier's check, started during change event application (service facts: "The recommended cutover"). */
export const CHECK = "  - { id: check, startVerification: {} }\n";
/** writesOff and the verifier's result: after the sync is COMMITTED. */
export const VERIFY = "  - { id: verify, verify: {} }\n";
export const COMMIT = "  - { id: commit, commit: {} }\n";
export const COMMITTED = "  - { id: committed, waitFor: { state: COMMITTED } }\n";
export const CUTOVER = START + READY + CHECK + STOP + DRAINED + COMMIT + COMMITTED + VERIFY;

/** Fast defaults for in-process runs at timeScale 200: a failing cell fails in a few seconds. */
export const FAST_DEFAULTS = "{ pollInterval: 50ms, timeout: 5s, requestTimeout: 1s, retry: { giveUpAfter: 2s } }";

export function cutoverYaml(s: Simulator, o: RunbookOptions = {}): string {
  const n = s.instances.length;
  const cluster =
    n > 1
      ? `{ topology: sharded, shards: ${n}, serverVersion: "6.0" }`
      : `{ topology: replicaSet, serverVersion: "6.0" }`;
  const urls = o.urls ?? s.instances.map((i) => i.url);
  return `runbook: 1
name: ${o.name ?? "crash"}
serviceVersion: "1.8.0"
clusters:
  cluster0: ${cluster}
  cluster1: ${cluster}
instances:
${urls.map((u, i) => `  - { url: "${u}", name: sync${i} }`).join("\n")}
verifier: "${s.verifierUrl}"
defaults: ${o.defaults ?? FAST_DEFAULTS}
${o.head ?? ""}steps:
${o.steps ?? CUTOVER}`;
}

export interface InProcessRun {
  result: RunResult;
  events: RunEvent[];
}

/** The runner in this process, as `syncbook run` wires it minus the UI and journal. */
export async function runInProcess(
  yaml: string,
  opts: { listeners?: RunListener[]; env?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<InProcessRun> {
  const loaded = await parseRunbook(yaml, "rb.yaml", { env: opts.env ?? {} });
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length)
    throw new Error(
      `test runbook does not load: ${errors.map((d) => `${d.line}:${d.column} ${d.message}`).join("; ")}\n${yaml}`,
    );
  const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
  const events: RunEvent[] = [];
  const result = await runRunbook({
    loaded,
    registry,
    listeners: [(e) => void events.push(e), ...(opts.listeners ?? [])],
    print: () => undefined,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return { result, events };
}

export interface CommitGuard {
  listener: RunListener;
  /** Every commit POST that left while it was not safe, with what the simulator showed. */
  violations: string[];
  /** Commit POSTs seen (per instance index). */
  commitsSent: number;
  /** Commits sent to an instance that the runner had just read RUNNING with canCommit and that died before the POST. */
  races: number;
}

/** Records, at each commit POST, whether the simulator agreed it was safe (see the file comment). */
export function commitGuard(s: Simulator): CommitGuard {
  const lastSeen = new Map<number, boolean>();
  const g: CommitGuard = {
    violations: [],
    commitsSent: 0,
    races: 0,
    listener: (e) => {
      // what the runner last saw of each instance: an instance that answered RUNNING with
      // canCommit in the interlock read and died in the milliseconds before the POST (at ×200
      // a 50 ms stall on a busy machine is 10 simulated seconds) is a race no runner can see
      // coming; its commit is refused by the dead socket, never applied, and reconciled after
      if (e.type === "progress.sampled") {
        const p = e.progress as { state?: string; canCommit?: boolean } | undefined;
        lastSeen.set(e.instance.index, p?.state === "RUNNING" && p.canCommit === true);
        return;
      }
      if (
        e.type !== "request.sent" ||
        e.target !== "service" ||
        e.method !== "POST" ||
        !/\/api\/v1\/commit\b/.test(e.path)
      )
        return;
      g.commitsSent++;
      const st = s.control.state();
      const problems: string[] = [];
      if (st.writes.enabled) problems.push("application writes were on");
      for (const i of st.instances) {
        // an instance that already accepted commit (a resend round) is past it: that is not a problem
        if (i.state === "COMMITTING" || i.state === "COMMITTED") continue;
        if (i.down) {
          if (lastSeen.get(i.index) === true) g.races++;
          else problems.push(`instance ${i.index} was down`);
        } else if (i.state !== "RUNNING" || !i.canCommit)
          problems.push(`instance ${i.index} was ${i.state} with canCommit ${String(i.canCommit)}`);
      }
      if (problems.length)
        g.violations.push(
          `commit to ${e.instance?.name ?? e.instance?.url ?? "?"} at sim ${st.time.simSeconds.toFixed(1)} s: ${problems.join(", ")}`,
        );
    },
  };
  return g;
}

/** POSTs per instance for one endpoint, from the simulator's counts (what the service really received). */
export function posts(s: Simulator, op: string): number[] {
  return s.control.counts().instances.map((c) => c[`POST /api/v1/${op}`] ?? 0);
}

export function totalPosts(s: Simulator): number {
  const c = s.control.counts();
  return c.instances.reduce(
    (n, x) => n + Object.entries(x).reduce((a, [k, v]) => a + (k.startsWith("POST ") ? v : 0), 0),
    0,
  );
}

/**
 * The exit code a halted run must have: 3 when the step that stopped it was refused by an
 * interlock (a decision with ok false, nothing sent), 1 for any other failure (README "Exit codes").
 */
export function haltCode(events: readonly RunEvent[]): 1 | 3 {
  const failed = events.findLast((e) => e.type === "step.finished" && e.outcome === "failed");
  if (!failed || failed.type !== "step.finished") return 1;
  const refused = events.some(
    (e) =>
      e.type === "decision" &&
      !e.ok &&
      (e.kind === "interlock" || e.kind === "identity") &&
      e.index === failed.index &&
      e.seq < failed.seq,
  );
  return refused ? 3 : 1;
}

/** Defaults for a whole cutover through the built CLI: seconds-long waits, a 1 s request limit. */
export const CLI_CUTOVER_DEFAULTS =
  "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 1s, retry: { giveUpAfter: 3s } }";

/**
 * A 3-instance fleet with `faults`, and a runbook of a whole cutover against it (start, ready, a
 * write stop through the simulator's switch, drained, commit, committed), run through the built
 * CLI. The grace window models how fast a runner broadcasts; a resume comes seconds later by design.
 */
export async function threeInstanceCutover(
  faults: readonly string[] = [],
  defaults = CLI_CUTOVER_DEFAULTS,
  /** Steps between the write stop and the drained wait (a confirm that fails without a terminal, say). */
  afterStop = "",
): Promise<{ sim: Simulator; file: string; dir: string; run: (...a: string[]) => ReturnType<typeof cli> }> {
  const sim = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
  for (const f of faults) sim.control.addFault(f);
  const dir = tempDir();
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(sim, {
      defaults,
      steps: START + READY + stopVia(sim.verifierUrl) + afterStop + DRAINED + COMMIT + COMMITTED,
    }),
  );
  return { sim, file, dir, run: (...a) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir }) };
}

/**
 * After a split commit (sync2 refused it): a new cutover's `--from stop-writes --only sync2`, the
 * way on the earlier-cutover check offers for the instance the journals show it never reached,
 * goes through without a `--force`: it stops writes again (a new cutover counts no write stop of
 * the one before), and commit reaches sync2 alone.
 */
export async function commitToTheRefusingOnly(
  c: { sim: Simulator; run: (...a: string[]) => ReturnType<typeof cli> },
  before: string,
): Promise<void> {
  const only = await c.run("--new-cutover", "--from", "stop-writes", "--to", "commit", "--only", "sync2", "--yes");
  expect(only.code, `${before}\n--- --new-cutover --from stop-writes --to commit --only sync2\n${only.all}`).toBe(0);
  expect(posts(c.sim, "commit"), only.all).toEqual([1, 1, 2]);
}

/** Waits (polling every 10 ms) until `test` holds; throws naming `what` after `ms`. */
export async function until(what: string, test: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A reversible start (write blocking: `cutoverYaml`'s service is 1.8). */
export const START_REV =
  "  - { id: start, start: { source: cluster0, destination: cluster1, reversible: true, enableUserWriteBlocking: true } }\n";
/** The reverse, and the wait for the sync running the other way. */
export const REVERSE = "  - { id: rollback, reverse: {} }\n  - { id: reversed, waitFor: { state: RUNNING } }\n";

/**
 * A one-instance fleet with `faults`, a runbook of `steps` against it, and `syncbook run` on it
 * with its own journal folder; the simulator and the folder go into `made` for cleanup.
 */
export async function cliCutover(made: { sims: Simulator[]; dirs: string[] }, faults: string[], steps: string) {
  const s = await fastSim({ timeScale: 100, faults });
  made.sims.push(s);
  const dir = tempDir();
  made.dirs.push(dir);
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(s, {
      steps,
      defaults: "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 10s, retry: { giveUpAfter: 10s } }",
    }),
  );
  const jd = join(dir, "journals");
  const args = (...more: string[]) => ["run", file, ...more, "--renderer", "simple", "--journal-dir", jd];
  return { s, dir, file, jd, args };
}

/**
 * A cutover-only runbook (no start: the sync started by hand, here by a POST) whose first run
 * stopped writes, failed at a confirm (no terminal) and undid the write stop: it acted. Returns the
 * runbook's `syncbook run` (in `journalDir` when given) and that run's journal, for a test to cut
 * or edit; the simulator and the folder go into `made`.
 */
export async function cutoverOnlyAfterAnUndo(made: { sims: Simulator[]; dirs: string[] }, journalDir?: string) {
  const sim = await fastSim({ timeScale: 100 });
  made.sims.push(sim);
  const dir = tempDir();
  made.dirs.push(dir);
  const go = '  - { id: go, confirm: "Commit?" }\n';
  writeFileSync(
    join(dir, "rb.yaml"),
    cutoverYaml(sim, {
      defaults: CLI_CUTOVER_DEFAULTS,
      steps: READY + stopVia(sim.verifierUrl) + go + COMMIT + COMMITTED,
    }),
  );
  const jd = journalDir === undefined ? [] : ["--journal-dir", journalDir];
  const run = (...a: string[]) => cli(["run", "rb.yaml", ...jd, "--renderer", "simple", ...a], { cwd: dir });
  const started = await fetch(`${sim.instances[0]!.url}/api/v1/start`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ source: "cluster0", destination: "cluster1" }),
  });
  expect(started.ok).toBe(true);
  const first = await run();
  expect(first.code, first.all).toBe(1);
  expect(sim.control.state().writes.enabled, "the first run's undo turned writes back on").toBe(true);
  const folder = join(dir, journalDir ?? ".syncbook", "crash");
  const journal = join(
    folder,
    readdirSync(folder).find((f) => f.endsWith(".jsonl"))!,
  );
  return { sim, dir, run, journal };
}

/** The sync that runs the other way after `REVERSE`: its own write stop (the simulator's switch). */
export const STOP_AGAIN =
  "  - { id: stop-again, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n";
/** Its wait for the drain. */
export const DRAINED_AGAIN = "  - { id: drained-again, waitFor: { canCommit: true, lagBelow: 3 } }\n";
/** Its commit and the wait for COMMITTED. */
export const COMMIT_AGAIN =
  "  - { id: commit-again, commit: {} }\n  - { id: committed-again, waitFor: { state: COMMITTED } }\n";

/** `node fail-times.mjs <mark> <n>`: fails its first n times (counting in `mark`), passes after. */
const FAIL_TIMES = `import { existsSync, readFileSync, writeFileSync } from "node:fs";
const [mark, n] = process.argv.slice(2);
const done = existsSync(mark) ? Number(readFileSync(mark, "utf8")) : 0;
if (done < Number(n)) { writeFileSync(mark, String(done + 1)); console.error("not yet"); process.exit(1); }
`;

/** The command that fails its first `times` runs under the name `id`, then passes (its script written in `dir`). */
export function failTimesArgv(dir: string, id: string, times: number): string[] {
  writeFileSync(join(dir, "fail-times.mjs"), FAIL_TIMES);
  return [process.execPath, join(dir, "fail-times.mjs"), join(dir, `${id}.failed`), String(times)];
}

/** A hook step `id` that fails its first `times` runs, then passes (its script written in `dir`). */
export function failingHook(dir: string, id: string, times: number): string {
  const argv = failTimesArgv(dir, id, times);
  return `  - { id: ${id}, hook: { use: shell, with: { command: [${argv.map((a) => JSON.stringify(a)).join(", ")}] } } }\n`;
}
