/**
 * End-to-end helpers: a simulator in this process on 127.0.0.1 (ports 0), runbooks written to a
 * temp folder pointing at it, and the real CLI (`dist/cli/syncbook.cjs`, built by `npm test`) driven
 * as a child process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import type { WatchState } from "../../src/watch/index.js";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import { runRunbook, type RunOptions, type RunResult } from "../../src/run/runner.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { startSimulator, type Simulator, type SimulatorOptions } from "../../src/sim/index.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

export const CLI = join(process.cwd(), "dist/cli/syncbook.cjs");

/** One instance syncs replica sets; N instances sync sharded clusters of N shards (one instance per source shard). */
export async function sim(opts: SimulatorOptions = {}): Promise<Simulator> {
  const n = opts.instances ?? 1;
  const topology = n > 1 ? "sharded" : "replicaSet";
  const cluster = { topology, ...(n > 1 ? { shards: n } : {}) } as const;
  return startSimulator({
    instances: n,
    data: "1GiB",
    timeScale: 50,
    clusters: { cluster0: cluster, cluster1: cluster },
    ...opts,
  });
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "syncbook-run-"));
}

/**
 * A runbook pointing at the simulator; `steps` is YAML (indented two spaces under `steps:`). It
 * declares 1.8.0, the version `sim()` emulates by default (DEFAULT_SERVICE_VERSION), on purpose:
 * the runner's tests keep the conditions they were written for (`run` prints lint's end-of-life
 * warning for it); version-dependent behaviour is tested in test/versions and test/sim. Of
 * several instances, the first is declared the first process the operator starts
 * (`startedFirst: true`): the simulator's instance 0 is, and only its canWrite is valid.
 */
export function runbookFor(s: Simulator, steps: string, head = ""): string {
  const n = s.instances.length;
  const cluster =
    n > 1
      ? `{ topology: sharded, shards: ${n}, serverVersion: "6.0" }`
      : `{ topology: replicaSet, serverVersion: "6.0" }`;
  return `runbook: 1
name: e2e
serviceVersion: "1.8.0"
clusters:
  cluster0: ${cluster}
  cluster1: ${cluster}
instances:
${s.instances.map((i) => `  - { url: "${i.url}", name: sync${i.index}${n > 1 && i.index === 0 ? ", startedFirst: true" : ""} }`).join("\n")}
verifier: "${s.verifierUrl}"
defaults: { pollInterval: 50ms, timeout: 20s, requestTimeout: 2s, retry: { giveUpAfter: 15s } }
${head}steps:
${steps}`;
}

export const START = "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n";
export const READY = "  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n";
export const STOP =
  "  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n";
export const DRAINED = "  - { id: drained, waitFor: { canCommit: true, lagBelow: 3 } }\n";
/** The verifier's check, started during change event application (service facts: "The recommended cutover"). */
export const CHECK = "  - { id: check, startVerification: {} }\n";
/** writesOff and the verifier's result: after the sync is COMMITTED. */
export const VERIFY = "  - { id: verify, verify: {} }\n";
export const COMMIT = "  - { id: commit, commit: {} }\n  - { id: committed, waitFor: { state: COMMITTED } }\n";
export const CUTOVER = START + READY + CHECK + STOP + DRAINED + COMMIT + VERIFY;

export function writeRunbook(dir: string, yaml: string, name = "rb.yaml"): string {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout + stderr, in arrival order. */
  all: string;
}

