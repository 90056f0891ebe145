/**
 * `syncbook rehearse`: the runbook against an in-process simulated fleet shaped like it (its
 * clusters, its number of instances, its service version, or the current release when it declares
 * none). The runbook is pointed at the
 * simulator by rewriting every URL of its instances and verifier (also inside hook options, so a
 * hook that calls `http://127.0.0.1:27182/sim/writes` reaches simulated instance 0), and its
 * stop-writes hooks become the simulator's writes switch unless `keepHooks`.
 */
import { startSimulator, type SimulatorOptions } from "../sim/index.js";
import { CURRENT_SERVICE_VERSION } from "../sim/versions.js";
import type { LoadedRunbook } from "../runbook/index.js";
import { bindStep, type WritesProbe } from "../steps/index.js";
import type { Runbook } from "../runbook/types.js";
import { metadataDiffers, verdictKind, verdictWord, verifierText, type Verdict } from "./verdict.js";
import { lintWithLoader } from "../lint/rules.js";
import { formatDuration } from "../runbook/duration.js";
import { commitWords } from "../writes-words.js";
import { ExitCode, UserError } from "../errors.js";

export { verifierText, verdictKind, verdictWord, type Verdict } from "./verdict.js";

export interface RehearsalOptions {
  keepHooks?: boolean;
  /** Simulated seconds per wall second (default 50). */
  timeScale?: number;
  /** Data to copy (default 2GiB). */
  data?: string;
  faults?: string[];
  seed?: number;
  /**
   * The namespace set `syncbook preflight --list-namespaces --format json` read from the real
   * source: the rehearsal copies that much data over that many collections (the shape of the real
   * copy), instead of the defaults. `data` wins over its byte total when both are given.
   */
  namespaces?: { collections: number; bytes: number };
}

export interface Rehearsal {
  loaded: LoadedRunbook;
  sim: Awaited<ReturnType<typeof startSimulator>>;
  timeScale: number;
  /**
   * Whether the simulated application stopped writing: a stopWrites step passes only then (its
   * hook, the simulator's switch or with `keepHooks` the runbook's own, may have done otherwise).
   */
  writesProbe: WritesProbe;
  /** The verdict: the simulator's record, and what the run says of its verification (`verified`). */
  verdict(run: {
    verified: boolean;
    unverified?: string | undefined;
    reversed?: string | undefined;
    commitInDoubt?: true | undefined;
  }): Promise<Verdict>;
  close(): Promise<void>;
}

/**
 * Where a rehearsal needs no value: the parts of the runbook its stand-ins replace, so an unset
 * `${env.*}` there (a webhook, a token) is not asked for (`LoadOptions.standIn`). The instances
 * and the verifier (the simulator's own URLs replace them), and the calls `callStandIns` names.
 * A step's `when:` and everything the rehearsal runs as written still need their values.
 */
export function rehearsalStandIns(keepHooks: boolean): (raw: unknown) => (path: (string | number)[]) => boolean {
  return (raw) => {
    const calls = callStandIns(keepHooks)(raw);
    return (path) => path[0] === "instances" || path[0] === "verifier" || calls(path);
  };
}

/**
 * The calls a rehearsal stands in for: `notify:` (a line on the terminal instead), and each
 * step's kind body that its kind's stand-in replaces (stopWrites, hooks, plugin steps unless
 * `keepHooks`; notify steps), asked of the kind itself on the raw step. `syncbook
 * status` reads none of them either (it reads the fleet, the verifier and the journals), so an
 * unset secret there does not keep it from running (a person on the bridge call has no secrets).
 */
export function callStandIns(keepHooks: boolean): (raw: unknown) => (path: (string | number)[]) => boolean {
  return (raw) => {
    const steps = (raw as { steps?: unknown } | undefined)?.steps;
    // by step, the keys whose value the stand-in replaced (the kind's body; a plugin step's own key)
    const replaced = new Map<number, Set<string>>();
    if (Array.isArray(steps))
      steps.forEach((step: unknown, i) => {
        try {
          const s = step as Record<string, unknown>;
          const stood = bindStep(s as never).rehearsal({ simUrl: "http://127.0.0.1:1", keepHooks }) as Record<
            string,
            unknown
          >;
          replaced.set(i, new Set(Object.keys(s).filter((k) => stood[k] !== s[k])));
        } catch {
          // not a step the kinds know: the schema says so; nothing is stood in for it
        }
      });
    return (path) =>
      path[0] === "notify" ||
      (path[0] === "steps" &&
        typeof path[1] === "number" &&
        typeof path[2] === "string" &&
        replaced.get(path[1])?.has(path[2]) === true);
  };
}

