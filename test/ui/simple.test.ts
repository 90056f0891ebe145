import { describe, expect, it } from "vitest";
import pc from "picocolors";
import { createUi } from "../../src/ui/index.js";
import { SimpleUi } from "../../src/ui/simple.js";
import { UiModel } from "../../src/ui/model.js";
import { formatWaitStatus, waitStatusKey } from "../../src/ui/format.js";
import { EventBuilder, FakeStream, INSTANCES, STEPS, wholeRun } from "../support/ui-fixtures.js";

const plain = pc.createColors(false);

function runSimple(events: Iterable<Parameters<SimpleUi["listener"]>[0]>): string[] {
  const lines: string[] = [];
  const ui = new SimpleUi({ write: (t) => lines.push(...t.split("\n").filter(Boolean)), colors: plain });
  for (const e of events) ui.listener(e);
  return lines;
}

/** A run of one instance whose step 4 stopped writes at 03:00:00 (the window open). */
function writesStopped(): EventBuilder {
  const b = new EventBuilder();
  b.emit("run.started", {
    runbook: "r",
    file: "f",
    hash: "h",
    instances: INSTANCES.slice(0, 1),
    mode: "run",
    steps: STEPS,
  });
  b.emit("step.started", { index: 3, id: "stop-writes", kind: "stopWrites", title: "Stop application writes" });
  b.emit("window.opened", { index: 3, id: "stop-writes" });
  b.emit("step.finished", { index: 3, id: "stop-writes", outcome: "ok", durationMs: 5 });
  return b;
}

describe("simple renderer, a whole run", () => {
  const out = new FakeStream(false);
  const ui = createUi({ renderer: "simple", out, color: false });
  for (const e of wholeRun().events) void ui.listener(e);
  const lines = out.text.split("\n").filter(Boolean);

  it("timestamps every event line HH:MM:SS and writes no ANSI when not a TTY", () => {
    expect(out.text.includes("\u001b[")).toBe(false);
    for (const l of lines.filter((x) => !x.startsWith(" "))) expect(l).toMatch(/^\d\d:\d\d:\d\d /);
    expect(lines[0]).toMatch(
      /^03:00:00 ▶ run sales-rs-to-sharded \(run\) · 7 steps · 3 instances: shard-a, shard-b, http:\/\/127\.0\.0\.1:27184$/,
    );
  });

  it("prints step starts and ends with duration and outcome", () => {
    expect(lines).toContain("03:00:00 ▶ [2/7] waitFor Wait for canCommit and lag below 5s");
    expect(lines).toContain("03:02:02 ✔ [2/7] Wait for canCommit and lag below 5s ok in 2m 02s");
    expect(lines.some((l) => l.endsWith("↓ [7/7] Notify chat skipped: when: env.CHAT_WEBHOOK is empty"))).toBe(true);
  });

  it("summarizes broadcast commands per instance", () => {
    expect(lines.some((l) => / start → 3\/3 ok \(40ms\)$/.test(l))).toBe(true);
    expect(lines.some((l) => / commit → 3\/3 ok \(40ms\)$/.test(l))).toBe(true);
    expect(lines.some((l) => l.endsWith("commit sent to 3 instances (skew 12ms)"))).toBe(true);
  });

  it("prints decisions, hooks, logs, the verifier and the final summary", () => {
    expect(lines.some((l) => l.endsWith("✓ interlock commit: RUNNING, canCommit on 3/3, stopWrites ran"))).toBe(true);
    expect(lines.some((l) => l.endsWith("hook shell started (stop-writes)"))).toBe(true);
    expect(lines.some((l) => l.endsWith("hook shell ok in 800ms"))).toBe(true);
    expect(lines.some((l) => l.endsWith("confirmed by --yes"))).toBe(true);
    expect(lines.some((l) => l.includes("verifier check · total 10, completed 2"))).toBe(true);
    expect(
      lines.some((l) => l.includes("verifier idle · total 10, completed 10, processing 0, added 0, failed 0")),
    ).toBe(true);
    // the fixture's fleet never reports canWrite: the window is still open when the run ends, and said so
    expect(lines[lines.length - 2]).toMatch(/■ run ok in 2m 07s · committed · exit 0 · steps: 6 ok, 1 skipped$/);
    expect(lines[lines.length - 1]).toMatch(/⏱ no read has shown the destination taking writes: writes stopped \d/);
  });

  it("prints copy progress every 10 points, not per poll, with ETA", () => {
    const copy = lines.filter((l) => / copy \d+%/.test(l));
    expect(copy.map((l) => / copy (\d+)%/.exec(l)?.[1])).toEqual([
      "0",
      "10",
      "20",
      "30",
      "40",
      "50",
      "60",
      "70",
      "80",
      "90",
      "100",
    ]);
    expect(copy[copy.length - 1]).toMatch(/copy 100% 5 GiB \/ 5 GiB done$/);
    expect(copy.slice(2, -1).every((l) => / ETA \d+[ms]( \d+s)?$/.test(l))).toBe(true);
  });

  it("prints instance state changes once each", () => {
    expect(lines.filter((l) => l.endsWith("shard-a RUNNING"))).toHaveLength(1);
  });

  it("prints the wait status on change or every 30 s, never once per poll (61 polls)", () => {
    const waits = lines.filter((l) => l.includes("… waiting (wait-commit):"));
    expect(waits.length).toBeGreaterThanOrEqual(3);
    expect(waits.length).toBeLessThanOrEqual(6);
    // who fails what, with value and for how long
    expect(lines).toContain("         shard-a          lagBelow 5: now 25 (for 30s)");
  });
});

