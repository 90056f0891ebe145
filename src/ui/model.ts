/**
 * What the UI shows of the run: a view of the cutover's read model (src/model/fold.ts), one per
 * UI (no module state). Both renderers read it; only the default renderer draws `panel()`.
 */
import type { Colors } from "picocolors/types.js";
import { verifierDocsText } from "../text.js";
import type { RunEvent, RunEventMap } from "../events.js";
import { windowShares, type WindowTracker, type WriteStopWindow } from "../fleet/window.js";
import { windowBoundOf, windowLength } from "../writes-words.js";
import { traitsOf } from "../steps/index.js";
import { COPY_DEFAULTS, copyProgress } from "../fleet/eta.js";
import type { CopyOptions, CopyState, CopyView } from "../fleet/eta.js";
import { CutoverFold } from "../model/fold.js";
import {
  fleetReadiness,
  readinessLine,
  readinessSummary,
  type Readiness,
  type ReadinessPlan,
} from "../model/readiness.js";
import { fleetStatesLine, highestLagLine, SUMMARY_ABOVE } from "../model/fleet-summary.js";
import type { ModelInstance, ModelVerifier } from "../model/contract.js";
import {
  bar,
  formatBytes,
  formatClock,
  formatDuration,
  formatValue,
  formatWaitStatus,
  undoLeftStopped,
  type UndoLeftStopped,
} from "./format.js";

export type StepInfo = RunEventMap["run.started"]["steps"][number];

/** An instance as the live view shows it: the read model's (src/model/contract.ts). */
export type InstanceView = ModelInstance;
export type VerifierView = ModelVerifier;

export interface HookView {
  use: string;
  undo: boolean;
  /** An undo's call as a command an operator can run by hand (redacted). */
  command?: string;
  ok?: boolean;
  error?: string;
  durationMs?: number;
}

type Decision = RunEventMap["decision"];
type Log = RunEventMap["log"];

/** The verifier's six counters (and the contract's `recheckTasks` when sent), with short labels. */
export const VERIFIER_COUNTERS: readonly (readonly [string, string])[] = [
  ["totalTasks", "total"],
  ["completedTasks", "completed"],
  ["processingTasks", "processing"],
  ["addedTasks", "added"],
  ["failedTasks", "failed"],
  ["metadataMismatchTasks", "mismatch"],
  ["recheckTasks", "recheck"],
];

/** A condition not met yet: pending (the wait goes on), not a failure. */
export const PENDING = "○";

/**
 * The live view's lines, from the cutover's read model (src/model/fold.ts: the steps, the one
 * running, the fleet, the copy, the verifier, waits, hooks, decisions and the write-stop window).
 * What only a terminal needs is kept here: which steps showed progress or the verifier, and the
 * log lines under a step.
 */
export class UiModel {
  readonly fold: CutoverFold;
  /** Steps during which progress / verifier answers arrived: only those show them. */
  readonly progressSteps = new Set<number>();
  readonly verifierSteps = new Set<number>();
  readonly logs = new Map<number, Log[]>();
  readonly #copyOptions: CopyOptions;
  readonly #plan: ReadinessPlan;
  /** The run is a rehearsal (its `run.started` said so): a stopWrites left stopped is told so. */
  #rehearsal = false;

  /** A rehearsal's: it journals nothing, and what `syncbook status` reads is the runbook's real fleet. */
  get rehearsal(): boolean {
    return this.#rehearsal;
  }

  constructor(copyOptions: CopyOptions = COPY_DEFAULTS, plan: ReadinessPlan = {}) {
    this.#copyOptions = copyOptions;
    this.#plan = plan;
    this.fold = new CutoverFold({ traits: traitsOf, copy: copyOptions });
  }

  /**
   * The earlier runs of this cutover (a resumed journal's events, the runs a `--from` run
   * continues), oldest first: only the write-stop window takes them, so the clock of writes stopped
   * in a run that died keeps running in the run that goes on; the steps drawn are this run's.
   */
  seedWindow(earlier: readonly RunEvent[]): void {
    for (const e of earlier) this.fold.window.apply(e);
    this.fold.window.takeClosed();
  }