/**
 * The simulated fleet's clusters as the runbook draws them, the one reading of it (a rehearsal's
 * and `syncbook sim --runbook`'s): topology, shard count and server version; where the runbook
 * does not say (a sharded cluster without `shards`), what the simulator takes, said in `shape`.
 */
export function simulatedShape(rb: Runbook): { clusters?: SimulatorOptions["clusters"]; shape: string[] } {
  const shape: string[] = [];
  if (!rb.clusters || Object.keys(rb.clusters).length === 0) return { shape };
  const clusters = Object.fromEntries(
    Object.entries(rb.clusters).map(([name, c]) => {
      const sharded = c?.topology === "sharded";
      // a sharded cluster without `shards`: one shard per instance (one instance syncs one source shard)
      const shards = c?.shards ?? (sharded ? Math.max(2, rb.instances.length) : undefined);
      if (sharded && c?.shards === undefined)
        shape.push(`${name}: sharded, its shard count not in the runbook: simulated with ${shards}`);
      return [
        name,
        {
          topology: c?.topology ?? "replicaSet",
          ...(shards ? { shards } : {}),
          ...(c?.serverVersion ? { version: c.serverVersion } : {}),
        },
      ];
    }),
  ) as NonNullable<SimulatorOptions["clusters"]>;
  return { clusters, shape };
}

