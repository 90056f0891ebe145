/**
 * Clock steps in the report's durations (issue 30): a journal whose wall times jump forward an
 * hour inside the write-stop window and back an hour before the run ends. With the monotonic
 * reading each line carries, the window is its two seconds (not an hour), no duration is
 * negative, and the report says the clock jumped, twice, with its size; across a resume (no
 * monotonic relation between processes) time is the wall clock's, clamped so a run never starts
 * before the one it resumes ended. A journal without monotonic readings clamps at zero.
 */
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { buildReport } from "../../src/report/model.js";

const T = Date.UTC(2026, 10, 27, 3, 0, 0);
const HOUR = 3_600_000;
let seq = 0;
/** A journal line: wall clock `at`, and the process's monotonic `mono` (undefined: a journal before them). */
const line = (type: string, at: number, mono: number | undefined, rest: Record<string, unknown> = {}): RunEvent =>
  ({ type, seq: ++seq, at, ...(mono !== undefined ? { mono } : {}), ...rest }) as RunEvent;

const STEPS = [
  { index: 0, id: "stop", kind: "stopWrites", title: "stop writes" },
  { index: 1, id: "commit", kind: "commit", title: "commit" },
];
const started = (at: number, mono: number | undefined, mode = "run"): RunEvent =>
  line("run.started", at, mono, { runbook: "rb", file: "rb.yaml", hash: "h", instances: [], mode, steps: STEPS });

/**
 * One run: stopWrites at +1 s (the window opens), the clock jumps forward an hour, canWrite is seen
 * 2 s after the window opened (by the monotonic clock), the clock jumps back an hour, the run ends.
 * The runner's own durations were measured with the wall clock, so they are wrong too.
 */
function jumpingRun(withMono: boolean): RunEvent[] {
  const m = (x: number): number | undefined => (withMono ? 500 + x : undefined);
  return [
    started(T, m(0)),
    line("step.started", T + 10, m(10), { index: 0, id: "stop", kind: "stopWrites", title: "stop writes" }),
    line("step.finished", T + 1000, m(1000), { index: 0, id: "stop", outcome: "ok", durationMs: 990 }),
    line("window.opened", T + 1000, m(1000), { index: 0, id: "stop" }),
    line("step.started", T + 1010, m(1010), { index: 1, id: "commit", kind: "commit", title: "commit" }),
    // NTP steps the clock forward an hour
    line("window.closed", T + HOUR + 3000, m(3000), {
      reason: "canWrite",
      openedAt: T + 1000,
      seenAt: T + HOUR + 3000,
    }),
    // and back an hour
    line("step.finished", T + 4000, m(4000), { index: 1, id: "commit", outcome: "ok", durationMs: 4000 - 1010 - HOUR }),
    line("run.finished", T + 4100, m(4100), { outcome: "ok", exitCode: 0, committed: true, durationMs: 4100 }),
  ];
}

describe("the report's durations across clock jumps", () => {
  it("forward an hour and back: the write-stop window is its 2 s, no step is negative, the report says the clock jumped", () => {
    const r = buildReport(jumpingRun(true));
    expect(r.window?.durationMs).toBe(2000);
    const commit = r.steps.find((s) => s.id === "commit")!;
    expect(commit.durationMs).toBe(2990);
    for (const s of r.steps) expect(s.durationMs).toBeGreaterThanOrEqual(0);
    expect(r.durationMs).toBe(4100);
    const jumps = r.warnings.filter((w) => w.startsWith("the wall clock jumped"));
    expect(jumps).toEqual([
      expect.stringMatching(
        /^the wall clock jumped forward 1h 00m during run 1 \(3s into the cutover\): times and durations there are measured with the monotonic clock/,
      ),
      expect.stringMatching(/^the wall clock jumped back 1h 00m during run 1 \(4s into the cutover\)/),
    ]);
  });

  it("without monotonic readings (a journal written before them): no negative duration, the figures as the wall clock gave them", () => {
    const r = buildReport(jumpingRun(false));
    for (const s of r.steps) expect(s.durationMs ?? 0).toBeGreaterThanOrEqual(0);
    expect(r.warnings.some((w) => w.startsWith("the wall clock jumped"))).toBe(false);
  });

  it("a resume whose clock is behind the run it resumes starts where that one ended, and says the clock went back", () => {
    const first = [
      started(T, 100),
      line("run.finished", T + 5000, 5100, { outcome: "failed", exitCode: 1, committed: false, durationMs: 5000 }),
    ];
    // the resumed process: its clock reads an hour earlier, its monotonic clock starts afresh
    const second = [
      started(T - HOUR + 6000, 40, "resume"),
      line("run.finished", T - HOUR + 9000, 3040, { outcome: "ok", exitCode: 0, committed: true, durationMs: 3000 }),
    ];
    const r = buildReport([...first, ...second]);
    expect(r.runs.map((x) => [x.start, x.durationMs])).toEqual([
      [0, 5000],
      [5000, 3000],
    ]);
    expect(r.durationMs).toBe(8000);
    expect(r.warnings).toContainEqual(
      expect.stringMatching(
        /^the wall clock went back 59m 59s before run 2 \(a resume\) began \(5s into the cutover\): it is placed where the run before it ended/,
      ),
    );
  });

  it("a clock that only drifts a little is no jump: timestamps stand as written", () => {
    const events = [
      started(T, 0),
      line("step.started", T + 10, 10, { index: 0, id: "stop", kind: "stopWrites", title: "stop writes" }),
      line("step.finished", T + 1400, 1000, { index: 0, id: "stop", outcome: "ok", durationMs: 1390 }),
      line("run.finished", T + 1500, 1100, { outcome: "ok", exitCode: 0, committed: false, durationMs: 1500 }),
    ];
    const r = buildReport(events);
    expect(r.warnings.filter((w) => w.includes("clock"))).toEqual([]);
    expect(r.steps[0]!.durationMs).toBe(1390);
    expect(r.finishedAt).toBe(T + 1500);
  });
});
