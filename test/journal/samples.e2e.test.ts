/**
 * Issue 12, item 13: "Unknown fields in progress are journaled verbatim: 900 KiB answers made
 * 138 MB of journal in 30 s. Bound what a sample stores (a size cap per sample, and only what
 * changed)."
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSampleBounder,
  createSampleRestorer,
  openJournal,
  SAMPLE_CAP,
  SAMPLE_FIELD_CAP,
} from "../../src/journal/index.js";
import { plainJsonLength } from "../../src/journal/samples.js";
import { readJournal } from "../../src/journal/index.js";
import type { RunEvent } from "../../src/events.js";
import type { Simulator } from "../../src/sim/index.js";
import { cli, runbookFor, sim, writeRunbook, START } from "../support/run.js";
import { eventFactory, inst, tempDir } from "../support/journal.js";

let dir: string;
let cleanup: () => void;
let s: Simulator | undefined;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(async () => {
  cleanup();
  await s?.close();
  s = undefined;
});

const sample = (ev: ReturnType<typeof eventFactory>, index: number, progress: Record<string, unknown>): RunEvent =>
  ev("progress.sampled", { instance: inst(index), progress: progress as never });

describe("bounded progress samples in the journal", () => {
  it("an unknown field is journaled when it changes, named as unchanged otherwise; readers put it back", () => {
    const ev = eventFactory();
    const bound = createSampleBounder();
    const restore = createSampleRestorer();
    const a = bound(sample(ev, 0, { state: "RUNNING", newField: { x: 1 } }));
    const b = bound(sample(ev, 0, { state: "RUNNING", newField: { x: 1 } }));
    const other = bound(sample(ev, 1, { state: "RUNNING", newField: { x: 1 } }));
    const c = bound(sample(ev, 0, { state: "RUNNING", newField: { x: 2 } }));
    expect(a).toMatchObject({ progress: { state: "RUNNING", newField: { x: 1 } } });
    expect(a).not.toHaveProperty("unchanged");
    expect(b).toMatchObject({ progress: { state: "RUNNING" }, unchanged: ["newField"] });
    expect((b as { progress: object }).progress).not.toHaveProperty("newField");
    // per instance: instance 1's first sample is whole
    expect(other).toMatchObject({ progress: { newField: { x: 1 } } });
    expect(c).toMatchObject({ progress: { newField: { x: 2 } } });
    // known fields are in every sample, changed or not
    expect(b).toMatchObject({ progress: { state: "RUNNING" } });
    const restored = [a, b, other, c].map((e) => restore.restore(JSON.parse(JSON.stringify(e)) as RunEvent));
    expect(restored.map((e) => (e as { progress: unknown }).progress)).toEqual([
      { state: "RUNNING", newField: { x: 1 } },
      { state: "RUNNING", newField: { x: 1 } },
      { state: "RUNNING", newField: { x: 1 } },
      { state: "RUNNING", newField: { x: 2 } },
    ]);
    expect(restored[1]).not.toHaveProperty("unchanged");
  });

  it("a field over the cap is replaced by its size; a sample over the cap loses its largest unknown fields", () => {
    const ev = eventFactory();
    const bound = createSampleBounder();
    const huge = "x".repeat(900 * 1024);
    const e = bound(sample(ev, 0, { state: "RUNNING", simulatorPadding: huge, canCommit: true })) as {
      progress: Record<string, unknown>;
    };
    expect(e.progress).toEqual({
      state: "RUNNING",
      canCommit: true,
      simulatorPadding: `[not journaled: ${huge.length + 2} bytes]`,
    });
    const many: Record<string, unknown> = { state: "RUNNING" };
    for (let i = 0; i < 10; i++) many[`f${i}`] = "y".repeat(SAMPLE_FIELD_CAP - 100);
    const m = bound(sample(ev, 1, many)) as { progress: Record<string, unknown> };
    expect(JSON.stringify(m.progress).length).toBeLessThanOrEqual(SAMPLE_CAP);
    expect(m.progress.state).toBe("RUNNING");
  });

  it("a plain value is measured without JSON.stringify, to the same length; a long known field is still capped", () => {
    const values: unknown[] = [
      0,
      -0,
      1,
      -1.5,
      1e21,
      5e-324,
      Number.MAX_VALUE,
      NaN,
      Infinity,
      -Infinity,
      true,
      false,
      null,
      "",
      "RUNNING",
      "change event application",
      "é ✓ 日本",
      "\u007f",
      'a"b',
      "a\\b",
      "line\nbreak",
      "\u0000",
      "\ud83d\ude00",
      "\ud800",
      "\udfff",
      undefined,
      {},
      [],
      { a: 1 },
      [1, "x"],
      () => 1,
    ];
    for (const v of values) {
      const n = plainJsonLength(v);
      if (n !== undefined) expect(n, JSON.stringify(String(v))).toBe(JSON.stringify(v).length);
    }
    // what is plain: numbers, booleans, null, strings with nothing to escape
    expect(values.filter((v) => plainJsonLength(v) === undefined).map((v) => typeof v)).toEqual([
      "string",
      "string",
      "string",
      "string",
      "string",
      "string",
      "string",
      "undefined",
      "object",
      "object",
      "object",
      "object",
      "function",
    ]);
    const bound = createSampleBounder();
    const info = "i".repeat(SAMPLE_FIELD_CAP + 1);
    const e = bound(sample(eventFactory(), 0, { state: "RUNNING", info, lagTimeSeconds: 3, canWrite: null })) as {
      progress: Record<string, unknown>;
    };
    expect(e.progress).toEqual({
      state: "RUNNING",
      info: `[not journaled: ${info.length + 2} bytes]`,
      lagTimeSeconds: 3,
      canWrite: null,
    });
  });

  it("the journal writer bounds samples, and a resumed writer starts whole again", () => {
    const ev = eventFactory();
    const j = openJournal({ dir, runbookName: "r", runbookHash: "h" });
    j.write(sample(ev, 0, { state: "RUNNING", extra: 1 }));
    j.write(sample(ev, 0, { state: "RUNNING", extra: 1 }));
    j.close();
    const r = openJournal({ dir, runbookName: "r", runbookHash: "h", file: j.file });
    r.write(sample(eventFactory(), 0, { state: "RUNNING", extra: 1 }));
    r.close();
    const lines = readFileSync(j.file, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[2]).toMatchObject({ unchanged: ["extra"] });
    expect(lines[4]).toMatchObject({ progress: { extra: 1 } });
    expect(lines[4]).not.toHaveProperty("unchanged");
  });

  it("end to end: 900 KiB progress answers for seconds make a small journal, and its report has every sample", async () => {
    s = await sim({ instances: 1 });
    s.control.addFault("huge-progress=900KiB");
    s.control.addFault("lag-floor=30");
    const d = dir;
    const file = writeRunbook(
      d,
      runbookFor(s, `${START}  - { id: ready, waitFor: { canCommit: true, lagBelow: 5, timeout: 3s } }\n`),
    );
    const r = await cli(["run", file, "--renderer", "silent"], { cwd: d });
    expect(r.code, r.all).toBe(1);
    const jdir = join(d, ".syncbook", "e2e");
    const journal = join(
      jdir,
      readdirSync(jdir).find((f) => f.endsWith(".jsonl"))!,
    );
    const samples = readFileSync(journal, "utf8")
      .split("\n")
      .filter((l) => l.includes('"progress.sampled"'));
    expect(samples.length).toBeGreaterThan(10);
    // verbatim, each sample would be 900 KiB
    expect(statSync(journal).size).toBeLessThan(samples.length * 3000 + 200_000);
    const report = await readJournal(journal);
    expect(report.warnings).toEqual([]);
    const read = report.events.filter((e) => e.type === "progress.sampled");
    expect(read).toHaveLength(samples.length);
    for (const e of read)
      expect((e as { progress: { simulatorPadding?: unknown } }).progress.simulatorPadding).toMatch(
        /^\[not journaled: \d+ bytes\]$/,
      );
  });
});