describe("simple renderer, details", () => {
  it("throttles an unchanged wait status to one line per 30 s and prints changes at once", () => {
    const b = new EventBuilder();
    b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS });
    b.emit("step.started", STEPS[1]!);
    for (let i = 0; i < 30; i++) {
      b.advance(2000);
      b.emit("wait.status", {
        index: 1,
        id: "wait-commit",
        met: false,
        failing: [{ instance: "shard-a", condition: "lagBelow 5", value: 40 - i, sinceMs: i * 2000 }],
      });
    }
    b.advance(2000);
    b.emit("wait.status", {
      index: 1,
      id: "wait-commit",
      met: false,
      failing: [{ instance: "shard-b", condition: "canCommit", value: false, sinceMs: 0 }],
    });
    const lines = runSimple(b.events).filter((l) => l.includes("waiting"));
    // t=2s (first), t=32s (30 s later), t=62s (30 s later), t=62s… then the change at t=62s
    expect(lines.map((l) => l.slice(0, 8))).toEqual(["03:00:02", "03:00:32", "03:01:02"]);
    const all = runSimple(b.events);
    expect(all[all.length - 1]).toBe("         shard-b  canCommit: now false (for 0ms)");
  });

  // facts: "Progress: `{ "progress": { phase, generation, generationStats, error, verificationStatus: { … } } }`";
  // migration-verifier v0.2.1 internal/verifier/statistics.go: generationStats counts the current generation
  // only, its totalDocs an estimated count in generation 0 and "the # of documents to recheck" later; api.go
  // (v0.1.10+): gen0Stats, "the final doc/byte counts from generation 0", absent during generation 0
  it("the verify progress bar: the generation's documents in the source's words, generation 0's from gen0Stats, a line per generation", () => {
    const b = new EventBuilder();
    b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS });
    b.emit("step.started", STEPS[2]!);
    const status = {
      totalTasks: 6,
      addedTasks: 0,
      processingTasks: 2,
      failedTasks: 0,
      completedTasks: 4,
      metadataMismatchTasks: 0,
    };
    const sample = (
      phase: string,
      generation: number,
      docsCompared: number,
      totalDocs: number,
      gen0?: { docsCompared: number; totalDocs: number; srcBytesCompared: number },
    ) =>
      b.emit("verifier.sampled", {
        progress: {
          phase,
          error: null,
          generation,
          generationStats: { docsCompared, totalDocs, srcBytesCompared: 0 },
          ...(gen0 ? { gen0Stats: gen0 } : {}),
          verificationStatus: status,
        },
      });
    sample("check", 0, 500_000, 2_000_000);
    sample("check", 0, 900_000, 2_000_000); // same generation and counters: no new line
    const gen0 = { docsCompared: 2_000_000, totalDocs: 2_000_000, srcBytesCompared: 0 };
    sample("recheck", 1, 3_000, 12_000, gen0);
    // a release without gen0Stats (before v0.1.10): nothing said of generation 0
    sample("recheck", 2, 1_000, 4_000);
    // generation 0's estimate passed (the source grew): the bar is clamped, and the words say so
    sample("check", 0, 2_100_000, 2_000_000);
    const lines = runSimple(b.events).filter((l) => l.includes("verifier"));
    const counters = " · total 6, completed 4, processing 2, added 0, failed 0, mismatch 0";
    expect(lines).toEqual([
      "03:00:00 verifier check · generation 0 [█████░░░░░░░░░░░░░░░] 500k of about 2M docs compared (the first pass; 2M is the estimated count of the collections sized so far)" +
        counters,
      "03:00:00 verifier recheck · generation 1 [█████░░░░░░░░░░░░░░░] 3000 of 12k docs to recheck compared (this generation only, not a total; generation 0 compared 2M of about 2M)" +
        counters,
      "03:00:00 verifier recheck · generation 2 [█████░░░░░░░░░░░░░░░] 1000 of 4000 docs to recheck compared (this generation only, not a total)" +
        counters,
      "03:00:00 verifier check · generation 0 [████████████████████] 2.1M docs compared (the first pass), more than the 2M estimated as the collections were sized (an estimate; the source may have grown since)" +
        counters,
    ]);
  });

  it("reports failed command answers per instance, in red only when colored", () => {
    const b = new EventBuilder();
    b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS });
    b.emit("step.started", STEPS[5]!);
    b.command("/api/v1/commit", (i) => i.index !== 2);
    const lines = runSimple(b.events);
    expect(lines).toContain("03:00:00 commit → 2/3 ok (40ms)");
    expect(lines).toContain("         http://127.0.0.1:27184: InternalError: boom");
  });

  it("prints refused interlocks and a failed step with its hint", () => {
    const b = new EventBuilder();
    b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS });
    b.emit("step.started", STEPS[5]!);
    b.emit("decision", {
      index: 5,
      id: "commit",
      kind: "interlock",
      ok: false,
      check: "stopWrites",
      reason: "no stopWrites step has succeeded in this run",
    });
    b.emit("step.finished", {
      index: 5,
      id: "commit",
      outcome: "failed",
      durationMs: 3,
      error: "commit refused",
      hint: "add a stopWrites step or --force stopWrites",
    });
    const lines = runSimple(b.events);
    expect(lines).toContain("03:00:00 ✗ interlock stopWrites refused: no stopWrites step has succeeded in this run");
    expect(lines).toContain("03:00:00 ✖ [6/7] Commit failed in 3ms: commit refused");
    expect(lines).toContain("         hint: add a stopWrites step or --force stopWrites");
  });

  it("says readiness when it changes, in the live view's words, never once per read (40 reads)", () => {
    const b = new EventBuilder();
    b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS });
    const held = (lag: number) => ({ state: "RUNNING", canCommit: false, lagTimeSeconds: lag });
    const ready = { state: "RUNNING", canCommit: true, lagTimeSeconds: 1 };
    const read = (first: Record<string, unknown>): void => {
      b.advance(1000);
      b.progress(INSTANCES[0]!, first);
      b.progress(INSTANCES[1]!, ready);
      b.progress(INSTANCES[2]!, ready);
    };
    // IDLE: the question is not asked yet
    for (const inst of INSTANCES) b.progress(inst, { state: "IDLE" });
    // 20 reads with the lag falling and rising (its figure and trend move each read: no change)
    for (let k = 0; k < 20; k++) read(held(45 - (k % 5)));
    // a new thing holds shard-a back: the embedded verifier not yet stream hashing
    for (let k = 0; k < 10; k++)
      read({
        ...held(40),
        verification: { source: { phase: "initial hashing" }, destination: { phase: "stream hashing" } },
      });
    // then it is ready: said once
    for (let k = 0; k < 10; k++) read(ready);
    const ui = new SimpleUi({
      write: (t) => lines.push(...t.split("\n").filter(Boolean)),
      colors: plain,
      readiness: { lagBelowSeconds: 5 },
    });
    const lines: string[] = [];
    const m = new UiModel(undefined, { lagBelowSeconds: 5 });
    const said: string[][] = [];
    for (const e of b.events) {
      ui.listener(e);
      m.apply(e);
      if (lines.at(-1) !== undefined && said.length < lines.filter((l) => l.endsWith("ready to commit?")).length)
        said.push(m.readinessLines(6, e.at));
    }
    const heads = lines.flatMap((l, k) => (l.endsWith("ready to commit?") ? [k] : []));
    expect(heads).toHaveLength(3);
    // each time, the live view's lines for that moment, word for word
    for (const [n, k] of heads.entries()) {
      expect(lines.slice(k + 1, k + 1 + said[n]!.length)).toEqual(said[n]!.map((l) => `         ${l}`));
    }
    expect(lines[heads[0]! + 1]).toMatch(
      /shard-a\s+not ready \(ETA unknown\): lag 45s, not below the runbook's lagBelow 5s/,
    );
    expect(lines[heads[1]! + 1]).toMatch(/embedded verifier \(source\): initial hashing, not yet stream hashing/);
    expect(lines.slice(heads[2]! + 1, heads[2]! + 4).map((l) => l.trim().replace(/\s+/g, " "))).toEqual([
      "shard-a ready",
      "shard-b ready",
      "http://127.0.0.1:27184 ready",
    ]);
  });

  it("prints a progress read failure once per new error and once on recovery", () => {
    const b = new EventBuilder();
    b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "resume", steps: STEPS });
    const inst = INSTANCES[0]!;
    for (let i = 0; i < 10; i++) {
      b.emit("request.sent", { id: i, instance: inst, target: "service", method: "GET", path: "/api/v1/progress" });
      b.emit("response.received", {
        id: i,
        instance: inst,
        target: "service",
        ok: i >= 8,
        status: i >= 8 ? 200 : 503,
        durationMs: 5,
      });
    }
    const lines = runSimple(b.events).slice(1);
    expect(lines).toEqual(["03:00:00 read shard-a failed: HTTP 503", "03:00:00 read shard-a ok again"]);
  });

  it("prints a failed progress read (poll.failed) once per new error, and once when the instance answers again", () => {
    const b = new EventBuilder();
    b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS });
    const inst = INSTANCES[0]!;
    for (let i = 0; i < 4; i++)
      b.emit("poll.failed", {
        target: "service",
        instance: inst,
        path: "/api/v1/progress",
        status: 503,
        error: "http://127.0.0.1:27182: progress refused: Unavailable",
        errorKind: "service",
        durationMs: 3,
      });
    b.progress(inst, { state: "RUNNING", canCommit: false });
    b.progress(inst, { state: "RUNNING", canCommit: false });
    b.emit("poll.failed", {
      target: "verifier",
      path: "/api/v1/progress",
      error: "reset",
      errorKind: "transport",
      durationMs: 1,
    });
    const lines = runSimple(b.events).slice(1);
    expect(lines).toEqual([
      "03:00:00 read shard-a failed: http://127.0.0.1:27182: progress refused: Unavailable",
      "03:00:00 read shard-a ok again",
      "03:00:00 shard-a RUNNING",
      "03:00:00 read verifier failed: reset",
    ]);
  });

  it("says when writes stop and when the destination takes them, with the window's length and shares", () => {
    const b = writesStopped();
    b.emit("step.started", { index: 4, id: "commit", kind: "commit", title: "Commit" });
    b.advance(3000);
    b.emit("step.finished", { index: 4, id: "commit", outcome: "ok", durationMs: 3000 });
    b.progress(INSTANCES[0]!, { state: "COMMITTING", canCommit: false, canWrite: true });
    b.emit("window.closed", { reason: "canWrite", openedAt: b.events[2]!.at, seenAt: b.at });
    const lines = runSimple(b.events);
    expect(lines).toContain(
      "03:00:00 ⏱ writes stopped (stop-writes): the write-stop window is open until the destination takes writes",
    );
    expect(lines).toContain(
      "03:00:03 ⏱ canWrite on the first process: the destination takes writes; writes were stopped 3s (service 0ms · runner 3s)",
    );
    // the write-on hook: the time without writes its shares add up to (it said the window's 3s)
    b.advance(2000);
    b.emit("window.writes-on", { index: 6, id: "app-on" });
    expect(runSimple(b.events).at(-1)).toMatch(/^03:00:05 ⏱ application writes on again \(app-on\): 5s \(/);
  });

  // an outside review: after a stop undone, a write-on hook run later said the undone window's
  // length as its time without writes, though writes were back on since the undo
  it("a write-on hook after a window its undo closed says no length", () => {
    const b = writesStopped();
    b.advance(900);
    b.emit("hook.started", { index: 3, id: "stop-writes", use: "shell", undo: true });
    b.emit("hook.finished", { index: 3, id: "stop-writes", use: "shell", undo: true, ok: true, durationMs: 40 });
    b.advance(5000);
    b.emit("window.writes-on", { index: 6, id: "app-on" });
    expect(runSimple(b.events).at(-1)).toBe("03:00:05 ⏱ application writes on again (app-on)");
  });

  it("announces a copy restart at 0 of 1 and counts the percent again from 0", () => {
    const b = new EventBuilder();
    b.emit("run.started", {
      runbook: "r",
      file: "f",
      hash: "h",
      instances: [INSTANCES[0]!],
      mode: "run",
      steps: STEPS,
    });
    const cc = (copied: number, total: number) => ({
      state: "RUNNING",
      lagTimeSeconds: 5,
      collectionCopy: { estimatedCopiedBytes: copied, estimatedTotalBytes: total },
    });
    for (const [c, t] of [
      [0, 1],
      [30, 100],
      [55, 100],
      [0, 1],
      [0, 1],
      [12, 100],
    ] as const) {
      b.advance(2000);
      b.progress(INSTANCES[0]!, cc(c, t));
    }
    // the copy's own lines (readiness says "collection copy not done" too, on its own lines)
    const lines = runSimple(b.events).filter((l) => / copy \d+%| copy progress reset/.test(l));
    expect(lines.map((l) => l.slice(9))).toEqual([
      "copy 30% 30 B / 100 B ETA …",
      "copy 50% 55 B / 100 B ETA …",
      "copy progress reset: instance shard-a restarted the copy (0 of 1)",
      "copy 10% 12 B / 100 B ETA …",
    ]);
  });
});

