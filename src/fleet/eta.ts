/**
 * Fleet-wide collection copy progress and its ETA, as a pure reducer: state in, state out.
 *
 * Spec facts this follows (sync-service-api.md, progress response):
 * - `estimatedTotalBytes` is the global total (every instance reports the same number), while
 *   `estimatedCopiedBytes` is this instance's share. So the fleet is `sum(copied) / max(total)`,
 *   never `sum(total)`, which would show a 3-instance fleet stuck at 33%.
 * - "Before the collection copy phase, estimatedCopiedBytes is 0 and estimatedTotalBytes is 1"
 *   and after a live upgrade to 1.8.0+ progress "restarts from 0 copied of 1 total": a total of
 *   1 (or less) is a placeholder, not a size; there is no percent and no ETA then.
 * - The total "may change during copy": any change of an instance's total, any drop of its
 *   copied bytes, or a new instance joining with bytes already copied restarts the rate window,
 *   because a rate measured across such a jump is meaningless (often negative or huge).
 *
 * The rate is the least-squares slope of the summed copied bytes over a sliding time window,
 * which smooths the staircase that per-instance answers of one polling round produce.
 */
import type { Progress } from "../api/types.js";
import { formatDuration } from "../runbook/duration.js";

export interface CopyOptions {
  /** Samples older than this (relative to the newest) leave the window. */
  windowMs: number;
  /** Fewer samples than this since the last reset: no ETA yet ("…"). */
  minSamples: number;
  /** The window must span at least this long (or two poll intervals, if shorter) before its slope is trusted. */
  minSpanMs: number;
  /** An ETA beyond this is not shown as a number (">7d"): it only says "very slow". */
  maxEtaMs: number;
  /** Hard cap on kept samples, whatever the poll rate. */
  maxSamples: number;
}

export const COPY_DEFAULTS: CopyOptions = {
  windowMs: 60_000,
  minSamples: 3,
  minSpanMs: 3_000,
  maxEtaMs: 7 * 24 * 3600_000,
  maxSamples: 240,
};

export interface InstanceCopy {
  copied: number;
  total: number;
}

export interface CopyPoint {
  t: number;
  copied: number;
}

export interface CopyState {
  readonly instances: Readonly<Record<string, InstanceCopy>>;
  /**
   * Summed copied bytes over time since the last reset. Its last point's `copied` is the sum of
   * `instances`' copied bytes (`addCopySample` keeps it so, and reads it for an unchanged answer).
   */
  readonly window: readonly CopyPoint[];
  /** How many times the window restarted (estimate changed, copy restarted). */
  readonly resets: number;
  /** Why the window last restarted, for display. */
  readonly resetReason?: string;
  /**
   * `began`: an instance left the 0-of-1 placeholder (the normal start of a copy, not news);
   * `changed`: the estimate moved; `restarted`: back to 0 of 1 (live upgrade) or copied fell.
   */
  readonly resetKind?: "began" | "changed" | "restarted" | "joined";
}

export interface CopyView {
  /** False while every instance reports the 0-of-1 placeholder (or nothing). */
  started: boolean;
  done: boolean;
  copied: number;
  total: number;
  /** 0..1, undefined before the copy started. */
  fraction?: number;
  /** Bytes per second, undefined until enough samples. */
  rate?: number;
  /** Milliseconds left; undefined when unknown, stalled or absurd. */
  etaMs?: number;
  /** What to print after "ETA": `4m`, `…` (measuring), `stalled`, `>7d`, `done`, `—` (not started). */
  eta: string;
}

export function emptyCopyState(): CopyState {
  return { instances: {}, window: [], resets: 0 };
}

function isPlaceholder(c: InstanceCopy): boolean {
  return c.total <= 1;
}

function sums(instances: Readonly<Record<string, InstanceCopy>>): { copied: number; total: number } {
  let copied = 0;
  let total = 0;
  for (const c of Object.values(instances)) {
    copied += c.copied;
    total = Math.max(total, c.total);
  }
  return { copied, total };
}

/** Reads `collectionCopy` from a progress body (or its `{ success, progress }` envelope). */
export function readCollectionCopy(progress: Progress): InstanceCopy | undefined {
  const copied = progress.collectionCopy?.estimatedCopiedBytes;
  const total = progress.collectionCopy?.estimatedTotalBytes;
  if (copied === undefined || total === undefined) return undefined;
  return { copied: Math.max(0, copied), total: Math.max(0, total) };
}

/**
 * Adds one instance's answer at time `t`. `sample` undefined means the instance reports no copy
 * figures (IDLE, or a failed read): its last figures are kept, since a failed poll is not a restart.
 */
