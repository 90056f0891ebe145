/**
 * A rehearsal's verdict and the verifier's line in it: a module of its own, importing nothing,
 * so the CI job summary can print it without loading the simulator.
 */
export interface Verdict {
  committed: number;
  /** The run's reverse (its step id) took effect and the sync it started was not committed (`RunResult.reversed`). */
  reversed?: string;
  /** The run's commit was sent and may hold, no answer or read showing it took effect (`RunResult.commitInDoubt`). */
  commitInDoubt?: true;
  instances: number;
  states: string[];
  writesLost: number;
  /**
   * The verifier at the end: its counters are the last generation's (null when unreadable). A
   * metadata mismatch is a difference too (service facts: the verifier counts index, shard-key
   * and collection-option differences only there).
   */
  verifier: {
    phase: string;
    failedTasks: number | null;
    metadataMismatchTasks: number | null;
    error: unknown;
    checks: number;
    /** Why the verifier process exited, if it did (null: it runs). */
    exited: string | null;
  };
  fleetErrors: string[];
  simSeconds: number;
  /** True when nothing unsafe happened: no writes lost, no fleet error, no verifier failure or difference. */
  safe: boolean;
  /**
   * What lint says of the runbook, which a safe rehearsal does not make go away: its warnings
   * (`rule at line N`) and the warnings the runbook accepts (`rule at line N: reason`).
   */
  lint?: { warnings: string[]; accepted: string[] };
  /** Where the simulated fleet differs from the runbook's (a shard count the runbook does not give). */
  shape?: string[];
  /**
   * A `verify` step of the run passed on this cutover's verification result (the run's word,
   * src/steps/kit/earned.ts, not the simulator's); `unverified`: why not. Nothing unsafe seen and
   * not verified is "NOT VERIFIED", never "SAFE".
   */
  verified: boolean;
  unverified?: string;
}

/** The headline of a verdict whose run finished: UNSAFE, NOT VERIFIED, or SAFE. */
export function verdictKind(v: Pick<Verdict, "safe" | "verified">): "UNSAFE" | "NOT VERIFIED" | "SAFE" {
  return !v.safe ? "UNSAFE" : v.verified ? "SAFE" : "NOT VERIFIED";
}

/**
 * `SAFE, with 2 lint warnings (hook-during-verify, instance-count)`: the verdict's headline
 * (`verdictKind`) with what lint knows.
 */
export function verdictWord(v: Pick<Verdict, "safe" | "verified" | "lint">): string {
  const w = v.lint?.warnings ?? [];
  const word = verdictKind(v);
  return w.length
    ? `${word}, with ${w.length} lint warning${w.length === 1 ? "" : "s"} (${[...new Set(w.map((x) => x.split(" ")[0]))].join(", ")})`
    : word;
}

/**
 * Index metadata that differs counts against the rehearsal once every instance is COMMITTED, not
 * before: the simulator models the service keeping unique indexes non-unique, TTL at their largest
 * value and hidden indexes visible until commit (src/sim/verifier.ts), so a rehearsal that ended
 * before its commit read "UNSAFE ()" and "the clusters differ" on a clean run (an adversarial run).
 * As published (mongodb/docs-cluster-to-cluster-sync, master, source/reference/api/commit.txt,
 * "Collection Characteristic Changes", read 2026-12-08): "`commit` resets unique indexes that
 * `mongosync` replicated as non-unique on the destination cluster", "resets `expireAfterSeconds`
 * which `mongosync` set to the value of `MAX_INT`", "resets hidden indexes that `mongosync`
 * replicated as non-hidden".
 */
export function metadataDiffers(mismatchTasks: number | null, committed: number, instances: number): boolean {
  return (mismatchTasks ?? 0) > 0 && committed === instances;
}

/** The verifier's result in one line (the rehearsal verdict, the CI job summary). */
export function verifierText(v: Pick<Verdict, "verifier" | "committed" | "instances">): string {
  const f = v.verifier;
  if (f.checks === 0) return "not run";
  if (f.exited !== null) return `exited (${f.exited})`;
  const mismatch = (f.metadataMismatchTasks ?? 0) > 0;
  const diff = (f.failedTasks ?? 0) > 0 || metadataDiffers(f.metadataMismatchTasks, v.committed, v.instances);
  return `phase ${f.phase}, failedTasks ${f.failedTasks ?? "?"}, metadataMismatchTasks ${f.metadataMismatchTasks ?? "?"}${f.error ? `, error ${JSON.stringify(f.error)}` : ""}${diff ? "  ← the clusters differ" : mismatch ? "  (index metadata differs until commit: expected before it)" : ""}`;
}
