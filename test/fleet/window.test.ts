/**
 * Issue #18, point 1: the write-stop window (writes stopped → the destination takes writes: canWrite
 * true on the first process, or COMMITTED on every instance where none is declared (issue 36);
 * → writes on again when a hook says so), split into the service's share (waits until the last
 * read that found them unmet, the commit's round trip), the runner's (from there to the next
 * action), the operator's and the other steps'. A fold over events with known times, so every
 * share is checked to the millisecond.
 */
import { describe, expect, it } from "vitest";
import type { RunEvent, RunEventMap, RunEventType } from "../../src/events.js";
import {
  WindowTracker,
  describeWindow,
  earlierWindows,
  stoppedInCommitWords,
  type WriteStopWindow,
} from "../../src/fleet/window.js";
import { traitsOf } from "../../src/steps/index.js";

function stream() {
  const events: RunEvent[] = [];
  let seq = 0;
  const at = <K extends RunEventType>(t: number, type: K, payload: RunEventMap[K]): void => {
    events.push({ type, seq: ++seq, at: t, ...payload } as unknown as RunEvent);
  };
  return { events, at };
}

const STEPS = [
  { index: 0, id: "stop", kind: "stopWrites", title: "stop" },
  { index: 1, id: "drained", kind: "waitFor", title: "drained" },
  { index: 2, id: "go", kind: "confirm", title: "go" },
  { index: 3, id: "commit", kind: "commit", title: "commit" },
  { index: 4, id: "committed", kind: "waitFor", title: "committed" },
  { index: 5, id: "open", kind: "hook", title: "open" },
];
const inst = (index: number) => ({ url: `http://127.0.0.1:${27182 + index}`, index });
/** Two instances with ids: the coordinator is instance 1. */
const prog = (canWrite: boolean, state = "COMMITTING", index = 0) => ({
  state,
  canCommit: false,
  canWrite,
  mongosyncID: `m${index}`,
  coordinatorID: "m1",
});

/**
 * The cutover of the header: stop at 1000, drained until 4300, a 2 s confirm, commit, canWrite of the first process
 * (instance 1, as the run declares) at 7200, writes on at 8100.
 */
function cutover(opts: { writesOn?: boolean } = {}) {
  const { events, at } = stream();
  at(0, "run.started", {
    runbook: "w",
    file: "w.yaml",
    hash: "h",
    instances: [inst(0), inst(1)],
    destinationWrites: { on: "canWrite", instance: 1 },
    mode: "run",
    steps: STEPS,
  });
  at(1000, "step.started", { ...STEPS[0]! });
  at(1001, "hook.started", { index: 0, id: "stop", use: "shell", undo: false });
  at(1199, "hook.finished", { index: 0, id: "stop", use: "shell", undo: false, ok: true, durationMs: 198 });
  at(1200, "window.opened", { index: 0, id: "stop" });
  at(1210, "step.finished", { index: 0, id: "stop", outcome: "ok", durationMs: 210 });
  at(1215, "step.started", { ...STEPS[1]! });
  at(4200, "progress.sampled", { instance: inst(0), progress: prog(false, "RUNNING", 0) as never });
  at(4300, "wait.status", { index: 1, id: "drained", met: true, failing: [], unmetAt: 4200 });
  at(4310, "step.finished", { index: 1, id: "drained", outcome: "ok", durationMs: 3095 });
  at(4320, "step.started", { ...STEPS[2]! });
  at(6320, "step.finished", { index: 2, id: "go", outcome: "ok", durationMs: 2000 });
  at(6330, "step.started", { ...STEPS[3]! });
  at(6340, "request.sent", { id: 1, target: "service", method: "POST", path: "/api/v1/commit", instance: inst(0) });
  at(6341, "request.sent", { id: 2, target: "service", method: "POST", path: "/api/v1/commit", instance: inst(1) });
  at(6500, "response.received", { id: 1, target: "service", ok: true, status: 200, durationMs: 160 });
  at(6502, "response.received", { id: 2, target: "service", ok: true, status: 200, durationMs: 161 });
  at(6505, "commit.sent", { index: 3, id: "commit", instances: ["a", "b"], skewMs: 1 });
  at(6510, "step.finished", { index: 3, id: "commit", outcome: "ok", durationMs: 180 });
  at(6520, "step.started", { ...STEPS[4]! });
  // instance 0 says canWrite first: that ends nothing (only the first process's canWrite is valid: the cutover page)
  at(7000, "progress.sampled", { instance: inst(0), progress: prog(true, "COMMITTING", 0) as never });
  at(7001, "progress.sampled", { instance: inst(1), progress: prog(false, "COMMITTING", 1) as never });
  at(7100, "progress.sampled", { instance: inst(1), progress: prog(false, "COMMITTING", 1) as never });
  at(7150, "progress.sampled", { instance: inst(0), progress: prog(true, "COMMITTING", 0) as never });
  at(7200, "progress.sampled", { instance: inst(1), progress: prog(true, "COMMITTING", 1) as never });
  at(8000, "wait.status", { index: 4, id: "committed", met: true, failing: [], unmetAt: 7900 });
  at(8010, "step.finished", { index: 4, id: "committed", outcome: "ok", durationMs: 1490 });
  if (opts.writesOn) {
    at(8020, "step.started", { ...STEPS[5]! });
    at(8100, "window.writes-on", { index: 5, id: "open" });
    at(8110, "step.finished", { index: 5, id: "open", outcome: "ok", durationMs: 90 });
  }
  return events;
}