export function addCopySample(
  state: CopyState,
  instance: string,
  sample: InstanceCopy | undefined,
  t: number,
  opts: CopyOptions = COPY_DEFAULTS,
): CopyState {
  if (sample === undefined) return state;
  const prev = state.instances[instance];
  const last = state.window[state.window.length - 1];
  // time never runs backwards inside a window (events from one runner, but be defensive)
  const at = last !== undefined ? Math.max(t, last.t) : t;
  // the same figures as this instance's last (every answer once the copy is done, so every answer
  // of the write-stop window): the fleet's sum is the last point's, and the instances stay as they
  // are. Copying them for each answer cost a fleet of 64 a copy of 64 entries per answer, the
  // larger part of the read model's work on an answer inside the window (issue 41).
  if (prev !== undefined && last !== undefined && sample.copied === prev.copied && sample.total === prev.total)
    return { ...state, window: slide([...state.window, { t: at, copied: last.copied }], at, opts) };
  const instances = { ...state.instances, [instance]: sample };
  const fleet = sums(instances);
  let reason: string | undefined;
  let kind: CopyState["resetKind"];
  if (prev === undefined) {
    if (sample.copied > 0 && state.window.length > 0) [reason, kind] = [`instance ${instance} joined`, "joined"];
  } else if (sample.total !== prev.total) {
    if (isPlaceholder(sample)) [reason, kind] = [`instance ${instance} restarted the copy (0 of 1)`, "restarted"];
    else if (isPlaceholder(prev)) [reason, kind] = [`instance ${instance} began copying`, "began"];
    else
      [reason, kind] = [
        `the estimate changed on instance ${instance}: ${prev.total} → ${sample.total} bytes`,
        "changed",
      ];
  } else if (sample.copied < prev.copied) {
    [reason, kind] = [`instance ${instance} copied bytes went back: ${prev.copied} → ${sample.copied}`, "restarted"];
  }
  if (reason !== undefined) {
    return {
      instances,
      window: [{ t: at, copied: fleet.copied }],
      resets: state.resets + 1,
      resetReason: reason,
      ...(kind ? { resetKind: kind } : {}),
    };
  }
  return { ...state, instances, window: slide([...state.window, { t: at, copied: fleet.copied }], at, opts) };
}

/** The window after a point at `at`: its oldest points leave it (changes `window`, a fresh copy). */
function slide(window: CopyPoint[], at: number, opts: CopyOptions): CopyPoint[] {
  // keep at least minSamples, so a slow poll interval still yields an estimate
  while (
    window.length > opts.minSamples &&
    (window.length > opts.maxSamples || (window[0]?.t ?? at) < at - opts.windowMs)
  )
    window.shift();
  return window;
}

/** Least-squares slope (bytes per ms) of the window; undefined when it cannot be trusted. */
function slope(window: readonly CopyPoint[], opts: CopyOptions): number | undefined {
  const first = window[0];
  const last = window[window.length - 1];
  if (first === undefined || last === undefined) return undefined;
  if (window.length < opts.minSamples) return undefined;
  // the window must span minSpanMs, or two poll rounds when polls come faster (a rehearsal's clock
  // runs 50× faster: its whole copy can take less wall time than minSpanMs, and its ETA would
  // never show). A round is the longest gap between samples (the instances of one round answer
  // within milliseconds of each other).
  let poll = 0;
  for (let i = 1; i < window.length; i++) poll = Math.max(poll, window[i]!.t - window[i - 1]!.t);
  let rounds = 1;
  for (let i = 1; i < window.length; i++) if (window[i]!.t - window[i - 1]!.t >= Math.max(5, poll / 4)) rounds++;
  if (last.t - first.t < opts.minSpanMs && (rounds < 3 || last.t - first.t < 2 * poll)) return undefined;
  const n = window.length;
  let st = 0;
  let sc = 0;
  for (const p of window) {
    st += p.t - first.t;
    sc += p.copied;
  }
  const mt = st / n;
  const mc = sc / n;
  let num = 0;
  let den = 0;
  for (const p of window) {
    const dt = p.t - first.t - mt;
    num += dt * (p.copied - mc);
    den += dt * dt;
  }
  if (den === 0) return undefined;
  return num / den;
}

export function copyProgress(state: CopyState, opts: CopyOptions = COPY_DEFAULTS): CopyView {
  const fleet = sums(state.instances);
  const started = fleet.total > 1 && Object.values(state.instances).some((c) => !isPlaceholder(c));
  if (!started) return { started: false, done: false, copied: 0, total: 0, eta: "—" };
  const copied = Math.min(fleet.copied, fleet.total);
  const fraction = copied / fleet.total;
  if (copied >= fleet.total)
    return { started, done: true, copied, total: fleet.total, fraction: 1, etaMs: 0, eta: "done" };
  const s = slope(state.window, opts);
  if (s === undefined) return { started, done: false, copied, total: fleet.total, fraction, eta: "…" };
  const rate = Math.max(0, s * 1000);
  // below one byte a second over the window nothing is moving: say so rather than "ETA 90y"
  if (rate < 1) return { started, done: false, copied, total: fleet.total, fraction, rate: 0, eta: "stalled" };
  const etaMs = ((fleet.total - copied) / rate) * 1000;
  if (!Number.isFinite(etaMs) || etaMs > opts.maxEtaMs)
    return {
      started,
      done: false,
      copied,
      total: fleet.total,
      fraction,
      rate,
      eta: `>${formatDuration(opts.maxEtaMs)}`,
    };
  return { started, done: false, copied, total: fleet.total, fraction, rate, etaMs, eta: formatEtaShort(etaMs) };
}

// rounded up to the second: an ETA must not promise more than it knows
const formatEtaShort = (ms: number): string => formatDuration(Math.max(1, Math.ceil(ms / 1000)) * 1000, "up");
