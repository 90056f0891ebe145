/**
 * The journal's hash chain (issue 12, item 4): "Make the journal tamper-evident (a hash chain or
 * per-line checksums with sequence numbers) and refuse to resume from one with a gap or a broken
 * chain, saying which line." Each case writes a real journal, changes it the way a person (or a
 * careless tool) would, and checks that `--resume`'s reader refuses it at the right line while the
 * report still reads it, with a warning.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendChain, openJournal, readJournalState, splitChain } from "../../src/journal/index.js";
import { readJournal } from "../../src/journal/index.js";
import type { RunEvent } from "../../src/events.js";
import { eventFactory, STEPS, tempDir, salesStarted } from "../support/journal.js";
import { refusal } from "../support/journal-refusal.js";
import { traitsOf } from "../../src/steps/index.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

/** A run that stopped writes, failed, and undid the stop (the lines the review deleted). */
function undoneRun(): { file: string; lines: string[] } {
  const ev = eventFactory();
  const events: RunEvent[] = [
    ev("run.started", salesStarted()),
    ev("step.started", STEPS[2]!),
    ev("hook.started", { index: 2, id: "stop", use: "shell", undo: false }),
    ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 5 }),
    ev("step.finished", { index: 2, id: "stop", outcome: "ok", durationMs: 6 }),
    ev("step.started", STEPS[3]!),
    ev("step.finished", { index: 3, id: "commit", outcome: "failed", durationMs: 1, error: "refused" }),
    ev("hook.started", { index: 2, id: "stop", use: "shell", undo: true }),
    ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: true, ok: true, durationMs: 5 }),
    ev("run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 20 }),
  ];
  const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
  for (const e of events) j.write(e);
  j.close();
  return { file: j.file, lines: readFileSync(j.file, "utf8").trimEnd().split("\n") };
}

describe("the journal's hash chain", () => {
  it("every line carries its link; an untouched journal reads without a warning", async () => {
    const { file, lines } = undoneRun();
    for (const l of lines) expect(splitChain(l)).toBeDefined();
    const state = await readJournalState(file, traitsOf);
    expect(state.warnings).toEqual([]);
    expect(state.stopWritesSucceeded).toBe(false);
    expect((await readJournal(file)).warnings).toEqual([]);
  });

  it("two deleted lines (the undo) are a gap: refused at the line after them, and the report says so", async () => {
    const { file, lines } = undoneRun();
    // lines: 1 header, 2 run.started, … 9 hook.started undo, 10 hook.finished undo, 11 run.finished
    const kept = [...lines.slice(0, 8), ...lines.slice(10)];
    writeFileSync(file, `${kept.join("\n")}\n`);
    const err = await refusal(file);
    expect(err.message).toBe(
      `${file}:9: gap at line 9: its seq is 10, the line before it (8) has 7: 2 line(s) are missing`,
    );
    expect(err.hint).toMatch(/do not resume from it/);
    const report = await readJournal(file);
    expect(report.warnings).toEqual([expect.stringMatching(/^gap at line 9: .*this report shows it as it is now$/)]);
  });

  it("an edited line breaks the chain at that line", async () => {
    const { file, lines } = undoneRun();
    lines[5] = lines[5]!.replace('"outcome":"ok"', '"outcome":"skipped"');
    writeFileSync(file, `${lines.join("\n")}\n`);
    const err = await refusal(file);
    expect(err.message).toMatch(
      /:6: the journal's chain breaks at line 6: a line between 5 and 6 was deleted, added or edited, or line 6 itself was edited$/,
    );
  });

  it("a line with its seq renumbered to hide a deletion still breaks the chain", async () => {
    const { file, lines } = undoneRun();
    const shifted = lines.slice(10).map((l) => l.replace(/"seq":(\d+)/, (_m, n: string) => `"seq":${Number(n) - 2}`));
    writeFileSync(file, `${[...lines.slice(0, 8), ...shifted].join("\n")}\n`);
    expect((await refusal(file)).message).toMatch(/:9: the journal's chain breaks at line 9/);
  });

  it("a line without its link, added among chained lines, is refused", async () => {
    const { file, lines } = undoneRun();
    const forged = JSON.stringify({ type: "log", seq: 8, at: 1, level: "info", message: "hi" });
    writeFileSync(file, `${[...lines.slice(0, 8), forged, ...lines.slice(8)].join("\n")}\n`);
    expect((await refusal(file)).message).toMatch(/:9: line 9 has no chain field, but the lines before it are chained/);
  });

  it("a header stripped of its chain while claiming format 2 is refused", async () => {
    const { file, lines } = undoneRun();
    lines[0] = lines[0]!.replace(/,"chain":"[0-9a-f]+"/, "");
    writeFileSync(file, `${lines.join("\n")}\n`);
    expect((await refusal(file)).message).toMatch(
      /:1: the header says journal format 2, which is chained, but it has no chain field/,
    );
  });

  it("a resume continues the chain past a fragment left by a crash", async () => {
    const { file } = undoneRun();
    // a crash mid-line: half a line, no newline
    writeFileSync(file, `${readFileSync(file, "utf8")}{"type":"log","seq":11,"at":1,"lev`);
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc", file });
    const ev = eventFactory();
    j.write(ev("log", { level: "info", message: "resumed" }));
    j.close();
    const state = await readJournalState(file, traitsOf);
    expect(state.warnings).toEqual([expect.stringMatching(/^line 12 was cut short by a crash/)]);
  });

  it("a journal written before chaining (format 1) is read with a warning, and a resume chains from its marker", async () => {
    const ev = eventFactory();
    const file = join(dir, "old.jsonl");
    const header = {
      type: "journal.opened",
      seq: 0,
      at: 1,
      version: 1,
      runbook: "sales",
      hash: "abc",
      pid: 1,
      host: "h",
    };
    const body = [
      header,
      ev("step.started", STEPS[0]!),
      ev("step.finished", { index: 0, id: "start", outcome: "ok", durationMs: 1 }),
    ];
    writeFileSync(file, `${body.map((e) => JSON.stringify(e)).join("\n")}\n`);
    const legacy = await readJournalState(file, traitsOf);
    expect(legacy.warnings).toEqual([
      "written by an older syncbook (journal format 1, before journals were hash-chained): lines deleted or edited since cannot be detected",
    ]);
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc", file });
    j.write(eventFactory()("log", { level: "info", message: "resumed" }));
    j.close();
    const after = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(splitChain(after[3]!)).toBeDefined();
    expect((await readJournalState(file, traitsOf)).warnings).toHaveLength(1);
    // from the marker on, the chain holds: an edit there is caught
    after[4] = after[4]!.replace("resumed", "edited!");
    writeFileSync(file, `${after.join("\n")}\n`);
    expect((await refusal(file)).message).toMatch(/:5: the journal's chain breaks at line 5/);
  });

  it("appendChain puts the link last, so the line stays one JSON object", () => {
    const a = appendChain("", '{"a":1}');
    expect(JSON.parse(a.line)).toEqual({ a: 1, chain: a.chain });
    expect(splitChain(a.line)).toEqual({ chain: a.chain, body: '{"a":1}' });
    expect(JSON.parse(appendChain(a.chain, "{}").line)).toHaveProperty("chain");
  });
});
