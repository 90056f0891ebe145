/**
 * The notification outbox in one process (src/plugin/deliveries.ts): what a resume owes from the
 * earlier runs' journal (delivered: never again; never sent or failed: sent; in doubt: as the
 * notifier says), the retry budget shared by an entry's deliveries, and the drain's one bound.
 */
import { describe, expect, it } from "vitest";
import { createNotifierListener, definePlugin, loadPlugins, type PluginRegistry } from "../../src/plugin/index.js";
import { foldDeliveries } from "../../src/plugin/deliveries.js";
import type { Emit, RunEvent, RunEventOf } from "../../src/events.js";
import { recordingContext, tempDir } from "../support/plugin.js";

/** A registry with two recording notifiers (one that resends in doubt, one that never sends twice) and two failing ones. */
async function registry(seen: string[], calls: { n: number }): Promise<PluginRegistry> {
  const { registry } = await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: "none" });
  registry.add(
    definePlugin({
      name: "rec",
      notifiers: {
        resends: (n) => void seen.push(`resends ${n.type} ${"seq" in n ? n.seq : ""}`),
        once: { inDoubt: "skip", send: (n) => void seen.push(`once ${n.type} ${"seq" in n ? n.seq : ""}`) },
        down: () => {
          calls.n++;
          throw new Error("503");
        },
        hangs: () => new Promise<void>(() => {}),
      },
    }),
    { kind: "file", path: "/tmp/rec.ts" },
  );
  return registry;
}

const at = (seq: number) => ({ seq, at: Date.UTC(2026, 10, 27, 3, 0, seq) });
const started = (seq: number, deliveries: boolean): RunEvent => ({
  type: "run.started",
  ...at(seq),
  runbook: "rb",
  file: "rb.yaml",
  hash: "h",
  instances: [],
  mode: "run",
  steps: [],
  ...(deliveries ? { deliveries: true } : {}),
});
const failed = (seq: number): RunEvent => ({
  type: "step.finished",
  ...at(seq),
  index: 1,
  id: "gate",
  outcome: "failed",
  durationMs: 1,
});
const line = (
  type: "notification.sent" | "notification.settled",
  seq: number,
  entry: number,
  use: string,
  event: number,
  more: Record<string, unknown> = {},
): RunEvent => ({ type, ...at(seq), entry, use, event, about: "step.finished", ...more }) as RunEvent;

/** The journal's side: what the listener records, as the journal would hold it. */
function recorder(): { emit: Emit; lines: RunEvent[] } {
  const lines: RunEvent[] = [];
  let seq = 1000;
  const emit = ((type: string, payload: Record<string, unknown>) => {
    const e = { type, seq: ++seq, at: 0, ...payload } as RunEvent;
    lines.push(e);
    return e;
  }) as Emit;
  return { emit, lines };
}

describe("a resume delivers what the earlier runs owe, and nothing they delivered", () => {
  it("delivered: never again; never sent: sent; in doubt: resent, unless the notifier never sends twice", async () => {
    const seen: string[] = [];
    const reg = await registry(seen, { n: 0 });
    const entries = [
      { use: "resends", on: ["step.failed"] },
      { use: "once", on: ["step.failed"] },
    ];
    const history: RunEvent[] = [
      started(1, true),
      failed(5), // delivered to both
      line("notification.sent", 6, 0, "resends", 5),
      line("notification.settled", 7, 0, "resends", 5, { delivered: true, attempts: 1, durationMs: 3 }),
      line("notification.sent", 8, 1, "once", 5),
      line("notification.settled", 9, 1, "once", 5, { delivered: true, attempts: 1, durationMs: 3 }),
      failed(10), // in doubt for both: sent, no answer recorded
      line("notification.sent", 11, 0, "resends", 10),
      line("notification.sent", 12, 1, "once", 10),
      failed(13), // never sent (the run died with it queued)
    ];
    const rec = recorder();
    const listener = createNotifierListener(reg, entries, recordingContext(tempDir()), {
      record: rec.emit,
      history,
      retryBudgetMs: 0,
    });
    listener(started(1, true)); // the resumed run's first event (its own seq space)
    await listener.flush();
    // each entry in order (entries run side by side)
    expect(seen.filter((x) => x.startsWith("resends"))).toEqual([
      "resends step.finished 10",
      "resends step.finished 13",
    ]);
    expect(seen.filter((x) => x.startsWith("once"))).toEqual(["once step.finished 13"]);
    const settled = rec.lines.filter((l): l is RunEventOf<"notification.settled"> => l.type === "notification.settled");
    const byEntry = [...settled].sort((a, b) => a.entry - b.entry || a.event - b.event);
    expect(byEntry.map((l) => [l.use, l.event, l.earlier, l.delivered, l.inDoubt ?? false])).toEqual([
      ["resends", 10, true, true, false],
      ["resends", 13, true, true, false],
      ["once", 10, true, false, true],
      ["once", 13, true, true, false],
    ]);
    // and the ledger of both runs says so: nothing owed any more but the one kept in doubt on purpose
    const ledger = foldDeliveries([...history, ...rec.lines]);
    expect(ledger.delivered).toBe(5);
    expect(ledger.failed).toEqual([]);
    expect(ledger.inDoubt.map((n) => n.key)).toEqual(["1:once@10"]);
  });

  it("a journal from a run that did not journal its deliveries owes nothing (it would page for every old event)", async () => {
    const seen: string[] = [];
    const listener = createNotifierListener(
      await registry(seen, { n: 0 }),
      [{ use: "resends", on: ["step.failed"] }],
      recordingContext(tempDir()),
      { record: recorder().emit, history: [started(1, false), failed(2)] },
    );
    listener(started(1, true));
    await listener.flush();
    expect(seen).toEqual([]);
  });
});