export async function prepareRehearsal(loaded: LoadedRunbook, opts: RehearsalOptions = {}): Promise<Rehearsal> {
  const rb = loaded.runbook;
  if (!rb) throw new Error("prepareRehearsal needs a valid runbook");
  const timeScale = opts.timeScale ?? 50;
  const simOpts: SimulatorOptions = {
    instances: rb.instances.length,
    timeScale,
    // the simulator splits the data across the instances, a byte each at least: an empty namespace
    // set (0 bytes) is rehearsed as that, not refused
    data: opts.data ?? (opts.namespaces ? Math.max(rb.instances.length, opts.namespaces.bytes) : "2GiB"),
    ...(opts.namespaces
      ? { dataSet: { collections: Math.min(100_000, Math.max(1, opts.namespaces.collections)) } }
      : {}),
    // a runbook that declares no version is rehearsed against the current release: every version
    // before 1.20 is end of life (service facts, "Supported versions"), and the current one has
    // the most conditions a window meets (the embedded verifier, canCommit's lag limit, INITIALIZING)
    serviceVersion: rb.serviceVersion ?? CURRENT_SERVICE_VERSION,
    ...(opts.faults?.length ? { faults: opts.faults } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
  };
  // the fleet as the runbook draws it; where it does not say (a sharded cluster's shard count),
  // what the simulator takes is said in the verdict
  const { clusters, shape } = simulatedShape(rb);
  if (clusters) simOpts.clusters = clusters;
  // what lint knows travels with the verdict: a safe rehearsal does not make a warning go away
  const diags = lintWithLoader(loaded);
  const lint = {
    warnings: diags.filter((d) => d.severity === "warning").map((d) => `${d.rule} at line ${d.line}`),
    accepted: diags.filter((d) => d.accepted !== undefined).map((d) => `${d.rule} at line ${d.line}: ${d.accepted}`),
  };
  const sim = await startSimulator(simOpts).catch((err: unknown) => {
    throw simulatorRefused(err, rb.instances.length, simOpts.serviceVersion ?? CURRENT_SERVICE_VERSION);
  });
  const origins = new Map<string, string>();
  rb.instances.forEach((inst, i) => {
    const url = typeof inst === "string" ? inst : inst.url;
    const to = sim.instances[i]?.url;
    if (to) origins.set(origin(url), to);
  });
  if (rb.verifier) origins.set(origin(rb.verifier), sim.verifierUrl);
  const rewritten = rewriteUrls(rb, origins) as Runbook;
  // the fleet itself is replaced outright, never by text: whatever the URLs look like (userinfo,
  // paths, env-made), a rehearsal must send nothing to the real instances or verifier
  rewritten.instances = rb.instances.map((inst, i) => {
    const url = sim.instances[i]?.url ?? "";
    return typeof inst === "string" ? url : { ...inst, url };
  });
  rewritten.verifier = sim.verifierUrl;
  // a rehearsal touches nothing real: each kind says what stands in for it (stop-writes hooks
  // become the simulator's switch, other hooks and plugin steps a line on the terminal, unless
  // --keep-hooks runs them; notifications are never sent)
  const to = { simUrl: sim.instances[0]?.url ?? "", keepHooks: opts.keepHooks === true };
  rewritten.steps = rewritten.steps.map((s) => bindStep(s).rehearsal(to));
  // notifiers print a stand-in line for each event they would have sent (README: nobody is paged
  // by a rehearsal, with or without --keep-hooks)
  if (rb.notify?.length)
    rewritten.notify = rb.notify.map((n) => ({
      use: "stdout",
      on: n.on,
      with: { text: `rehearsal: ${n.use} notification not sent:` },
    }));
  return {
    loaded: { ...loaded, runbook: rewritten },
    sim,
    timeScale,
    writesProbe: () => {
      const w = sim.control.state().writes;
      const stopped = !w.enabled || w.ratePerSecond === 0;
      return Promise.resolve({
        stopped,
        detail: stopped
          ? "the simulated application writes nothing"
          : `the simulated application writes ${w.ratePerSecond}/s`,
      });
    },
    verdict: async (run) => {
      const st = sim.control.state();
      let failedTasks: number | null = null;
      let metadataMismatchTasks: number | null = null;
      if (st.verifier.exited === null) {
        try {
          const r = await fetch(`${sim.verifierUrl}/api/v1/progress`);
          const body = (await r.json()) as {
            progress?: { verificationStatus?: { failedTasks?: number; metadataMismatchTasks?: number } };
          };
          failedTasks = body.progress?.verificationStatus?.failedTasks ?? null;
          metadataMismatchTasks = body.progress?.verificationStatus?.metadataMismatchTasks ?? null;
        } catch {
          failedTasks = null;
        }
      }
      const committed = st.instances.filter((i) => i.state === "COMMITTED").length;
      // sentences, as the simulator words them (the rest of the record is in /sim/state)
      const fleetErrors = st.fleetErrors.map((e) => e.message);
      return {
        committed,
        instances: st.instances.length,
        states: st.instances.map((i) => i.state),
        writesLost: st.writes.lost,
        verifier: {
          phase: st.verifier.phase,
          failedTasks,
          metadataMismatchTasks,
          error: st.verifier.error,
          checks: st.verifier.checks,
          exited: st.verifier.exited,
        },
        fleetErrors,
        simSeconds: st.time.simSeconds,
        lint,
        ...(shape.length ? { shape } : {}),
        safe:
          st.writes.lost === 0 &&
          fleetErrors.length === 0 &&
          !(failedTasks !== null && failedTasks > 0) &&
          !metadataDiffers(metadataMismatchTasks, committed, st.instances.length) &&
          st.verifier.error === null,
        ...(run.reversed !== undefined ? { reversed: run.reversed } : {}),
        ...(run.commitInDoubt ? { commitInDoubt: true as const } : {}),
        verified: run.verified,
        ...(run.verified || run.unverified === undefined ? {} : { unverified: run.unverified }),
      };
    },
    close: () => sim.close(),
  };
}

/** `http://user:pw@h:1/x` → `http://h:1` (what hook options usually embed). */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function rewriteUrls(node: unknown, origins: ReadonlyMap<string, string>): unknown {
  if (typeof node === "string") {
    let out = node;
    for (const [from, to] of origins) {
      // the origin with or without userinfo (`http://user:pw@host:port`)
      const [scheme, rest] = from.split("://") as [string, string];
      out = out.replace(new RegExp(`${escape(scheme)}://(?:[^/@\\s]*@)?${escape(rest)}(?![0-9])`, "g"), to);
    }
    return out;
  }
  if (Array.isArray(node)) return node.map((n) => rewriteUrls(n, origins));
  if (node && typeof node === "object")
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, rewriteUrls(v, origins)]));
  return node;
}

const escape = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The verdict for people. Its headline and the command's exit code say the same thing: the run's
 * own outcome first (`runExitCode`, when given: FAILED with it), then safety (SAFE exit 0, UNSAFE
 * exit 1); nothing unsafe seen but no verification earned is NOT VERIFIED (exit 0: lint's
 * `commit-without-verify` says so before), never SAFE.
 */