export interface CliRun {
  child: ReturnType<typeof spawn>;
  /** Resolves when the combined output matches. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<void>;
  done: Promise<CliResult>;
}

export function startCli(
  args: string[],
  opts: { cwd: string; env?: Record<string, string> } = { cwd: process.cwd() },
): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, CI: "1", NO_COLOR: "1", ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let all = "";
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (!w.re.test(all)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  child.stdout.on("data", (d: Buffer) => ((stdout += d.toString()), (all += d.toString()), check()));
  child.stderr.on("data", (d: Buffer) => ((stderr += d.toString()), (all += d.toString()), check()));
  const done = new Promise<CliResult>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, all })),
  );
  return {
    child,
    done,
    waitFor: (re, timeoutMs = 15_000) =>
      new Promise<void>((resolve, reject) => {
        if (re.test(all)) return resolve();
        const t = setTimeout(() => reject(new Error(`output never matched ${re}:\n${all}`)), timeoutMs);
        waiters.push({ re, resolve: () => (clearTimeout(t), resolve()) });
      }),
  };
}

/** A spawned process's output, collected until it closes (a CLI run some other way than `startCli`: through a shell, in a PID namespace, under a ulimit). */
export function outputOf(child: ReturnType<typeof spawn>): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  let all = "";
  child.stdout?.on("data", (d: Buffer) => ((stdout += d.toString()), (all += d.toString())));
  child.stderr?.on("data", (d: Buffer) => ((stderr += d.toString()), (all += d.toString())));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, all })));
}

/** The watch page's state, read once: `syncbook watch <args…> --no-live` in `cwd`, stopped after. */
export async function watchState(args: string[], cwd: string): Promise<WatchState> {
  const watch = startCli(["watch", ...args, "--no-live"], { cwd });
  try {
    let out = "";
    watch.child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    await watch.waitFor(/syncbook watch: http:\/\/127\.0\.0\.1:\d+\//);
    const url = /syncbook watch: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)![1]!;
    return (await (await fetch(new URL("state.json", url))).json()) as WatchState;
  } finally {
    watch.child.kill("SIGINT");
    await watch.done;
  }
}

export function cli(
  args: string[],
  opts: { cwd: string; env?: Record<string, string> } = { cwd: process.cwd() },
): Promise<CliResult> {
  return startCli(args, opts).done;
}

/** POSTs per endpoint, summed over instances, from the simulator's counts. */
export function posts(s: Simulator, op: string): number[] {
  return s.control.counts().instances.map((c) => c[`POST /api/v1/${op}`] ?? 0);
}

export function totalRequests(s: Simulator): number {
  const c = s.control.counts();
  return (
    c.instances.reduce((n, x) => n + Object.values(x).reduce((a, b) => a + b, 0), 0) +
    Object.values(c.verifier).reduce((a, b) => a + b, 0)
  );
}

/**
 * Runs a runbook in this process (lint-clean required, plugins loaded as `run` does), recording
 * every event; `onEvent` sees each one as it happens (e.g. to change the simulator's faults).
 */
export async function runYaml(
  yaml: string,
  opts: { onEvent?: (e: RunEvent) => void } & Partial<
    Pick<RunOptions, "force" | "critical" | "signal" | "timeScale" | "writesProbe">
  > = {},
): Promise<{ result: RunResult; events: RunEvent[] }> {
  const { onEvent, ...rest } = opts;
  const loaded = await parseRunbook(yaml, "rb.yaml", { env: {} });
  expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
  const events: RunEvent[] = [];
  const result = await runRunbook({
    loaded,
    registry,
    listeners: [(e) => void events.push(e), (e) => onEvent?.(e)],
    print: () => undefined,
    ...rest,
  });
  return { result, events };
}

/** The run's `decision` events. */
export const decisions = (events: RunEvent[]): RunEventOf<"decision">[] =>
  events.filter((e): e is RunEventOf<"decision"> => e.type === "decision");

/**
 * An undo that is slow and starts a child of its own (`node slow-undo.mjs pids.json` in `dir`):
 * both pids are written to the file whose path this returns, once it runs, for the test to find
 * (and kill) what a forced exit should have killed.
 */
export function slowUndo(dir: string): string {
  writeFileSync(
    join(dir, "slow-undo.mjs"),
    `import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
writeFileSync(process.argv[2], JSON.stringify([process.pid, child.pid]));
setTimeout(() => {}, 60000);
`,
  );
  return join(dir, "pids.json");
}