describe("bounds", () => {
  it("the retry budget is the entry's, in total: a second failing event gets what the first left", async () => {
    const calls = { n: 0 };
    const reg = await registry([], calls);
    const rec = recorder();
    const listener = createNotifierListener(reg, [{ use: "down", on: ["step.failed"] }], recordingContext(tempDir()), {
      record: rec.emit,
      retryBudgetMs: 1500,
    });
    listener(failed(1));
    listener(failed(2));
    await listener.flush();
    // the first: tried, 1 s backoff (1 s of 1.5 s spent), tried again; the next backoff (2 s) is past the
    // budget. The second: its first backoff would be past it too: one attempt
    expect(calls.n).toBe(3);
    const settled = rec.lines.filter((l): l is RunEventOf<"notification.settled"> => l.type === "notification.settled");
    expect(settled.map((l) => [l.event, l.delivered, l.attempts])).toEqual([
      [1, false, 2],
      [2, false, 1],
    ]);
    expect(settled[0]!.error).toBe("notifier down failed: 503 (after 2 attempts)");
  });

  it("the drain's one bound covers every pending notification; what it cuts is journaled as not delivered", async () => {
    const reg = await registry([], { n: 0 });
    const rec = recorder();
    const listener = createNotifierListener(reg, [{ use: "hangs", on: ["step.failed"] }], recordingContext(tempDir()), {
      record: rec.emit,
    });
    for (let i = 1; i <= 5; i++) listener(failed(i));
    let told = 0;
    const t = performance.now();
    const r = await listener.drain({ boundMs: 300, waiting: (n) => (told = n) });
    expect(performance.now() - t).toBeLessThan(1000);
    expect(told).toBe(5);
    expect(r).toMatchObject({ interrupted: false, delivered: 0 });
    expect(r.undelivered).toHaveLength(5);
    const settled = rec.lines.filter((l): l is RunEventOf<"notification.settled"> => l.type === "notification.settled");
    expect(settled.map((l) => [l.attempts, l.inDoubt ?? false])).toEqual([
      [1, true],
      [0, false],
      [0, false],
      [0, false],
      [0, false],
    ]);
    // after the drain nothing more is queued or journaled
    listener(failed(9));
    await listener.flush();
    expect(rec.lines.filter((l) => l.type === "notification.sent")).toHaveLength(1);
  });

  it("a signal (Ctrl-C) ends the drain at once", async () => {
    const reg = await registry([], { n: 0 });
    const listener = createNotifierListener(reg, [{ use: "hangs", on: ["step.failed"] }], recordingContext(tempDir()), {
      record: recorder().emit,
    });
    listener(failed(1));
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const t = performance.now();
    const r = await listener.drain({ boundMs: 60_000, signal: stop.signal });
    expect(performance.now() - t).toBeLessThan(1000);
    expect(r.interrupted).toBe(true);
    expect(r.undelivered[0]).toMatch(/^hangs \(notify #1\) of step\.finished: .*interrupted/);
  });
});