/** Each instance's state in order; a big fleet's as counts (`RUNNING on 1020, COMMITTED on 4`): one line, not thousands of words. */
function statesText(states: readonly string[]): string {
  if (states.length <= 8) return states.join(", ");
  const counts = new Map<string, number>();
  for (const s of states) counts.set(s, (counts.get(s) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${s} on ${n}`).join(", ");
}

export function formatVerdict(v: Verdict, wallMs: number, runExitCode?: number): string[] {
  const word = verdictKind(v);
  const unsafe = [
    v.writesLost > 0 ? "writes lost" : "",
    v.fleetErrors.length ? "fleet errors" : "",
    v.verifier.error != null || (v.verifier.failedTasks ?? 0) > 0 ? "verification failed" : "",
    metadataDiffers(v.verifier.metadataMismatchTasks, v.committed, v.instances) ? "index metadata differs" : "",
  ]
    .filter(Boolean)
    .join(", ");
  const headline =
    runExitCode !== undefined && runExitCode !== 0
      ? // unsafe too, said as the job summary's headline says it (an outside review: the terminal
        // said FAILED alone where the summary said UNSAFE)
        `FAILED (exit ${runExitCode}${runExitCode === 3 ? ": stopped by an interlock" : runExitCode === 130 ? ": interrupted" : ": a step failed"})${word === "UNSAFE" ? ` · UNSAFE (${unsafe})` : ""}`
      : word === "SAFE"
        ? `${verdictWord(v)} (exit 0)`
        : word === "NOT VERIFIED"
          ? `${verdictWord(v)} (exit 0: nothing unsafe was seen, and nothing verified the destination: ${v.unverified ?? "no verification was earned"})`
          : `UNSAFE (exit 1: ${unsafe})`;
  const lines = [
    `rehearsal verdict: ${headline}`,
    `  committed:     ${v.committed === v.instances ? `COMMITTED on all ${v.instances} instance(s)` : v.committed > 0 ? `COMMITTED on ${v.committed} of ${v.instances} instances (${statesText(v.states)})` : `${commitWords({ committed: false, ...(v.commitInDoubt ? { commitInDoubt: true } : {}), ...(v.reversed !== undefined ? { reversed: v.reversed } : {}) })} (${statesText(v.states)})`}`,
    `  writes lost:   ${v.writesLost}${v.writesLost > 0 ? "  ← writes reached the source after commit was sent" : ""}`,
    `  verified:      ${v.verified ? "yes: a verify step passed on this cutover's verification result" : `no: ${v.unverified ?? "no verification was earned"}`}`,
    `  verifier:      ${verifierText(v)}`,
    `  fleet errors:  ${v.fleetErrors.length === 0 ? "none" : v.fleetErrors.join("; ")}`,
    `  time taken:    ${formatDuration(wallMs)} (${formatDuration(v.simSeconds * 1000)} simulated)`,
    ...(v.lint
      ? [
          `  lint:          ${v.lint.warnings.length ? `${v.lint.warnings.length} warning(s): ${v.lint.warnings.join("; ")}` : "no warnings"}${v.lint.accepted.length ? `; ${v.lint.accepted.length} accepted: ${v.lint.accepted.join("; ")}` : ""}`,
        ]
      : []),
    ...(v.shape ?? []).map((d) => `  fleet shape:   ${d}`),
  ];
  return lines;
}

/**
 * What the simulator refuses of a rehearsal's settings is the user's error, said with the fleet it
 * was checked against (exit 2), never an "internal error … please report it": a `--fault` the
 * runbook's fleet cannot take (an instance it does not have, a behaviour of another service
 * version), a `--data` smaller than a byte per instance, a runbook that names one cluster.
 */
function simulatorRefused(err: unknown, instances: number, version: string): unknown {
  if (!(err instanceof RangeError)) return err;
  const fleet =
    instances === 1
      ? "one instance, numbered 0"
      : `${instances} instances, numbered 0 to ${instances - 1} in the order \`instances\` lists them`;
  const m = err.message;
  const [what, hint] = m.startsWith("invalid fault ")
    ? [
        "--fault",
        /there is no instance/.test(m)
          ? `the runbook's fleet has ${fleet}: name one after @, e.g. --fault http500=0.2@0`
          : `the rehearsal plays service ${version}, the runbook's \`serviceVersion\` (the current release when it declares none)`,
      ]
    : /^data \(/.test(m)
      ? [
          "--data",
          `the rehearsal splits the data across the runbook's ${instances === 1 ? "one instance" : `${instances} instances`}, at least one byte each: give ${instances === 1 ? "1 byte" : `${instances} bytes`} or more, e.g. --data 2GiB`,
        ]
      : /cluster setting/.test(m)
        ? [
            "the runbook's clusters",
            "a rehearsal simulates a source and a destination: declare both under `clusters` (the start step's `source` and `destination`)",
          ]
        : [undefined, undefined];
  // any other RangeError is a bug of ours, not a setting: said as one
  if (what === undefined || hint === undefined) return err;
  return new UserError(`${what}: ${m}`, { hint, exitCode: ExitCode.usage });
}