  /** The runbook's steps (the last run's list). */
  get steps(): StepInfo[] {
    return this.fold.steps().map((s) => ({ index: s.index, id: s.id, kind: s.kind, title: s.title }));
  }

  /** The fleet as last read, by instance index. */
  get instances(): Map<number, InstanceView> {
    return new Map(this.fold.instances().map((i) => [i.index, i]));
  }

  get copy(): CopyState {
    return this.fold.copyState();
  }

  get verifier(): VerifierView | undefined {
    return this.fold.verifier();
  }

  /** The write-stop window (writes stopped → canWrite): its clock runs in the panel while open. */
  get window(): WindowTracker {
    return this.fold.window;
  }

  get current(): number | undefined {
    return this.fold.current;
  }

  stepOf(index: number): StepInfo | undefined {
    return this.steps.find((s) => s.index === index);
  }

  /** The decisions taken for a step (-1: outside any step). */
  decisionsOf(index: number): Decision[] {
    return this.fold
      .decisions()
      .filter((d) => (d.index ?? -1) === index)
      .map((d) => ({
        kind: d.kind,
        ok: d.ok,
        reason: d.reason,
        ...(d.index !== undefined ? { index: d.index } : {}),
        ...(d.id !== undefined ? { id: d.id } : {}),
        ...(d.check !== undefined ? { check: d.check } : {}),
      }));
  }

  /** The hook calls (and undos) of a step, as the panel shows them. */
  hooksOf(index: number): HookView[] {
    return this.fold
      .hooks()
      .filter((h) => h.index === index)
      .map((h) => ({
        use: h.use,
        undo: h.undo,
        ...(h.command !== undefined ? { command: h.command } : {}),
        ...(h.ok !== undefined ? { ok: h.ok } : {}),
        ...(h.error !== undefined ? { error: h.error } : {}),
        ...(h.durationMs !== undefined ? { durationMs: h.durationMs } : {}),
      }));
  }

  /**
   * A stopWrites step whose last undo failed: the application's writes are still stopped, and
   * the run's summary must say so (the journal's reader says the same for `syncbook status`).
   */
  writesLeftStopped(): UndoLeftStopped | undefined {
    return undoLeftStopped(this.fold.steps(), (i) => this.hooksOf(i), {
      rehearsal: this.#rehearsal,
      committed: false,
      writesOnSeen: this.fold.window.current()?.writesOnAt !== undefined,
    });
  }

  /**
   * The run's closing message, short when it only repeats a failing step's paragraph this
   * renderer showed (with its hint and place) as the step failed: said once, not three times.
   */
  toldAbove(message: string | undefined): string | undefined {
    if (message === undefined) return undefined;
    for (const s of this.fold.steps())
      for (const a of s.attempts)
        if (a.outcome === "failed" && a.error !== undefined && message === `step ${s.id} failed: ${a.error}`)
          return `step ${s.id} failed (said above)`;
    return undefined;
  }

  /**
   * `03:14:07 · 1m 12s into this step · 28m 48s left of its 30m time limit`: the wall clock (an
   * operator compares it with the change window) and the time the step has left before it fails.
   */
  clockLine(index: number, c: Colors, now: number = Date.now()): string {
    const s = this.fold.step(index);
    const parts = [formatClock(now)];
    if (s?.startedAt !== undefined && s.attempts.length > 0) {
      parts.push(`${formatDuration(Math.max(0, now - s.startedAt))} into this step`);
      if (s.timeoutMs !== undefined)
        parts.push(
          `${formatDuration(Math.max(0, s.startedAt + s.timeoutMs - now), "down")} left of its ${formatDuration(s.timeoutMs)} time limit`,
        );
    }
    return c.dim(parts.join(" · "));
  }

  apply(e: RunEvent): void {
    this.fold.apply(e);
    const current = this.fold.current;
    switch (e.type) {
      case "run.started":
        this.#rehearsal = e.mode === "rehearse";
        break;
      case "progress.sampled":
        if (current !== undefined) this.progressSteps.add(current);
        break;
      case "verifier.sampled":
        if (current !== undefined) this.verifierSteps.add(current);
        break;
      case "log":
        push(this.logs, e.index ?? current ?? -1, e);
        break;
      default:
        break;
    }
  }