describe("formatWaitStatus", () => {
  it("names instance, condition, current value and duration, longest first", () => {
    expect(
      formatWaitStatus({
        met: false,
        failing: [
          { instance: "shard-b", condition: "state in [COMMITTED]", value: "COMMITTING", sinceMs: 5000 },
          { instance: "a", condition: "lagBelow 5", value: 12, sinceMs: 182_000 },
        ],
      }),
    ).toEqual(["a        lagBelow 5: now 12 (for 3m 02s)", "shard-b  state in [COMMITTED]: now COMMITTING (for 5s)"]);
  });

  it("cuts a long fleet to a few lines plus a count", () => {
    const failing = Array.from({ length: 40 }, (_, i) => ({
      instance: `i${i}`,
      condition: "canCommit",
      value: false,
      sinceMs: i,
    }));
    const lines = formatWaitStatus({ met: false, failing }, 5);
    expect(lines).toHaveLength(6);
    expect(lines[5]).toBe("… and 35 more not met yet");
  });

  it("shows null and missing values explicitly", () => {
    expect(
      formatWaitStatus({
        met: false,
        failing: [{ instance: "a", condition: "lagBelow 1", value: null, sinceMs: 0 }],
      })[0],
    ).toContain("now null");
  });

  it("keys on who fails what, not on values", () => {
    const k1 = waitStatusKey({
      met: false,
      failing: [{ instance: "a", condition: "lagBelow 5", value: 12, sinceMs: 1 }],
    });
    const k2 = waitStatusKey({
      met: false,
      failing: [{ instance: "a", condition: "lagBelow 5", value: 11, sinceMs: 3 }],
    });
    expect(k1).toBe(k2);
  });
});

describe("the window's clock in the task list", () => {
  it("runs under the current step from writes stopped until the destination takes writes", () => {
    const m = new UiModel();
    const b = new EventBuilder();
    b.emit("run.started", {
      runbook: "r",
      file: "f",
      hash: "h",
      instances: INSTANCES.slice(0, 1),
      mode: "run",
      steps: STEPS,
    });
    for (const e of b.events) m.apply(e);
    expect(m.windowClock(plain)).toBeUndefined();
    const opened = b.emit("window.opened", { index: 3, id: "stop-writes" });
    m.apply(opened);
    const panel = m.panel(4, plain, opened.at + 12_300);
    // first the wall clock, then the window's
    expect(panel[0]).toMatch(/^\d\d:\d\d:\d\d$/);
    expect(panel[1]).toBe("⏱ writes stopped 12s: the application cannot write until the destination takes writes");
    m.apply(b.progress(INSTANCES[0]!, { state: "COMMITTING", canCommit: false, canWrite: true }));
    expect(m.windowClock(plain)).toBeUndefined();
  });
});