describe("WindowTracker", () => {
  it("a commit answer lost: its progress reads until one shows the commit took effect are the service's, the rest the runner's", () => {
    // commit sent at 6340; instance 1's answer lost (its time limit, 10 s); the step then reads
    // progress (src/steps/kit/fleet-ops.ts `settle`): instance 1 RUNNING at 16400 and 16450,
    // COMMITTING at 16500; the step ends at 16520 (the service's until 16450, not the runner's 10 s)
    const { events, at } = stream();
    for (const e of cutover()) {
      if (e.at >= 6500) break;
      events.push(e);
    }
    at(6500, "response.received", { id: 1, target: "service", ok: true, status: 200, durationMs: 160 });
    at(16341, "response.received", {
      id: 2,
      target: "service",
      ok: false,
      error: "no answer within 10s",
      errorKind: "transport",
      inFlight: true,
      durationMs: 10_000,
    });
    at(16400, "progress.sampled", { instance: inst(0), progress: prog(false, "COMMITTING", 0) as never });
    at(16400, "progress.sampled", { instance: inst(1), progress: prog(false, "RUNNING", 1) as never });
    at(16450, "progress.sampled", { instance: inst(1), progress: prog(false, "RUNNING", 1) as never });
    at(16500, "progress.sampled", { instance: inst(1), progress: prog(false, "COMMITTING", 1) as never });
    at(16510, "commit.sent", { index: 3, id: "commit", instances: ["a", "b"], skewMs: 1 });
    at(16520, "step.finished", { index: 3, id: "commit", outcome: "ok", durationMs: 10_190 });
    at(16530, "step.started", { ...STEPS[4]! });
    // a read in the next step that shows no effect is that wait's, not the commit's
    at(16600, "progress.sampled", { instance: inst(1), progress: prog(false, "RUNNING", 1) as never });
    const commitParts = (evs: RunEvent[]) => {
      const w = new WindowTracker(traitsOf);
      for (const e of evs) w.apply(e);
      return w.current(16530)!.parts.filter((p) => p.id === "commit");
    };
    const parts = commitParts(events);
    expect(parts.map((p) => [p.share, p.ms, p.what])).toEqual([
      ["runner", 10, "commit: interlocks, journal, fan-out"],
      ["service", 10_001, "commit: the service's answer (commit blocks until every instance has it)"],
      ["service", 109, "commit: an answer lost, progress read until it shows the commit took effect"],
      ["runner", 70, "commit: after the answers"],
    ]);
    // a journal of an earlier runner, written before `errorKind`: its lost answer read as the
    // journal reads it (an outside review: it was booked to the runner)
    const older = events.map((e) => {
      if (e.type !== "response.received" || e.ok) return e;
      const { errorKind: _k, inFlight: _f, ...rest } = e;
      return rest;
    });
    expect(commitParts(older).map((p) => [p.share, p.ms])).toEqual(parts.map((p) => [p.share, p.ms]));
    // its answers all in: nothing booked to the reads (the header's cutover, commit answered at 6502)
    const plain = new WindowTracker(traitsOf);
    for (const e of cutover()) plain.apply(e);
    expect(
      plain
        .current()!
        .parts.filter((p) => p.id === "commit")
        .map((p) => [p.share, p.ms]),
    ).toEqual([
      ["runner", 10],
      ["service", 162],
      ["runner", 8],
    ]);
  });

  it("a commit refused (or never sent) had no effect to learn of: the reads after it are not the service's; a line without progress is read", () => {
    for (const lost of [
      { error: "HTTP 400: not in a state to commit", errorKind: "service" as const, status: 400 },
      { error: "not sent: the step was stopped", errorKind: "not-sent" as const },
    ]) {
      const { events, at } = stream();
      for (const e of cutover()) {
        if (e.at >= 6500) break;
        events.push(e);
      }
      at(6500, "response.received", { id: 1, target: "service", ok: true, status: 200, durationMs: 160 });
      at(6502, "response.received", { id: 2, target: "service", ok: false, durationMs: 161, ...lost });
      at(6600, "progress.sampled", { instance: inst(1), progress: prog(false, "RUNNING", 1) as never });
      // a journal line written by hand or an older version: no progress on it
      at(6650, "progress.sampled", { instance: inst(1), progress: null as never });
      at(6700, "step.finished", { index: 3, id: "commit", outcome: "failed", durationMs: 370 });
      const w = new WindowTracker(traitsOf);
      for (const e of events) w.apply(e);
      const parts = w.current(6700)!.parts.filter((p) => p.id === "commit");
      expect(
        parts.map((p) => [p.share, p.ms]),
        lost.errorKind,
      ).toEqual([
        ["runner", 10],
        ["service", 162],
        ["runner", 198],
      ]);
    }
  });

  it("measures stopWrites → canWrite of the first process, split into shares as far as polls can tell", () => {
    const w = new WindowTracker(traitsOf);
    const seen: boolean[] = [];
    let closed: ReturnType<WindowTracker["takeClosed"]>;
    for (const e of cutover()) {
      w.apply(e);
      seen.push(w.open);
      closed ??= w.takeClosed();
    }
    expect(closed).toEqual({ reason: "canWrite", openedAt: 1200, seenAt: 7200, unmetAt: 7100 });
    expect(w.takeClosed()).toBeUndefined();
    const m = w.current()!;
    expect(m).toMatchObject({
      openedAt: 1200,
      openedBy: { index: 0, id: "stop" },
      closedBy: "canWrite",
      closedAt: 7200,
      unmetAt: 7100,
      open: false,
      durationMs: 6000,
      measuredMs: 6000,
    });
    expect(m.shares).toEqual({
      service: 2985 + 162 + 580,
      runner: 10 + 5 + 110 + 10 + 10 + 10 + 8 + 10 + 100,
      operator: 2000,
      steps: 0,
      none: 0,
    });
    expect(m.parts.map((p) => [p.share, p.id ?? "", p.ms])).toEqual([
      ["runner", "stop", 10],
      ["runner", "", 5],
      ["service", "drained", 2985],
      ["runner", "drained", 110],
      ["runner", "", 10],
      ["operator", "go", 2000],
      ["runner", "", 10],
      ["runner", "commit", 10],
      ["service", "commit", 162],
      ["runner", "commit", 8],
      ["runner", "", 10],
      ["service", "committed", 580],
      ["runner", "committed", 100],
    ]);
    expect(describeWindow(m)).toBe(
      "6s (writes stopped → canWrite on the first process): service 3.7s · runner 273ms · operator 2s",
    );
  });

  // issue 26: "The report charges time in which no runner was alive, or an instance was down, to the runner's share"
  it("a hook of the runbook's called inside the commit step (the stop's check, read again) is the runbook's time, not the runner's", () => {
    const w = new WindowTracker(traitsOf);
    for (const e of cutover()) {
      // the check of step 1 (the stopWrites), run by the commit step between 6331 and 6338
      // what the runner journals of it (src/steps/kit/writes-check.ts): no hook.* events, a read
      if (e.type === "request.sent" && e.at === 6340)
        w.apply({
          ...e,
          type: "writes.checked",
          at: 6338,
          index: 3,
          id: "commit",
          use: "shell",
          ok: true,
          durationMs: 7,
        } as never);
      w.apply(e);
    }
    const m = w.current()!;
    expect(m.shares.steps).toBe(7);
    expect(m.shares.runner).toBe(10 + 5 + 110 + 10 + 10 + 10 + 8 + 10 + 100 - 7);
    expect(m.parts.find((p) => p.share === "steps")).toMatchObject({
      id: "commit",
      what: "commit: the runbook's shell check of the write switch (its own time)",
      ms: 7,
    });
    // the stop hook itself, before the window opened, is in no share
    expect(describeWindow(m)).toBe(
      "6s (writes stopped → canWrite on the first process): service 3.7s · runner 266ms · operator 2s · hooks and other steps 7ms",
    );
  });

  it("time with no runner alive (killed, then resumed later) is no runner's share; time an instance did not answer is the service's", () => {
    const { events, at } = stream();
    const started = { runbook: "w", file: "w", hash: "h", instances: [inst(0), inst(1)], steps: STEPS };
    at(0, "run.started", { ...started, mode: "run" });
    at(10, "step.started", { ...STEPS[0]! });
    at(20, "window.opened", { index: 0, id: "stop" });
    at(30, "step.finished", { index: 0, id: "stop", outcome: "ok", durationMs: 20 });
    at(40, "step.started", { ...STEPS[3]! });
    // instance 1 stops answering: the commit's interlock read retries from 100 to 1100
    at(50, "progress.sampled", { instance: inst(0), progress: prog(false, "RUNNING", 0) as never });
    at(150, "poll.failed", {
      target: "service",
      instance: { ...inst(1), name: "b" },
      path: "/api/v1/progress",
      error: "refused",
      errorKind: "transport",
      durationMs: 50,
    });
    at(1100, "progress.sampled", { instance: inst(1), progress: prog(false, "RUNNING", 1) as never });
    // killed at 1200 (its last event); resumed at 61200, an operator's minute later
    at(1200, "progress.sampled", { instance: inst(0), progress: prog(false, "RUNNING", 0) as never });
    at(61_200, "run.started", { ...started, mode: "resume" });
    at(61_210, "step.started", { ...STEPS[3]! });
    at(61_250, "request.sent", { id: 1, instance: inst(0), target: "service", method: "POST", path: "/api/v1/commit" });
    at(61_250, "response.received", { id: 1, instance: inst(0), target: "service", ok: true, durationMs: 0 });
    at(61_300, "step.finished", { index: 3, id: "commit", outcome: "ok", durationMs: 90 });
    at(61_400, "progress.sampled", { instance: inst(0), progress: prog(true, "COMMITTED", 0) as never });
    at(61_400, "progress.sampled", { instance: inst(1), progress: prog(true, "COMMITTED", 1) as never });
    const w = new WindowTracker(traitsOf);
    for (const e of events) w.apply(e);
    const m = w.current()!;
    expect(m).toMatchObject({ openedAt: 20, closedAt: 61_400, measuredMs: 61_380 });
    expect(m.shares.none).toBe(60_000);
    expect(m.shares.service).toBe(1000);
    expect(m.shares.runner).toBe(61_380 - 60_000 - 1000);
    expect(m.parts.find((p) => p.share === "none")).toMatchObject({
      from: 1200,
      to: 61_200,
      what: "no runner was running (until a resume started)",
    });
    expect(m.parts.find((p) => p.share === "service")).toMatchObject({
      from: 100,
      to: 1100,
      what: "b not answering (progress failing)",
    });
    expect(describeWindow(m)).toMatch(/service 1s · runner 380ms · no runner 1m 00s$/);
    // the resume sent the commit after the gap: the destination took no writes in it, the length is known
    expect(m.unseenMs).toBeUndefined();
    expect(describeWindow(m)).toMatch(/^1m 01s \(writes stopped → COMMITTED on every instance\)/);

    // a runner that said run.finished is dead from then; an instance still failing then was down until then
    const { events: e2, at: at2 } = stream();
    at2(0, "run.started", { ...started, mode: "run" });
    at2(20, "window.opened", { index: 0, id: "stop" });
    at2(300, "poll.failed", {
      target: "service",
      instance: inst(1),
      path: "/api/v1/progress",
      error: "refused",
      errorKind: "transport",
      durationMs: 0,
    });
    at2(500, "run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 500 });
    at2(2500, "run.started", { ...started, mode: "resume" });
    const w2 = new WindowTracker(traitsOf);
    for (const e of e2) w2.apply(e);
    const m2 = w2.current(3000)!;
    expect(m2.shares).toEqual({ service: 200, runner: 280 + 500, operator: 0, steps: 0, none: 2000 });
  });

  // the last note's open item: the watch page, its runner killed inside a wait, counted the minutes
  // since as the service's share (nothing told the fold the runner was gone)
  it("a runner seen gone without its end (the watch page): the time after its last event is no runner's, not its wait's", () => {
    const { events, at } = stream();
    const started = { runbook: "w", file: "w", hash: "h", instances: [inst(0)], steps: STEPS };
    at(0, "run.started", { ...started, mode: "run" });
    at(10, "step.started", { ...STEPS[0]! });
    at(20, "window.opened", { index: 0, id: "stop" });
    at(30, "step.finished", { index: 0, id: "stop", outcome: "ok", durationMs: 20 });
    at(40, "step.started", { ...STEPS[1]! });
    at(1040, "progress.sampled", { instance: inst(0), progress: prog(false, "RUNNING", 0) as never });
    // killed at 1040 (its last event); the page reads at 61_040
    const w = new WindowTracker(traitsOf);
    for (const e of events) w.apply(e);
    const alive = w.windows(61_040).at(-1)!;
    expect(alive.shares.none).toBe(0);
    expect(alive.shares.service).toBe(61_000);
    const gone = w.windows(61_040, true).at(-1)!;
    expect(gone.shares).toEqual({ service: 1000, runner: 20, operator: 0, steps: 0, none: 60_000 });
    expect(gone.parts.at(-1)).toMatchObject({
      share: "none",
      from: 1040,
      to: 61_040,
      what: "no runner running since the last run ended or died (no resume yet)",
    });
    expect(gone.measuredMs).toBe(alive.measuredMs);
    // events without their run.started (a journal cut at its head): no runner's gap is known
    const headless = new WindowTracker(traitsOf);
    for (const e of events.slice(1)) headless.apply(e);
    expect(headless.windows(61_040, true).at(-1)!.shares.none).toBe(0);
    // a resume begun since: the killed run's end is known by it; the reader's word is of the last run
    at(61_100, "run.started", { ...started, mode: "resume" });
    const w2 = new WindowTracker(traitsOf);
    for (const e of events) w2.apply(e);
    expect(w2.windows(61_200).at(-1)!.shares.none).toBe(61_100 - 1040);
    expect(w2.windows(61_200, true).at(-1)!.shares.none).toBe(61_100 - 1040 + 100);
    // the gap a resume ended, and the one after the last run, each in its own words
    expect(
      w2
        .windows(61_200, true)
        .at(-1)!
        .parts.filter((p) => p.share === "none")
        .map((p) => [p.from, p.to, p.what]),
    ).toEqual([
      [1040, 61_100, "no runner was running (until a resume started)"],
      [61_100, 61_200, "no runner running since the last run ended or died (no resume yet)"],
    ]);
  });

  // an adversarial run: a runner killed past its commit, resumed minutes later; the report and the
  // run's end said "writes stopped 4m 30s" of a window whose end may have come 20 s in
  it("a commit sent before a time no runner was alive, its effect seen only after it: the length is at most, never stated as known", () => {
    const killedPastCommit = (first: "COMMITTED" | "RUNNING") => {
      const { events, at } = stream();
      const started = { runbook: "w", file: "w", hash: "h", instances: [inst(0), inst(1)], steps: STEPS };
      at(0, "run.started", { ...started, mode: "run" });
      at(20, "window.opened", { index: 0, id: "stop" });
      at(40, "step.started", { ...STEPS[3]! });
      at(50, "progress.sampled", { instance: inst(0), progress: prog(false, "RUNNING", 0) as never });
      at(1100, "request.sent", { id: 1, instance: inst(0), target: "service", method: "POST", path: "/api/v1/commit" });
      at(1100, "request.sent", { id: 2, instance: inst(1), target: "service", method: "POST", path: "/api/v1/commit" });
      // killed at 1200 (its last event); resumed at 61200
      at(1200, "progress.sampled", { instance: inst(0), progress: prog(false, "RUNNING", 0) as never });
      at(61_200, "run.started", { ...started, mode: "resume" });
      if (first === "RUNNING") {
        at(61_300, "progress.sampled", { instance: inst(0), progress: prog(false, "COMMITTING", 0) as never });
        at(61_300, "progress.sampled", { instance: inst(1), progress: prog(false, "COMMITTING", 1) as never });
      }
      at(61_400, "progress.sampled", { instance: inst(0), progress: prog(true, "COMMITTED", 0) as never });
      at(61_400, "progress.sampled", { instance: inst(1), progress: prog(true, "COMMITTED", 1) as never });
      const w = new WindowTracker(traitsOf);
      let closed: ReturnType<WindowTracker["takeClosed"]>;
      for (const e of events) {
        w.apply(e);
        closed = w.takeClosed() ?? closed;
      }
      return Object.assign(w.current()!, { announced: closed });
    };
    const m = killedPastCommit("COMMITTED");
    // the window.closed event says it too: its notification's "writes were stopped for" is at most
    expect(m.announced).toEqual({ reason: "committed", openedAt: 20, seenAt: 61_400, unseenMs: 60_000 });
    expect(m).toMatchObject({ openedAt: 20, closedAt: 61_400, durationMs: 61_380, unseenMs: 60_000 });
    // a bound rounds outwards: 61.38 s is at most 1m 02s, never 1m 01s
    expect(describeWindow(m)).toMatch(
      /^at most 1m 02s \(writes stopped → COMMITTED on every instance, seen after 1m 00s in which no runner read the fleet \(it may have come then\)\): /,
    );
    // the resumed runner read the fleet not yet committed first: its end came after the gap, known
    const later = killedPastCommit("RUNNING");
    expect(later).toMatchObject({ closedAt: 61_400, durationMs: 61_380, unmetAt: 61_300 });
    expect(later.unseenMs).toBeUndefined();
    expect(later.announced?.unseenMs).toBeUndefined();
    expect(describeWindow(later)).toMatch(/^1m 01s \(writes stopped → COMMITTED on every instance\)/);
  });

  it("opens at the stop hook's success (`openedAt`), not at the event that follows the stop step's own check; the check's read is the runbook's time", () => {
    const w = new WindowTracker(traitsOf);
    for (const e of cutover()) {
      // the stop hook succeeded at 1050; its step's check read the switch from 1055 to 1195; then
      // the window was said open (1200)
      if (e.type === "hook.finished" && e.index === 0) w.apply({ ...e, at: 1050, durationMs: 49 });
      else if (e.type === "window.opened") {
        w.apply({ ...e, type: "writes.checked", at: 1195, use: "http", ok: true, durationMs: 140 } as never);
        w.apply({ ...e, openedAt: 1050 });
      } else w.apply(e);
    }
    const m = w.current()!;
    expect(m).toMatchObject({ openedAt: 1050, measuredMs: 6150, durationMs: 6150 });
    expect(m.parts.slice(0, 3).map((p) => [p.share, p.id, p.what, p.ms])).toEqual([
      ["runner", "stop", "stop: after the stop hook returned", 5],
      ["steps", "stop", "stop: the runbook's http check of the write switch (its own time)", 140],
      ["runner", "stop", "stop: after the stop hook returned", 15],
    ]);
    expect(m.shares.steps).toBe(140);
  });

  it("is open exactly from the stop hook's success to canWrite of the first process", () => {
    const w = new WindowTracker(traitsOf);
    const events = cutover();
    const open = events.map((e) => (w.apply(e), [e.at, w.open] as const));
    expect(open.filter(([, o]) => o).map(([t]) => t)[0]).toBe(1200);
    expect(open.filter(([, o]) => o).at(-1)![0]).toBe(7150);
  });

  it("extends to a `writesOn` hook: the application writes again", () => {
    const w = new WindowTracker(traitsOf);
    for (const e of cutover({ writesOn: true })) w.apply(e);
    const m = w.current()!;
    expect(m).toMatchObject({ durationMs: 6000, writesOnAt: 8100, toWritesOnMs: 6900, measuredMs: 6900 });
    // past canWrite, the committed wait is split at its own last unmet read
    expect(m.shares).toEqual({
      service: 2985 + 162 + 1380,
      runner: 10 + 5 + 110 + 10 + 10 + 10 + 8 + 10 + 110 + 10,
      operator: 2000,
      steps: 80,
      none: 0,
    });
    expect(describeWindow(m)).toMatch(
      /^6s \(writes stopped → canWrite on the first process; → writes on again: 6\.9s\): of the 6\.9s to writes on again, service /,
    );
    // the shares add up to the length they are said of
    expect(Object.values(m.shares).reduce((a, b) => a + b, 0)).toBe(m.toWritesOnMs);
  });

  it("closes when the stop's undo turned writes back on: no cutover", () => {
    const { events, at } = stream();
    at(0, "run.started", { runbook: "w", file: "w", hash: "h", instances: [inst(0)], mode: "run", steps: STEPS });
    at(10, "step.started", { ...STEPS[0]! });
    at(20, "window.opened", { index: 0, id: "stop" });
    at(21, "step.finished", { index: 0, id: "stop", outcome: "ok", durationMs: 11 });
    at(30, "step.started", { ...STEPS[1]! });
    at(900, "step.finished", { index: 1, id: "drained", outcome: "interrupted", durationMs: 870 });
    at(910, "hook.started", { index: 0, id: "stop", use: "shell", undo: true });
    at(950, "hook.finished", { index: 0, id: "stop", use: "shell", undo: true, ok: true, durationMs: 40 });
    const w = new WindowTracker(traitsOf);
    const announced: unknown[] = [];
    for (const e of events) {
      w.apply(e);
      const c = w.takeClosed();
      if (c) announced.push(c);
    }
    expect(announced).toEqual([{ reason: "undone", openedAt: 20, seenAt: 950 }]);
    expect(w.open).toBe(false);
    expect(w.current()).toMatchObject({ closedBy: "undone", durationMs: 930 });
    // an interrupted wait never met: all of it is the service's (nothing was true yet)
    expect(w.current()!.shares.service).toBe(870);
    // a write-on hook run later (a --from it, no stop again): writes were back on at the undo, its
    // downtime does not run on to the hook
    w.apply({ type: "window.writes-on", seq: 99, at: 5_000, index: 5, id: "open" } as unknown as RunEvent);
    expect(w.current()).toMatchObject({ closedBy: "undone", durationMs: 930, measuredMs: 930 });
    expect(w.current()!.writesOnAt).toBeUndefined();
    expect(w.current()!.toWritesOnMs).toBeUndefined();
  });

  it("an --abort's hand-off of a stop with no `undo:` ends its measure there, as the least it lasted; a resume's stop opens another window", () => {
    // a review's terminal trial: left open, the window counted the time writes were back on by hand
    // as downtime ("writes stopped 7.5s … no runner 7.4s" of a 120 ms cutover), and the resume's
    // stop joined it
    const { events, at } = stream();
    const started = (t: number, mode: "run" | "resume") =>
      at(t, "run.started", { runbook: "w", file: "w", hash: "h", instances: [inst(0)], mode, steps: STEPS });
    started(0, "run");
    at(10, "step.started", { ...STEPS[0]! });
    at(20, "window.opened", { index: 0, id: "stop" });
    at(21, "step.finished", { index: 0, id: "stop", outcome: "ok", durationMs: 11 });
    at(30, "step.started", { ...STEPS[1]! });
    // killed; then the --abort: a hand-off of another hook (no stop) first, which ends nothing
    started(500, "resume");
    at(505, "decision", { index: 5, id: "open", kind: "undo", ok: false, check: "by-hand", reason: "r" });
    const w = new WindowTracker(traitsOf);
    const announced: unknown[] = [];
    const feed = (): void => {
      for (const e of events.splice(0)) {
        w.apply(e);
        const c = w.takeClosed();
        if (c) announced.push(c);
      }
    };
    feed();
    expect(w.open).toBe(true);
    at(510, "decision", { index: 0, id: "stop", kind: "undo", ok: false, check: "by-hand", reason: "r" });
    at(520, "run.finished", { outcome: "failed", exitCode: 1, committed: false, verified: false, durationMs: 20 });
    feed();
    expect(announced).toEqual([{ reason: "by-hand", openedAt: 20, seenAt: 510 }]);
    expect(w.open).toBe(false);
    expect(w.current()).toMatchObject({ closedBy: "by-hand", closedAt: 510, durationMs: 490, measuredMs: 490 });
    expect(w.current()!.unseenMs).toBeUndefined();
    expect(describeWindow(w.current()!)).toMatch(
      /^at least 490ms \(writes stopped, then handed to a person by --abort: its step has no `undo:`: no cutover\): /,
    );
    // the abort's own end: writes are stopped, a person is to turn them back on
    expect(w.writesLeft()).toBe("stopped");
    // a second --abort hands the same stop over again: it too ends with writes stopped, and the
    // window keeps its first end
    started(600, "resume");
    feed();
    // a later run, before it stops writes again: they may be stopped (no event shows the person
    // turned them back on); it was undefined, and a dead-man page for a runner lost here not critical
    expect(w.writesLeft()).toBe("may-be-stopped");
    expect(w.handedToPerson()).toBe("stop");
    at(610, "decision", { index: 0, id: "stop", kind: "undo", ok: false, check: "by-hand", reason: "r" });
    feed();
    expect(w.writesLeft()).toBe("stopped");
    expect(announced).toHaveLength(1);
    expect(w.current()).toMatchObject({ closedBy: "by-hand", closedAt: 510 });
    // hours later a resume: they were asked to turn writes back on; its stop opens a window of its own
    expect(w.handedToPerson()).toBeUndefined();
    started(3_600_000, "resume");
    feed();
    expect(w.writesLeft()).toBe("may-be-stopped");
    expect(w.handedToPerson()).toBe("stop");
    at(3_600_010, "step.started", { ...STEPS[0]! });
    at(3_600_020, "window.opened", { index: 0, id: "stop" });
    feed();
    expect(w.writesLeft()).toBe("stopped");
    expect(w.handedToPerson()).toBeUndefined();
    at(3_600_021, "step.finished", { index: 0, id: "stop", outcome: "ok", durationMs: 11 });
    at(3_600_100, "progress.sampled", { instance: inst(0), progress: prog(true, "COMMITTED", 0) as never });
    feed();
    expect(w.writesLeft()).toBeUndefined();
    const all = w.windows();
    expect(all.map((x) => [x.closedBy, x.durationMs])).toEqual([
      ["by-hand", 490],
      ["canWrite", 80],
    ]);
    expect(earlierWindows(all.slice(0, -1))).toEqual({ count: 1, durationMs: 490, atLeast: true });
  });

  it("a write stop handed to a person stays 'may be stopped' in later runs until its undo succeeds, not only until a stop", () => {
    const { events, at } = stream();
    const started = (t: number) =>
      at(t, "run.started", { runbook: "w", file: "w", hash: "h", instances: [inst(0)], mode: "resume", steps: STEPS });
    started(0);
    at(20, "window.opened", { index: 0, id: "stop" });
    started(500);
    at(510, "decision", { index: 0, id: "stop", kind: "undo", ok: false, check: "by-hand", reason: "r" });
    started(600);
    const w = new WindowTracker(traitsOf);
    for (const e of events.splice(0)) w.apply(e);
    expect(w.writesLeft()).toBe("may-be-stopped");
    // an undo of another step changes nothing; a failed undo of the stop neither
    at(610, "hook.finished", { index: 5, id: "open", use: "x", undo: true, ok: true, durationMs: 1 });
    at(620, "hook.finished", { index: 0, id: "stop", use: "x", undo: true, ok: false, durationMs: 1 });
    for (const e of events.splice(0)) w.apply(e);
    expect(w.handedToPerson()).toBe("stop");
    // the runbook given an `undo:` since: a later --abort's undo of the stop turns writes back on
    at(630, "hook.finished", { index: 0, id: "stop", use: "x", undo: true, ok: true, durationMs: 1 });
    for (const e of events.splice(0)) w.apply(e);
    expect(w.writesLeft()).toBeUndefined();
    expect(w.handedToPerson()).toBeUndefined();
  });

  it("earlier windows' total is the least they lasted where one of them is a bound: each less its unseen time", () => {
    // a review: one window that alone read "at least 2s" (its start unseen, 8 s no runner) made
    // "and at least 10s in an earlier window"; and mixed bounds were said "not known" with a
    // made-up reason
    const win = (extra: Partial<WriteStopWindow>): WriteStopWindow =>
      ({
        openedAt: 0,
        measuredFrom: 0,
        open: false,
        durationMs: 100,
        measuredMs: 100,
        shares: {},
        parts: [],
        ...extra,
      }) as WriteStopWindow;
    expect(earlierWindows([win({}), win({})])).toEqual({ count: 2, durationMs: 200 });
    expect(earlierWindows([win({}), win({ closedBy: "by-hand" })])).toEqual({
      count: 2,
      durationMs: 200,
      atLeast: true,
    });
    expect(
      earlierWindows([win({ openedAt: undefined, durationMs: undefined, measuredMs: 10_000, unseenMs: 8_000 })]),
    ).toEqual({ count: 1, durationMs: 2_000, atLeast: true });
    expect(earlierWindows([win({ unseenMs: 50 }), win({})])).toEqual({ count: 2, durationMs: 150, atLeast: true });
    expect(earlierWindows([win({ unseenMs: 150 })])).toEqual({ count: 1, durationMs: 0, atLeast: true });
  });

  // the cutover page: "only check that canWrite is true on the first mongosync process. The canWrite status of any
  // subsequent mongosync processes is not valid"
  it("closes on the first process's canWrite alone: the others' is never read (neither false nor true)", () => {
    const w = new WindowTracker(traitsOf);
    const { events, at } = stream();
    at(0, "run.started", {
      runbook: "w",
      file: "w",
      hash: "h",
      instances: [inst(0), inst(1)],
      destinationWrites: { on: "canWrite", instance: 0 },
      mode: "run",
      steps: STEPS,
    });
    at(1, "window.opened", { index: 0, id: "stop" });
    // instance 1 (not the first process) says true first, even COMMITTED: not valid, nothing ends
    at(3, "progress.sampled", { instance: inst(1), progress: prog(true, "COMMITTED", 1) as never });
    at(5, "progress.sampled", { instance: inst(0), progress: prog(false, "COMMITTING", 0) as never });
    for (const e of events) w.apply(e);
    expect(w.open).toBe(true);
    expect(w.takeClosed()).toBeUndefined();
    // the first process says true while instance 1 now says false: closed
    w.apply({
      type: "progress.sampled",
      seq: 98,
      at: 8,
      instance: inst(1),
      progress: prog(false, "COMMITTING", 1) as never,
    });
    w.apply({
      type: "progress.sampled",
      seq: 99,
      at: 12,
      instance: inst(0),
      progress: prog(true, "COMMITTING", 0) as never,
    });
    expect(w.current()).toMatchObject({ closedBy: "canWrite", closedAt: 12, unmetAt: 5 });
    expect(w.takeClosed()).toEqual({ reason: "canWrite", openedAt: 1, seenAt: 12, unmetAt: 5 });
  });

  // service facts, "Not published": without a declared first process the window "may close … otherwise on
  // COMMITTED of every instance"; the 1.11–1.19 pages: "Otherwise, wait until the state is COMMITTED"
  it("with no first process declared, closes when every instance is COMMITTED, whatever canWrite says", () => {
    const w = new WindowTracker(traitsOf);
    const { events, at } = stream();
    at(0, "run.started", {
      runbook: "w",
      file: "w",
      hash: "h",
      instances: [inst(0), inst(1)],
      destinationWrites: { on: "committed", why: "no first process" },
      mode: "run",
      steps: STEPS,
    });
    at(1, "window.opened", { index: 0, id: "stop" });
    at(5, "progress.sampled", { instance: inst(0), progress: prog(true, "COMMITTING", 0) as never });
    at(6, "progress.sampled", { instance: inst(1), progress: prog(true, "COMMITTING", 1) as never });
    at(9, "progress.sampled", { instance: inst(0), progress: prog(true, "COMMITTED", 0) as never });
    for (const e of events) w.apply(e);
    // every canWrite true, one instance COMMITTED: still open
    expect(w.open).toBe(true);
    w.apply({
      type: "progress.sampled",
      seq: 99,
      at: 12,
      instance: inst(1),
      progress: prog(true, "COMMITTED", 1) as never,
    });
    expect(w.current()).toMatchObject({ closedBy: "committed", closedAt: 12, unmetAt: 6 });
    expect(w.takeClosed()).toEqual({ reason: "committed", openedAt: 1, seenAt: 12, unmetAt: 6 });
    expect(describeWindow(w.current()!)).toMatch(/^11ms \(writes stopped → COMMITTED on every instance\)/);
  });

  it("a journal without destinationWrites: a lone instance is the first process; of several, COMMITTED on every one", () => {
    const run = (instances: number[], samples: [number, number, boolean, string][]) => {
      const w = new WindowTracker(traitsOf);
      const { events, at } = stream();
      at(0, "run.started", {
        runbook: "w",
        file: "w",
        hash: "h",
        instances: instances.map(inst),
        mode: "run",
        steps: STEPS,
      });
      at(1, "window.opened", { index: 0, id: "stop" });
      for (const [t, i, canWrite, state] of samples)
        at(t, "progress.sampled", { instance: inst(i), progress: prog(canWrite, state, i) as never });
      for (const e of events) w.apply(e);
      return w.current()!;
    };
    expect(run([0], [[5, 0, true, "COMMITTING"]])).toMatchObject({ closedBy: "canWrite", closedAt: 5 });
    const two = run(
      [0, 1],
      [
        [5, 0, true, "COMMITTING"],
        [6, 1, true, "COMMITTING"],
      ],
    );
    expect(two.open).toBe(true);
    expect(
      run(
        [0, 1],
        [
          [5, 0, true, "COMMITTED"],
          [6, 1, true, "COMMITTED"],
        ],
      ),
    ).toMatchObject({ closedBy: "committed", closedAt: 6 });
  });

  it("a resumed run without the earlier events starts open; a journal without window.opened opens at the stop step's end", () => {
    const resumed = new WindowTracker(traitsOf);
    resumed.assumeOpen(100);
    expect(resumed.open).toBe(true);
    expect(resumed.current(400)).toMatchObject({ measuredFrom: 100, measuredMs: 300, open: true });
    expect(resumed.current(400)?.openedAt).toBeUndefined();
    expect(describeWindow(resumed.current(400)!)).toMatch(/^at least 300ms \(still open/);
    // a bound rounds outwards: "at least" down (12.9 s is at least 12s, never 13s)
    expect(describeWindow(resumed.current(13_000)!)).toMatch(/^at least 12s \(still open/);
    // open says what the reads showed, not the fleet: a report of a run killed right after its
    // commit said "the destination does not take writes yet" of a fleet that had for a minute
    expect(describeWindow(resumed.current(400)!)).toContain(
      "still open: writes are stopped and no read has shown the destination taking writes",
    );

    const old = new WindowTracker(traitsOf);
    for (const e of cutover().filter((e) => e.type !== "window.opened")) old.apply(e);
    expect(old.current()).toMatchObject({ openedAt: 1210, closedAt: 7200, durationMs: 5990 });
  });

  it("a window.closed event closes it when the reads are not in the events (a journal with thinned samples)", () => {
    const w = new WindowTracker(traitsOf);
    for (const e of cutover().filter((e) => e.type !== "progress.sampled")) w.apply(e);
    expect(w.open).toBe(true);
    w.apply({
      type: "window.closed",
      seq: 100,
      at: 7201,
      reason: "canWrite",
      openedAt: 1200,
      seenAt: 7200,
      unmetAt: 7100,
    });
    expect(w.current()).toMatchObject({ closedAt: 7200, unmetAt: 7100, durationMs: 6000 });
  });
});

describe("writes left at a run's end (issue 37 point 4: every notifier says it in words)", () => {
  const hook = (t: number, undo: boolean, ok: boolean) =>
    [t, "hook.finished", { index: 0, id: "stop", use: "shell", undo, ok, durationMs: 1 }] as const;
  const opened = [2, "window.opened", { index: 0, id: "stop" }] as const;
  const canWrite = (t: number) =>
    [
      [t, "progress.sampled", { instance: inst(0), progress: prog(true, "COMMITTED", 0) as never }],
      [t, "progress.sampled", { instance: inst(1), progress: prog(true, "COMMITTED", 1) as never }],
    ] as const;
  it.each([
    ["nothing stopped", [], undefined],
    [
      "the stop held (the window is open): an interrupt, a failed undo, a split commit",
      [hook(1, false, true), opened],
      "stopped",
    ],
    ["the stop held, then its undo failed", [hook(1, false, true), opened, hook(3, true, false)], "stopped"],
    ["the stop held, its undo succeeded", [hook(1, false, true), opened, hook(3, true, true)], undefined],
    ["the stop hook failed part-way, no undo", [hook(1, false, false)], "may-be-stopped"],
    ["the stop hook failed, its undo failed too", [hook(1, false, false), hook(3, true, false)], "may-be-stopped"],
    ["the stop hook failed, its undo succeeded", [hook(1, false, false), hook(3, true, true)], undefined],
    ["the stop hook returned but writes were not seen stopped (no window)", [hook(1, false, true)], "may-be-stopped"],
    ["a failed stop, then one that held", [hook(1, false, false), hook(2, false, true), opened], "stopped"],
    [
      "the stop held, canWrite on every instance: the destination takes writes",
      [hook(1, false, true), opened, ...canWrite(5)],
      undefined,
    ],
  ] as const)("%s → %s", (_name, lines, expected) => {
    const { events, at } = stream();
    at(0, "run.started", {
      runbook: "w",
      file: "w.yaml",
      hash: "h",
      instances: [inst(0), inst(1)],
      mode: "run",
      steps: STEPS,
    });
    for (const [t, type, payload] of lines as readonly (readonly [number, RunEventType, never])[]) at(t, type, payload);
    const w = new WindowTracker(traitsOf);
    for (const e of events) w.apply(e);
    expect(w.writesLeft()).toBe(expected);
  });
});

// "If mongosync stops during commit, before the /progress endpoint reports canWrite: true, you must
// restart the entire migration to ensure that it's verified" (docs-cluster-to-cluster-sync,
// source/includes/fact-verification.rst): an adversarial run restarted an instance while COMMITTING
describe("WindowTracker.stoppedInCommit: an instance seen stopped during the commit, before the destination took writes", () => {
  const refused = (t: number, index: number, error = "http://x: cannot connect: connect ECONNREFUSED 127.0.0.1:1") =>
    ({
      type: "poll.failed",
      seq: 0,
      at: t,
      target: "service",
      instance: inst(index),
      path: "/api/v1/progress",
      error,
      errorKind: "transport",
      durationMs: 1,
    }) as unknown as RunEvent;
  const sampled = (t: number, index: number, state: string) =>
    ({
      type: "progress.sampled",
      seq: 0,
      at: t,
      instance: inst(index),
      progress: prog(false, state, index),
    }) as unknown as RunEvent;
  const fold = (events: RunEvent[]) => {
    const w = new WindowTracker(traitsOf);
    for (const e of events) w.apply(e);
    // the window's view carries it alike, for status and the watch page's ways on
    expect(w.current()?.stoppedInCommit).toEqual(w.stoppedInCommit());
    return w.stoppedInCommit();
  };
  // the cutover above up to its commit (sent at 6340; the first process's canWrite at 7200)
  const upTo = (t: number) => cutover().filter((e) => e.at < t);
  const after = (t: number) => cutover().filter((e) => e.at >= t);

  it("a read refused (no process listening), or INITIALIZING (restarted), between the commit and canWrite: noted, the first one", () => {
    expect(fold([...upTo(7100), refused(7050, 0), ...after(7100)])).toEqual({
      instance: "http://127.0.0.1:27182",
      at: 7050,
      how: "refused",
    });
    // the first, with every other instance seen stopped after it, each once (an adversarial run: two
    // stopped, and only the first was named)
    expect(
      fold([
        ...upTo(7100),
        sampled(7060, 1, "INITIALIZING"),
        refused(7070, 0),
        refused(7080, 0),
        refused(7090, 1),
        ...after(7100),
      ]),
    ).toEqual({
      instance: "http://127.0.0.1:27183",
      at: 7060,
      how: "initializing",
      also: ["http://127.0.0.1:27182"],
    });
    expect(stoppedInCommitWords({ instance: "b", at: 2000, how: "initializing", also: ["a", "c"] })).toMatch(
      /^b reported INITIALIZING \(its process restarted\) at 1970-01-01T00:00:02\.000Z, during the commit and before the destination took writes \(and a, c, seen stopped after it\): the documentation says/,
    );
  });
  it("not before the commit, not once the destination took writes, not for a read that failed otherwise", () => {
    expect(fold([...upTo(6000), refused(5000, 0), sampled(5001, 1, "INITIALIZING"), ...after(6000)])).toBeUndefined();
    // each instance answered once the destination took writes (the canWrite wait reads the others
    // once as it ends: src/steps/wait-for.ts): a stop seen later is after it
    const pinned = sampled(7300, 0, "COMMITTED");
    expect(fold([...cutover(), pinned, refused(8500, 0), sampled(8501, 1, "INITIALIZING")])).toBeUndefined();
    expect(fold([...upTo(7100), refused(7050, 0, "http://x: no answer within 10s"), ...after(7100)])).toBeUndefined();
    expect(fold(cutover())).toBeUndefined();
    // the verifier's read, a service's own error answer quoting the word, a read of no instance
    const verifier = { ...(refused(7050, 0) as object), target: "verifier" } as unknown as RunEvent;
    const answered = { ...(refused(7050, 0) as object), errorKind: "service" } as unknown as RunEvent;
    const noInstance = { ...(refused(7050, 0) as object), instance: undefined } as unknown as RunEvent;
    for (const e of [verifier, answered, noInstance]) expect(fold([...upTo(7100), e, ...after(7100)])).toBeUndefined();
    // no window yet at all
    expect(new WindowTracker(traitsOf).stoppedInCommit()).toBeUndefined();
  });
  // mongodb/docs content/mongosync/current/source/includes/api/tables/progress-response.rst:
  // totalEventsApplied "is not persisted". An adversarial run: killed at COMMITTING, an instance
  // restarted while no runner lived, and the resume read COMMITTED with 0 events and turned writes on
  const applied = (t: number, index: number, n: number, state = "COMMITTING") =>
    ({
      type: "progress.sampled",
      seq: 0,
      at: t,
      instance: inst(index),
      progress: { ...prog(false, state, index), totalEventsApplied: n },
    }) as unknown as RunEvent;
  const resumed = (t: number) =>
    ({
      type: "run.started",
      seq: 0,
      at: t,
      runbook: "w",
      file: "w.yaml",
      hash: "h",
      instances: [inst(0), inst(1)],
      destinationWrites: { on: "canWrite", instance: 1 },
      mode: "resume",
      steps: STEPS,
    }) as unknown as RunEvent;
  it("fewer events applied than at the read before, the two reads spanning the commit's time before the destination took writes: restarted, across runs", () => {
    // killed at 6500 (COMMITTING, 6186 events); the resume's first read at 9000: COMMITTED, 0
    const killed = [...upTo(6500), applied(6450, 0, 6186)];
    expect(fold([...killed, resumed(8900), applied(9000, 0, 0, "COMMITTED")])).toEqual({
      instance: "http://127.0.0.1:27182",
      at: 9000,
      how: "restarted",
      since: 6450,
    });
    // the read before it was before the commit: the restart may have been after it, still counted
    expect(fold([...upTo(6340), applied(6000, 0, 9000), ...after(6340), applied(7100, 0, 10)])).toMatchObject({
      how: "restarted",
      since: 6000,
    });
  });
  it("not when the count grew or stayed, not when both reads came before the commit, not when the read before came after the destination took writes", () => {
    expect(fold([...upTo(7100), applied(6500, 0, 100), applied(7000, 0, 100), ...after(7100)])).toBeUndefined();
    expect(fold([...upTo(7100), applied(6500, 0, 100), applied(7000, 0, 150), ...after(7100)])).toBeUndefined();
    expect(fold([...upTo(6000), applied(5000, 0, 100), applied(5500, 0, 10), ...after(6000)])).toBeUndefined();
    // the window closed at 7200: a restart after it is after canWrite, a read at that moment included
    expect(fold([...cutover(), applied(8500, 0, 100), applied(8600, 0, 10)])).toBeUndefined();
    expect(fold([...upTo(7201), applied(7200, 0, 100), ...after(7201), applied(8600, 0, 10)])).toBeUndefined();
    expect(fold([...upTo(7200), applied(7199, 0, 100), ...after(7200), applied(8600, 0, 10)])).toMatchObject({
      how: "restarted",
    });
    // the reads of two instances are not compared with each other; a read without the count says nothing
    expect(fold([...upTo(7100), applied(6500, 0, 100), applied(7000, 1, 10), ...after(7100)])).toBeUndefined();
    const none = { ...(applied(7000, 0, 0) as object), progress: prog(false, "COMMITTING", 0) } as unknown as RunEvent;
    expect(fold([...upTo(7100), applied(6500, 0, 100), none, ...after(7100)])).toBeUndefined();
    // said in words a person reads, with both times
    const w = new WindowTracker(traitsOf);
    for (const e of [...upTo(6500), applied(6450, 0, 6186), resumed(8900), applied(9000, 0, 0, "COMMITTED")])
      w.apply(e);
    expect(stoppedInCommitWords({ instance: "a", at: 1000, how: "refused" })).toBe(
      "a refused its progress read (no process listening) at 1970-01-01T00:00:01.000Z, during the commit and before the destination took writes: the documentation says that if mongosync stops during commit before canWrite is true, the entire migration must be restarted to ensure that it is verified",
    );
    expect(stoppedInCommitWords({ instance: "b", at: 2000, how: "initializing" })).toMatch(
      /^b reported INITIALIZING \(its process restarted\) at 1970-01-01T00:00:02\.000Z, during the commit and before the destination took writes: the documentation says/,
    );
    expect(stoppedInCommitWords(w.stoppedInCommit()!)).toBe(
      "http://127.0.0.1:27182 reported fewer events applied at 1970-01-01T00:00:09.000Z than at 1970-01-01T00:00:06.450Z (the count is not persisted: its process restarted in between, a time that meets the commit's before the destination took writes): the documentation says that if mongosync stops during commit before canWrite is true, the entire migration must be restarted to ensure that it is verified",
    );
  });
  // helper 96: an instance restarted after COMMITTED was counted, its last read from the commit,
  // since the canWrite wait reads the first process alone; the wait now reads the others once as it ends
  it("seen stopped after the destination took writes, its last answer before that: counted from that answer, unless it said COMMITTED", () => {
    // instance 0's last answer: 7150, COMMITTING; the window closed at 7200 on instance 1's canWrite
    expect(fold([...cutover(), refused(8500, 0)])).toEqual({
      instance: "http://127.0.0.1:27182",
      at: 8500,
      how: "refused",
      since: 7150,
    });
    expect(fold([...cutover(), sampled(8500, 0, "INITIALIZING")])).toMatchObject({ how: "initializing", since: 7150 });
    expect(fold([...cutover(), applied(8500, 0, 10)])).toBeUndefined();
    // the first process, whose read closed the window, and an instance whose last answer was COMMITTED
    expect(fold([...cutover(), refused(8500, 1), applied(8501, 1, 0)])).toBeUndefined();
    const committed = [...upTo(7151), applied(7150, 0, 500, "COMMITTED"), ...after(7151)].filter(
      (e) => !(e.at === 7150 && e.type === "progress.sampled" && e.progress.state === "COMMITTING"),
    );
    expect(fold([...committed, refused(8500, 0)])).toBeUndefined();
    expect(fold([...committed, applied(8500, 0, 10)])).toBeUndefined();
    // with counts: fewer events at the read that ends the wait than at the last one in the commit
    expect(fold([...upTo(7151), applied(7150, 0, 500), ...after(7151), applied(7300, 0, 10)])).toMatchObject({
      how: "restarted",
      at: 7300,
      since: 7150,
    });
    expect(stoppedInCommitWords({ instance: "a", at: 8500, how: "refused", since: 7150 })).toBe(
      "a refused its progress read (no process listening) at 1970-01-01T00:00:08.500Z, after the destination took writes, but its last answer before that, at 1970-01-01T00:00:07.150Z, came during the commit: it may have stopped in between: the documentation says that if mongosync stops during commit before canWrite is true, the entire migration must be restarted to ensure that it is verified",
    );
  });
  it("kept once the window closed, and across runs: a resume folds the earlier run's events first", () => {
    expect(fold([...upTo(7100), refused(7050, 0), ...after(7100), resumed(9000)])).toMatchObject({
      how: "refused",
      at: 7050,
    });
  });
});
