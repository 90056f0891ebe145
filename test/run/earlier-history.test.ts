/**
 * A resume's (and an abort's) history is the journal as its strict reader met it (issue 40): one
 * read judges the journal (src/journal/state.ts) and hands its events on (src/run/earlier.ts
 * `openEarlierJournal`), the same events, samples restored, as the report's lenient reader reads
 * (src/journal/read-whole.ts), and no second read of the file.
 */
import type * as Fs from "node:fs";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { openJournal, runbookJournal } from "../../src/journal/index.js";
import { readJournal } from "../../src/journal/index.js";
import { openEarlierJournal } from "../../src/run/earlier.js";
import { traitsOf } from "../../src/steps/index.js";
import { eventFactory, inst, STEPS, tempDir, salesStarted } from "../support/journal.js";

const opened = vi.hoisted(() => [] as string[]);
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  return {
    ...fs,
    createReadStream: (...args: Parameters<typeof fs.createReadStream>) => {
      opened.push(String(args[0]));
      return fs.createReadStream(...args);
    },
  };
});

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  opened.length = 0;
});
afterEach(() => cleanup());

/** A run killed while it waited, its samples carrying a field the service added (journaled once, then `unchanged`). */
function killedWhileWaiting(): string {
  const ev = eventFactory();
  const sample = (lag: number): RunEvent =>
    ev("progress.sampled", {
      instance: inst(0),
      progress: { state: "RUNNING", canCommit: false, canWrite: false, lagTimeSeconds: lag, futureField: { a: 1 } },
    } as never);
  const events: RunEvent[] = [
    ev("run.started", salesStarted()),
    ev("step.started", STEPS[1]!),
    sample(30),
    sample(20),
    sample(10),
  ];
  const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
  for (const e of events) j.write(e);
  j.close();
  return j.file;
}

describe("a continuing run's history", () => {
  it("is the strict read's events, samples restored: what the report's reader reads, and no read more", async () => {
    const file = killedWhileWaiting();
    // journaled once, then named as unchanged (src/journal/samples.ts)
    expect(readFileSync(file, "utf8").match(/"unchanged":\["futureField"\]/g)).toHaveLength(2);
    await runbookJournal(dir, traitsOf);
    const judged = opened.filter((f) => f === file).length;
    opened.length = 0;

    const r = await openEarlierJournal(dir, { say: () => undefined });
    expect(opened.filter((f) => f === file).length).toBe(judged);
    expect(r.file).toBe(file);

    const lenient = await readJournal(file);
    expect(r.events).toEqual(lenient.events);
    // the field the journal wrote once is back in every sample
    const samples = r.events.filter((e) => e.type === "progress.sampled");
    expect(samples).toHaveLength(3);
    for (const s of samples) {
      expect((s as { progress: Record<string, unknown> }).progress.futureField).toEqual({ a: 1 });
      expect(s).not.toHaveProperty("unchanged");
    }
  });
});
