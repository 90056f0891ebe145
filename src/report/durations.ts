/**
 * The report's time axis, safe from clock steps (issue 30). Every event carries the wall clock
 * (`at`) and a monotonic reading of its process (`mono`, from the emitter). A wall clock stepped by
 * NTP, a VM resumed or an operator's `date -s` would make the report claim an hour of downtime or
 * a negative step; the monotonic clock never jumps, but it means nothing across processes.
 *
 * So, within one process segment (a run, up to the next `run.started`, `journal.resumed`, or a
 * monotonic reading that went back: a new process), an event's time is the segment's start plus
 * its monotonic distance from it; a segment starts at its own wall time, clamped so that it never
 * starts before the previous segment's last event (a resume cannot end before it began). The
 * durations an event carries (a step's, a run's) are recomputed from the monotonic readings of
 * its start and end when both are in the segment. Where wall and monotonic time disagree by more
 * than `JUMP_TOLERANCE_MS`, the clock jumped: the report says so, with its size and place, rather
 * than print the wall clock's figure. Events without `mono` (journals written before it) keep
 * their wall times, durations clamped at zero.
 */
import type { RunEvent } from "../events.js";
import { formatDuration } from "../runbook/duration.js";

/** Wall and monotonic time may drift apart by this much within a segment before it is a jump. */
export const JUMP_TOLERANCE_MS = 1000;

export interface ClockJump {
  /** Corrected time of the first event after the jump. */
  at: number;
  /** How far the wall clock moved beyond the time that passed (positive: forward). */
  byMs: number;
  /** The segment (1-based) it happened in. */
  segment: number;
  /** Between the run resumed and its resume (no monotonic relation): its start is clamped to the other's end. */
  atResume?: boolean;
}

export interface ClockCorrector {
  /** The event with `at` (and the wall times it carries, and its durations) on the corrected axis. */
  correct(e: RunEvent): RunEvent;
  /** The jumps seen so far. */
  jumps(): ClockJump[];
}

/** Wall times an event carries besides `at` (taken in its own process, moved with it). */
const WALL_FIELDS = ["openedAt", "seenAt", "unmetAt"] as const;

export function createClockCorrector(): ClockCorrector {
  const jumps: ClockJump[] = [];
  let segment = 0;
  /** The segment's start: corrected time and monotonic reading. */
  let base: { at: number; mono: number } | undefined;
  let lastMono: number | undefined;
  /** How far the wall clock is from the corrected axis in this segment (0 until it jumps). */
  let shift = 0;
  /** The last corrected time given: the next segment starts no earlier. */
  let last = -Infinity;
  const started = new Map<string, number>();

  return {
    correct(e) {
      const mono = typeof e.mono === "number" && Number.isFinite(e.mono) ? e.mono : undefined;
      // a run starts a process segment; so does a monotonic reading that went back (another process)
      if (e.type === "run.started") segment++;
      if (e.type === "run.started" || (mono !== undefined && lastMono !== undefined && mono < lastMono)) {
        base = undefined;
        lastMono = undefined;
        started.clear();
      }
      if (mono === undefined) {
        // no monotonic reading (a journal's header, a journal written before them): the wall clock, never before what came earlier
        const at = last === -Infinity ? e.at : Math.max(e.at, last);
        last = at;
        return clampDurations({ ...e, at });
      }
      if (!base) {
        // a segment starts at its own wall time, never before the last one ended (a clock stepped back across a resume)
        const at0 = last === -Infinity ? e.at : Math.max(e.at, last);
        if (at0 - e.at > JUMP_TOLERANCE_MS) jumps.push({ at: at0, byMs: e.at - at0, segment, atResume: true });
        base = { at: at0, mono };
        shift = e.at - at0;
      }
      lastMono = mono;
      // while wall and monotonic agree the timestamp stands as written; after a jump, the wall clock is shifted back onto the monotonic one
      const monoAt = base.at + (mono - base.mono);
      if (Math.abs(e.at - shift - monoAt) > JUMP_TOLERANCE_MS) {
        jumps.push({ at: monoAt, byMs: e.at - shift - monoAt, segment });
        shift = e.at - monoAt;
      }
      const at = Math.max(e.at - shift, last);
      last = at;
      const out: Record<string, unknown> = { ...e, at };
      for (const f of WALL_FIELDS) {
        const v = (e as Record<string, unknown>)[f];
        if (typeof v === "number") out[f] = v - shift;
      }
      // a step's and a run's duration: the monotonic one where the wall clock's disagrees
      if (e.type === "step.started") started.set(`step ${e.index}`, mono);
      if (e.type === "run.started") started.set("run", mono);
      const from =
        e.type === "step.finished"
          ? started.get(`step ${e.index}`)
          : e.type === "run.finished"
            ? started.get("run")
            : undefined;
      const d = (e as { durationMs?: unknown }).durationMs;
      if (from !== undefined && typeof d === "number" && Math.abs(d - (mono - from)) > JUMP_TOLERANCE_MS)
        out.durationMs = Math.round(mono - from);
      return clampDurations(out as RunEvent);
    },
    jumps: () => [...jumps],
  };
}

/** A duration an event carries is never negative (a clock stepped back inside it, with no monotonic reading to mend it). */
function clampDurations(e: RunEvent): RunEvent {
  const d = (e as { durationMs?: unknown }).durationMs;
  return typeof d === "number" && d < 0 ? ({ ...e, durationMs: 0 } as RunEvent) : e;
}

/** The report's words for a jump. */
export function jumpWarning(j: ClockJump, t0: number): string {
  const size = `${j.byMs > 0 ? "forward" : "back"} ${formatDuration(Math.abs(j.byMs))}`;
  const where = `(${formatDuration(Math.max(0, j.at - t0))} into the cutover)`;
  return j.atResume
    ? `the wall clock went ${size} before run ${j.segment} (a resume) began ${where}: it is placed where the run before it ended, not at its timestamp`
    : `the wall clock jumped ${size} during run ${j.segment} ${where}: times and durations there are measured with the monotonic clock, not taken from the timestamps`;
}
