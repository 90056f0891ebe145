/**
 * Pure text helpers shared by both renderers. No I/O, no clock: callers pass `now`.
 */
import { WRITES_LEFT_WORDS, windowLengthWords } from "../writes-words.js";
import { formatDuration } from "../runbook/duration.js";
import { formatBytes } from "../text.js";
import { nextAfterFailedUndo as failedUndoOffer, nextLines } from "../next-run.js";
import type { RunEventMap } from "../events.js";
import { opensWriteStop, verificationText } from "../steps/index.js";

/**
 * ` · verified` / ` · not verified (why)` on a run's last line (src/steps/kit/earned.ts says which):
 * never a bare "ok" where nothing verified the cutover. Nothing for a journal of an older syncbook.
 */
export function verifiedPart(
  e: Pick<RunEventMap["run.finished"], "verified" | "unverified" | "verifiedFilter">,
): string {
  if (e.verified === undefined) return "";
  return ` · ${verificationText({ verified: e.verified, why: e.unverified, filter: e.verifiedFilter })}`;
}

/** `HH:MM:SS` in local time: the operator compares it with the wall clock. */
export function formatClock(at: number): string {
  const d = new Date(at);
  const p = (n: number): string => String(n).padStart(2, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * A progress value as a short token (values are already redacted by the runner). An object is
 * shown field by field (`estimatedCopiedBytes 512 MiB, estimatedTotalBytes 1 GiB`), cut between
 * fields, never in the middle of raw JSON; byte counts are sized.
 */
export function formatValue(v: unknown, max = 80): string {
  if (v === undefined) return "missing";
  if (v === null) return "null";
  if (typeof v === "string") return v.length > max ? `${v.slice(0, max - 1)}…` : v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return v.length === 0 ? "[]" : `[${v.length} item${v.length === 1 ? "" : "s"}]`;
  if (typeof v === "object") {
    const parts: string[] = [];
    let len = 0;
    const entries = Object.entries(v as Record<string, unknown>);
    for (const [k, x] of entries) {
      const shown =
        typeof x === "number" && /bytes$/i.test(k)
          ? formatBytes(x)
          : x !== null && typeof x === "object"
            ? Array.isArray(x)
              ? formatValue(x)
              : "{…}"
            : formatValue(x, 30);
      const part = `${k} ${shown}`;
      if (len + part.length > max && parts.length > 0) {
        parts.push(`… ${entries.length - parts.length} more`);
        break;
      }
      parts.push(part);
      len += part.length + 2;
    }
    return parts.length ? parts.join(", ") : "{}";
  }
  return "(unprintable)";
}

/** `[█████░░░░░]`; a fraction outside 0..1 is clamped, NaN draws an empty bar. */
export function bar(fraction: number, width = 20): string {
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  const full = Math.round(f * width);
  return `[${"█".repeat(full)}${"░".repeat(width - full)}]`;
}

export type WaitStatus = RunEventMap["wait.status"];

/**
 * Why a wait is not over, one line per failing (instance, condition), worst (longest) first:
 * `shard-b  lagBelow 5: now 12 (for 3m 02s)`. Long lists are cut to `max` lines plus a count,
 * since a 256-instance fleet must not scroll the task list away.
 */
export function formatWaitStatus(status: Pick<WaitStatus, "met" | "failing">, max = 6): string[] {
  if (status.met) return ["all conditions met"];
  if (status.failing.length === 0) return ["waiting for the first answers"];
  const sorted = [...status.failing].sort((a, b) => b.sinceMs - a.sinceMs || a.instance.localeCompare(b.instance));
  const width = Math.min(24, Math.max(...sorted.slice(0, max).map((f) => f.instance.length)));
  const lines = sorted
    .slice(0, max)
    .map(
      (f) =>
        `${f.instance.padEnd(width)}  ${f.condition}: now ${formatValue(f.value)} (for ${formatDuration(f.sinceMs)})`,
    );
  if (sorted.length > max) lines.push(`… and ${sorted.length - max} more not met yet`);
  return lines;
}

/**
 * What makes two wait statuses "the same" for the line renderer: who fails which condition.
 * Values and durations are left out on purpose, or a moving lag would print a line per poll.
 */
export function waitStatusKey(status: Pick<WaitStatus, "met" | "failing">): string {
  if (status.met) return "met";
  return status.failing
    .map((f) => `${f.instance}\u0000${f.condition}`)
    .sort()
    .join("\u0001");
}

/** `/api/v1/commit` → `commit`: the command's name as the operator knows it. */
export function commandName(path: string): string {
  const clean = path.split("?")[0] ?? path;
  const parts = clean.split("/").filter(Boolean);
  return parts[parts.length - 1] ?? clean;
}

export { formatDuration, formatBytes };

/** A stopWrites whose undo did not succeed: its step, the undo's hook, and the undo as a command. */
export interface UndoLeftStopped {
  number: number;
  id: string;
  use?: string;
  /** Why the undo failed, as its hook said. */
  error?: string;
  /** The undo's call as a command an operator can run by hand (redacted); absent when its hook makes none. */
  command?: string;
  /** The stop hook itself failed (it may have stopped some writers, or none): writes may be stopped, not surely. */
  stopFailed?: boolean;
  /**
   * A rehearsal's: it journals nothing, so nothing retries the undo, and its fleet is the
   * simulator, stopped with it (a real `--abort` or `--resume` offered there acts on the runbook's
   * real fleet: src/steps/kit/context.ts `realRunOr`).
   */
  rehearsal?: boolean;
  /**
   * A rehearsal's own stop hook (`--keep-hooks`) that no undo followed (the runbook gives it none,
   * a commit kept it off, the run was cut short) and no write-on hook either: the rehearsal ends,
   * and the real application's writers it stopped stay stopped.
   */
  undoNotRun?: boolean;
}

/** A hook call of a step as the read models hold it (src/ui/model.ts `hooksOf`, the report's `hooks`). */
export interface HookCallSeen {
  undo: boolean;
  use: string;
  ok?: boolean | undefined;
  error?: string | undefined;
  command?: string | undefined;
}

/**
 * The one reader of a stopWrites left stopped, for the run's summary and the report: the step
 * whose last undo failed (`committed`: the report's reader never says it of a committed cutover);
 * in a rehearsal, also one whose own stop hook (`--keep-hooks`: not the simulator's `sim-writes`)
 * ran and was followed by no undo that succeeded and no write-on hook (`writesOnSeen`, the
 * window's `writesOnAt`). An adversarial run: that rehearsal left the real application's writers
 * stopped, and said only "writes stopped … (still stopped)", which a rehearsal's end says of its
 * simulator too.
 */
export function undoLeftStopped(
  steps: readonly { index: number; id: string; kind: string }[],
  hooksOf: (index: number) => readonly HookCallSeen[],
  o: { rehearsal: boolean; committed: boolean; writesOnSeen: boolean },
): UndoLeftStopped | undefined {
  for (const s of steps) {
    if (!opensWriteStop(s.kind)) continue;
    const calls = hooksOf(s.index);
    const undo = calls.filter((h) => h.undo).at(-1);
    const stopAt = calls.findLastIndex((h) => !h.undo);
    const stop = calls[stopAt];
    const failed = stop?.ok === false ? { stopFailed: true } : {};
    const rehearsal = o.rehearsal ? { rehearsal: true } : {};
    if (undo && undo.ok === false && !o.committed)
      return {
        number: s.index + 1,
        id: s.id,
        use: undo.use,
        ...failed,
        ...(undo.error ? { error: undo.error } : {}),
        ...(undo.command !== undefined ? { command: undo.command } : {}),
        ...rehearsal,
      };
    if (
      o.rehearsal &&
      !o.writesOnSeen &&
      stop &&
      stop.use !== "sim-writes" &&
      !calls.slice(stopAt + 1).some((h) => h.undo && h.ok === true)
    )
      return { number: s.index + 1, id: s.id, use: stop.use, ...failed, rehearsal: true, undoNotRun: true };
  }
  return undefined;
}

/**
 * The one wording of a stopWrites whose undo did not succeed, for the run's summary, `syncbook
 * status` and the report: the application is still down, what the undo does (to do it by hand),
 * and the operator must act.
 */
export function writesStillStopped(step: UndoLeftStopped): {
  headline: string;
  /** What the undo runs, as a command to paste (or why there is none to show). */
  undo: string[];
  advice: string;
} {
  if (step.undoNotRun)
    return {
      headline: `${step.stopFailed ? WRITES_LEFT_WORDS["may-be-stopped"] : WRITES_LEFT_WORDS.stopped}: the rehearsal ran the runbook's own stop hook of step ${step.number} ${step.id}${step.use ? ` (${step.use}, --keep-hooks)` : " (--keep-hooks)"}${step.stopFailed ? ", which failed part-way (it may have stopped some writers)," : ""} and nothing turned the writers it stopped back on`,
      undo: [
        `no undo of it ran (the runbook gives it none, a commit kept it off, or the rehearsal was cut short): see the runbook's \`undo:\` of step ${step.number} ${step.id}`,
      ],
      advice:
        "the rehearsal's commands went to its simulator, not to the real fleet: turn the application's writers back on by hand, then check that the application writes again",
    };
  return {
    headline: step.stopFailed
      ? `${WRITES_LEFT_WORDS["may-be-stopped"]}: the stop hook of step ${step.number} ${step.id} failed part-way (it may have stopped some writers), and its undo${step.use ? ` (${step.use})` : ""} did not succeed`
      : `${WRITES_LEFT_WORDS.stopped}: the undo of step ${step.number} ${step.id}${step.use ? ` (${step.use})` : ""} did not succeed`,
    undo:
      step.command !== undefined
        ? ["the undo runs (to do by hand, from a shell):", `  ${step.command}`]
        : [
            `the undo${step.use ? ` (${step.use})` : ""} gives no command to show: see the runbook's \`undo:\` of step ${step.number} ${step.id}`,
          ],
    advice: step.rehearsal
      ? step.use === "sim-writes"
        ? "the simulator's application writes, which stopped with the rehearsal: nothing is left to turn back on; rehearse again"
        : "the rehearsal ran the runbook's own stop hook (--keep-hooks) and journaled nothing to retry its undo with: do by hand what the undo does, then check that the application writes again"
      : step.stopFailed
        ? "check whether the application writes; if not, retry the undo with --abort (below), or do by hand what it does, then check that it writes again"
        : "the application cannot write until writes are turned back on: retry the undo with --abort (below), or do by hand what it does, then check that the application writes again",
  };
}

/** What to run next after an undo of a stopWrites failed, in lines (src/next-run.ts has the offer as data). */
export function nextAfterFailedUndo(
  file: string,
  step: UndoLeftStopped,
  resumeAt?: { number: number; id: string },
): string[] {
  return nextLines(file, failedUndoOffer(step, resumeAt));
}

/** The run summary's lines for it (both renderers). */
export function writesStillStoppedLines(step: UndoLeftStopped, red: (s: string) => string): string[] {
  const w = writesStillStopped(step);
  return [red(`✖ ${w.headline}`), ...w.undo.map((l) => `  ${l}`), `  ${w.advice}`];
}

/**
 * The run's last line's tail: the cutover's time across its runs and its write-stop window (the
 * cutover's, across runs: `run.finished` carries both), so the last line is not only this run's.
 * ` · cutover 1m 42s over 3 runs · writes stopped 26s`
 */
export function cutoverTail(e: Pick<RunEventMap["run.finished"], "cutover" | "window">): string {
  const parts: string[] = [];
  if (e.cutover) parts.push(`cutover ${formatDuration(e.cutover.durationMs)} over ${e.cutover.runs} runs`);
  if (e.window) parts.push(windowLengthWords(e.window, " so far (still stopped)"));
  return parts.map((p) => ` · ${p}`).join("");
}