  copyView(): CopyView {
    return copyProgress(this.copy, this.#copyOptions);
  }

  /** `[█████░░░░░] 47% 2.3 GiB / 5 GiB ETA 4m`, or why there is no bar yet. */
  copyLine(): string | undefined {
    const v = this.copyView();
    if (!v.started) {
      const waiting = [...this.instances.values()].some(
        (i) => i.state === "RUNNING" && i.info !== "change event application",
      );
      return waiting && this.copy.window.length > 0 ? "copy: waiting for the first estimate (0 of 1)" : undefined;
    }
    const pct = Math.floor((v.fraction ?? 0) * 100);
    const eta = v.done ? "done" : `ETA ${v.eta}`;
    return `copy ${bar(v.fraction ?? 0)} ${pct}% ${formatBytes(v.copied)} / ${formatBytes(v.total)} ${eta}`;
  }

  /** One line per instance (small fleets) or a summary (large fleets). */
  instanceLines(max = SUMMARY_ABOVE, now: number = Date.now()): string[] {
    const all = [...this.instances.values()].filter((i) => i.state !== undefined || i.down);
    if (all.length === 0) return [];
    const lag = (i: InstanceView): string =>
      i.lagSeconds === null || i.lagSeconds === undefined ? "lag —" : `lag ${formatDuration(i.lagSeconds * 1000)}`;
    if (all.length <= max) {
      const w = Math.min(24, Math.max(...all.map((i) => i.label.length)));
      return all.flatMap((i) => {
        // its last answer is the past: said as such, never as its state now
        if (i.down) return [`${i.label.padEnd(w)}  ${notAnswering(i, now)}`];
        const flags = [i.canCommit ? "canCommit" : "", i.canWrite ? "canWrite" : ""].filter(Boolean).join(" ");
        const line = [i.label.padEnd(w), (i.state ?? "?").padEnd(10), lag(i).padEnd(10), i.info ?? "", flags, extras(i)]
          .filter((x) => x.trim() !== "")
          .join("  ")
          .trimEnd();
        return [line, ...warningLines(i, w)];
      });
    }
    const warned = all.filter((i) => i.warnings?.length);
    const highest = highestLagLine(all);
    return [
      fleetStatesLine(all),
      ...(highest ? [highest] : []),
      ...(warned.length > 0
        ? [`service warnings on ${warned.length}: ${warned[0]!.label}: ${warningText(warned[0]!.warnings![0])}`]
        : []),
    ];
  }

  /**
   * Each instance's readiness (`fleetReadiness`), from the sync's start until the first commit;
   * undefined while the question is not asked (before the sync runs, after a commit).
   */
  readiness(now: number = Date.now()): Readiness[] | undefined {
    const all = [...this.instances.values()].filter((i) => i.state !== undefined || i.down);
    if (!all.length || this.fold.commits().length > 0) return undefined;
    if (!all.some((i) => i.state === "RUNNING" || i.state === "PAUSED")) return undefined;
    return fleetReadiness({ instances: all, copy: this.copyView() }, { ...this.#plan, now });
  }

  /**
   * Whether each instance is ready to commit, and when it will be: the words of `status` and
   * `syncbook watch` (src/model/readiness.ts, `fleetReadiness` and `readinessLine`), from the
   * sync's start until the first commit (then the question is over). A large fleet: how many are
   * ready, and the first that is not.
   */
  readinessLines(max = SUMMARY_ABOVE, now: number = Date.now()): string[] {
    const rs = this.readiness(now);
    if (!rs) return [];
    if (rs.length <= max) {
      const w = Math.min(24, Math.max(...rs.map((r) => r.instance.length)));
      return rs.map((r) => `${r.instance.padEnd(w)}  ${readinessLine(r)}`);
    }
    return [readinessSummary(rs)];
  }

  verifierLine(c: Colors): string | undefined {
    const v = this.verifier;
    if (!v) return undefined;
    const parts = VERIFIER_COUNTERS.filter(([k]) => v.counters[k] !== undefined).map(([k, label]) => {
      const text = `${label} ${v.counters[k]}`;
      return (k === "failedTasks" || k === "metadataMismatchTasks") && (v.counters[k] ?? 0) > 0 ? c.red(text) : text;
    });
    const err = v.error !== null && v.error !== undefined ? c.red(` error: ${formatValue(v.error)}`) : "";
    // the verify progress bar: this generation's documents compared of its total (clamped: generation
    // 0's total is an estimate)
    const gen = v.generation !== undefined ? ` · generation ${v.generation}` : "";
    const docs =
      v.docs && v.docs.total > 0
        ? ` ${bar(v.docs.compared / v.docs.total)} ${verifierDocsText(v.generation, v.docs, v.gen0, formatCount)}`
        : "";
    return `verifier ${v.phase ?? "?"}${gen}${docs} · ${parts.join(", ")}${err}`;
  }

  /** `⏱ writes stopped 12.3s (…)` while the write-stop window is open. */
  windowClock(c: Colors, now: number = Date.now()): string | undefined {
    if (!this.window.open) return undefined;
    const w = this.window.current(now);
    if (!w) return undefined;
    const since = w.openedAt ?? w.measuredFrom;
    return c.magenta(
      `⏱ writes stopped ${w.openedAt === undefined ? "for " : ""}${windowLength(Math.max(0, now - since), { atLeast: w.openedAt === undefined })}: the application cannot write until the destination takes writes`,
    );
  }

  /**
   * The panel of a step while a question waits on it: the clock, the write-stop window, the copy
   * and the fleet as last read (the run reads it while the question waits), redrawn each second.
   */
  promptContext(c: Colors, index: number, now: number = Date.now()): string[] {
    const clock = this.windowClock(c, now);
    const copy = this.copyLine();
    return [
      this.clockLine(index, c, now),
      ...(clock ? [clock] : []),
      ...(copy && !this.copyView().done ? [copy] : []),
      ...this.instanceLines(6, now),
    ];
  }

  /** The live lines under a running step in the task list. */
  panel(index: number, c: Colors, now: number = Date.now()): string[] {
    const lines: string[] = [this.clockLine(index, c, now)];
    const clock = this.windowClock(c, now);
    if (clock) lines.push(clock);
    const step = this.fold.step(index);
    const wait = step?.wait;
    // not met yet is pending, not failed: a neutral mark, never a red or yellow ✗
    if (wait && !wait.met) for (const l of formatWaitStatus(wait)) lines.push(`${c.dim(PENDING)} ${l}`);
    // a stall said until the wait is met
    const slow = step?.slow.at(-1);
    if (slow && !(wait?.met && wait.at >= slow.at))
      lines.push(c.yellow(`no progress for ${formatDuration(slow.stalledForMs)}: ${slow.detail}`));
    if (this.progressSteps.has(index)) {
      const copy = this.copyLine();
      // the copy bar while the copy runs, and its end (100%, how long) while a wait is judged on it
      if (copy && (!this.copyView().done || wait !== undefined)) lines.push(copy);
      lines.push(...this.instanceLines(6, now));
      const ready = this.readinessLines(6, now);
      if (ready.length) lines.push(c.dim("ready to commit?"), ...ready);
    }
    if (this.verifierSteps.has(index)) {
      const v = this.verifierLine(c);
      if (v) lines.push(v);
    }
    for (const h of this.hooksOf(index)) lines.push(hookLine(h, c));
    for (const d of this.decisionsOf(index).slice(-3)) lines.push(decisionLine(d, c));
    const logs = (this.logs.get(index) ?? []).filter((l) => l.level !== "debug");
    const last = logs[logs.length - 1];
    if (last) lines.push(logLine(last, c));
    return lines;
  }
}

/** `not answering for 12s · last answer 14s ago: RUNNING canCommit · cannot connect: …`: the past said as the past. */
function notAnswering(i: InstanceView, now: number): string {
  const since = formatDuration(Math.max(0, now - (i.down?.since ?? now)));
  const last =
    i.answeredAt === undefined
      ? "no answer yet"
      : `last answer ${formatDuration(Math.max(0, now - i.answeredAt))} ago: ${[i.state ?? "?", i.canCommit ? "canCommit" : ""].filter(Boolean).join(" ")}`;
  // the row names the instance: its URL again would push the cause off the screen
  const why = (i.down?.error ?? "").replace(/^\S+:\/\/\S+: /, "");
  return `not answering for ${since} · ${last}${why ? ` · ${why.length > 60 ? `${why.slice(0, 59)}…` : why}` : ""}`;
}

/** `ping 3 ms · CEA catch-up ~2m · indexes indexesBuilt 4, totalIndexesToBuild 12`: what later versions add. */
function extras(i: InstanceView): string {
  const parts: string[] = [];
  if (i.indexBuilding) {
    // the shape is not documented: its scalar fields, as sent
    const fields = Object.entries(i.indexBuilding)
      .filter(([, v]) => typeof v === "number" || typeof v === "string" || typeof v === "boolean")
      .slice(0, 4)
      .map(([k, v]) => `${k} ${String(v)}`);
    parts.push(`indexes ${fields.join(", ") || "building"}`);
  }
  if (i.ceaCatchupSeconds !== undefined) parts.push(`CEA catch-up ~${formatDuration(i.ceaCatchupSeconds * 1000)}`);
  if (i.pingLatencyMs !== undefined)
    parts.push(i.pingLatencyMs < 0 ? "ping failed" : `ping ${formatDuration(i.pingLatencyMs)}`);
  return parts.join(" · ");
}

function warningText(w: unknown): string {
  const s = typeof w === "string" ? w : JSON.stringify(w);
  return s.length > 120 ? `${s.slice(0, 119)}…` : s;
}

function warningLines(i: InstanceView, indent: number): string[] {
  const list = i.warnings ?? [];
  const shown = list.slice(0, 2).map((w) => `${" ".repeat(indent)}  ⚠ ${warningText(w)}`);
  return list.length > 2 ? [...shown, `${" ".repeat(indent)}  ⚠ and ${list.length - 2} more`] : shown;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** `1.2M`, `830k`, `42`: document counts at a glance. */
function formatCount(n: number): string {
  if (n >= 1e9) return `${+(n / 1e9).toFixed(1)}G`;
  if (n >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  return String(Math.round(n));
}

export function hookLine(h: HookView, c: Colors): string {
  const name = `${h.undo ? "undo " : ""}hook ${h.use}`;
  if (h.ok === undefined) return `${name} running…`;
  const took = h.durationMs !== undefined ? ` ${formatDuration(h.durationMs)}` : "";
  return h.ok ? `${name} ${c.green("ok")}${took}` : c.red(`${name} failed${took}${h.error ? `: ${h.error}` : ""}`);
}

export function decisionLine(d: Decision, c: Colors): string {
  const what = `${d.kind}${d.check ? ` ${d.check}` : ""}`;
  // a retry or a reconcile is the runner coping, not a success: no ✓ ("✓ retry: progress failing")
  if (d.ok && (d.kind === "retry" || d.kind === "reconcile")) return c.yellow(`↻ ${d.reason}`);
  // refusals are the one thing an operator must not miss: red, with the reason
  if (d.ok) return c.dim(`✓ ${what}: ${d.reason}`);
  return c.red(`✗ ${what}${d.kind === "interlock" ? " refused" : ""}: ${d.reason}`);
}

export function logLine(l: Log, c: Colors): string {
  if (l.level === "error") return c.red(l.message);
  if (l.level === "warn") return c.yellow(l.message);
  return l.message;
}

/** `4.2s (service 3.9s · runner 120ms)`: a window's length and shares, for lines. */
export function windowSummary(w: WriteStopWindow): string {
  // the shares are of the measured span, which runs to the write-on hook once it ran: the length
  // they add up to (the window alone said "28ms (service 11ms · runner 70ms …)" at writes on). That
  // one is two timestamps': no "at most" of a window's end seen late applies to it
  const bound = windowBoundOf(w);
  if (w.toWritesOnMs !== undefined)
    return `${windowLength(w.toWritesOnMs, { atLeast: bound.atLeast, unseenMs: undefined })} (${windowShares(w)})`;
  return `${windowLength(w.durationMs ?? w.measuredMs, bound)} (${windowShares(w)})`;
}
