/**
 * Issue 30, point 4: "The journal's length is witnessed: a journal shorter than its last fsynced
 * point is refused (keep the last sequence and chain in a second fsynced place)." The witness
 * (src/journal/witness.ts) against every way a journal can lose its tail or its witness.
 */
import { copyFileSync, existsSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  DistrustedJournal,
  checkWitness,
  openJournal,
  readWitness,
  witnessFile,
  writeWitness,
  type Journal,
  type Witness,
} from "../../src/journal/index.js";
import { eventFactory, inst, tempDir } from "../support/journal.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const witnessOf = (file: string): Witness => {
  const w = readWitness(file);
  if (!w) throw new Error(`no readable witness beside ${file}`);
  return w;
};
const journalLines = (file: string): string[] => readFileSync(file, "utf8").trimEnd().split("\n");

/** A journal with a hook, its undo and a sample after the last durable line. */
function sampleJournal(): Journal {
  const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
  const ev = eventFactory();
  j.write(ev("step.started", { index: 0, id: "stop", kind: "stopWrites", title: "stop" }));
  j.write(ev("step.finished", { index: 0, id: "stop", outcome: "ok", durationMs: 1 }));
  j.write(ev("hook.started", { index: 0, id: "stop", use: "shell", undo: true, token: "t" }));
  j.write(ev("hook.finished", { index: 0, id: "stop", use: "shell", undo: true, ok: true, durationMs: 1 }));
  return j;
}

const seqOf = (line: string): number => (JSON.parse(line) as { seq: number }).seq;

describe("the journal's witness", () => {
  it("follows every fsynced line: its seq and chain are the last durable line's", () => {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const header = journalLines(j.file)[0]!;
    expect(JSON.parse(header)).toMatchObject({ type: "journal.opened", witness: true });
    const opened = (JSON.parse(header) as { chain: string }).chain;
    expect(witnessOf(j.file)).toMatchObject({ journal: basename(j.file), opened, seq: 0, chain: opened });
    const ev = eventFactory();
    j.write(ev("step.started", { index: 0, id: "a", kind: "sleep", title: "a" }));
    const last = JSON.parse(journalLines(j.file).at(-1)!) as { seq: number; chain: string };
    expect(witnessOf(j.file)).toMatchObject({ seq: last.seq, chain: last.chain, opened });
    // a sample is not fsynced: the witness stays at the last durable line until one is
    j.write(ev("log", { level: "info", message: "x" }));
    expect(witnessOf(j.file)).toMatchObject({ seq: last.seq });
    // a fan-out's lines but the last are written without fsync: the witness moves with the last only
    const sent = (id: number) =>
      ev("request.sent", {
        id,
        instance: inst(0),
        target: "service",
        method: "POST",
        path: "/api/v1/start",
        body: {},
      });
    j.write(sent(1), { more: true });
    expect(witnessOf(j.file)).toMatchObject({ seq: last.seq });
    j.write(sent(2));
    expect(witnessOf(j.file).seq).toBe(seqOf(journalLines(j.file).at(-1)!));
    // closing makes the samples certain too
    j.write(ev("log", { level: "info", message: "y" }));
    j.close();
    expect(witnessOf(j.file).seq).toBe(seqOf(journalLines(j.file).at(-1)!));
    expect(existsSync(`${witnessFile(j.file)}.tmp`)).toBe(false);
  });

  it("is made whole once, then written in place, in two slots by turns: same file, same size, no temp file", () => {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const made = statSync(witnessFile(j.file));
    expect(made.size).toBe(2 * 4096);
    const ev = eventFactory();
    const slots = (): (number | undefined)[] => {
      const b = readFileSync(witnessFile(j.file));
      return [0, 1].map((k) => {
        try {
          return (JSON.parse(b.subarray(k * 4096, (k + 1) * 4096).toString("utf8")) as { seq: number }).seq;
        } catch {
          return undefined;
        }
      });
    };
    expect(slots()).toEqual([0, undefined]);
    j.write(ev("step.started", { index: 0, id: "a", kind: "sleep", title: "a" }));
    const first = seqOf(journalLines(j.file).at(-1)!);
    expect(slots()).toEqual([0, first]);
    j.write(ev("step.started", { index: 1, id: "b", kind: "sleep", title: "b" }));
    const second = seqOf(journalLines(j.file).at(-1)!);
    // the older slot is the one written over: the other keeps the point before
    expect(slots()).toEqual([second, first]);
    expect(witnessOf(j.file).seq).toBe(second);
    j.close();
    const after = statSync(witnessFile(j.file));
    expect([after.ino, after.size]).toEqual([made.ino, made.size]);
    expect(existsSync(`${witnessFile(j.file)}.tmp`)).toBe(false);
  });

  it("a slot torn or edited (its digest does not match) is not read: the other, one point behind, is", async () => {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const ev = eventFactory();
    j.write(ev("step.started", { index: 0, id: "a", kind: "sleep", title: "a" }));
    j.write(ev("step.started", { index: 1, id: "b", kind: "sleep", title: "b" }));
    const file = witnessFile(j.file);
    const whole = readFileSync(file);
    const latest = witnessOf(j.file);
    const newer = [0, 1].find((k) => whole.subarray(k * 4096, (k + 1) * 4096).includes(`"seq":${latest.seq},`))!;
    const older = (JSON.parse(whole.subarray((1 - newer) * 4096, (2 - newer) * 4096).toString("utf8")) as Witness).seq;
    expect(older).toBeLessThan(latest.seq);
    // torn: the newer slot's second half never reached the disk
    const torn = Buffer.from(whole);
    torn.fill(0, newer * 4096 + 40, (newer + 1) * 4096);
    writeFileSync(file, torn);
    expect(witnessOf(j.file).seq).toBe(older);
    expect(await checkWitness(j.file)).toEqual({});
    // edited: a seq changed in place, the digest left as it was
    const edited = Buffer.from(whole);
    edited.write(
      `"seq":${latest.seq + 1},`.padEnd(`"seq":${latest.seq},`.length + 1),
      edited.indexOf(`"seq":${latest.seq},`),
    );
    writeFileSync(file, edited);
    expect(witnessOf(j.file).seq).toBe(older);
    // both slots damaged: not a witness
    torn.fill(0, (1 - newer) * 4096 + 40, (2 - newer) * 4096);
    writeFileSync(file, torn);
    expect(readWitness(j.file)).toBeUndefined();
    expect((await checkWitness(j.file)).refused?.message).toContain("is not a syncbook witness");
    j.close();
  });

  it("a whole journal passes; so does one longer than its witness (a crash between the line and the witness)", async () => {
    const j = sampleJournal();
    j.close();
    expect(await checkWitness(j.file)).toEqual({});
    // the witness one line behind: what a crash after the journal's fsync and before the witness leaves
    const lines = journalLines(j.file);
    const prev = JSON.parse(lines.at(-2)!) as { seq: number; chain: string };
    writeWitness(j.file, { ...witnessOf(j.file), seq: prev.seq, chain: prev.chain });
    expect(await checkWitness(j.file)).toEqual({});
    // a witness of one record, as written before the slots, is read too
    writeFileSync(witnessFile(j.file), `${JSON.stringify({ ...witnessOf(j.file), seq: prev.seq })}\n`);
    expect(await checkWitness(j.file)).toEqual({});
  });

  it("a journal cut back from the undo on is refused, naming the file, where it ends and what the witness saw", async () => {
    const j = sampleJournal();
    j.close();
    const lines = journalLines(j.file);
    const undo = lines.findIndex((l) => l.includes('"hook.started"'));
    writeFileSync(j.file, `${lines.slice(0, undo).join("\n")}\n`);
    const v = await checkWitness(j.file);
    expect(v.refused?.exitCode).toBe(2);
    expect(v.refused?.message).toBe(
      `cannot trust ${j.file}: the journal is shorter than its last fsynced point: it ends at seq ${seqOf(lines[undo - 1]!)} (line ${undo}), but its witness saw seq ${seqOf(lines.at(-1)!)} written at ${new Date(witnessOf(j.file).at).toISOString()}: lines were cut off its end (a restored snapshot, a partial copy, an edit)`,
    );
    expect(v.refused?.hint).toBe(
      "what the cut lines said (an undo that turned writes back on, a command sent) is unknown; do not resume from it",
    );
    // the commands that help next are the caller's, which knows the runbook (src/run/earlier.ts)
    expect(v.refused).toBeInstanceOf(DistrustedJournal);
    expect((v.refused as DistrustedJournal).journal).toBe(j.file);
  });

  it("a journal its run marked untrusted (distrust: the witness emptied, no disk space needed) is refused, and stays so", async () => {
    const j = sampleJournal();
    expect(j.distrust()).toBeUndefined();
    expect(readFileSync(witnessFile(j.file), "utf8")).toBe("");
    // nothing writes the witness again: not a later line, not the close
    j.write(eventFactory()("step.started", { index: 1, id: "drained", kind: "waitFor", title: "drained" }));
    j.close();
    expect(readFileSync(witnessFile(j.file), "utf8")).toBe("");
    const v = await checkWitness(j.file);
    expect(v.untrusted).toBe(true);
    expect(v.refused?.message).toMatch(/its own run marked it untrusted \(its witness .* is empty\)/);
    expect(v.refused?.hint).toMatch(/--from the stopWrites step .*not --resume/);
  });

  it("a journal without its witness (copied alone) is refused, and says to copy the witness with it", async () => {
    const j = sampleJournal();
    j.close();
    const copy = join(dir, "copied.jsonl");
    copyFileSync(j.file, copy);
    const v = await checkWitness(copy);
    expect(v.refused?.message).toBe(
      `cannot trust ${copy}: its witness ${witnessFile(copy)} is missing, so its length cannot be checked (lines cut off its end would look like a crash)`,
    );
    expect(v.refused?.hint).toMatch(/must take its copied\.jsonl\.witness with it/);
  });

  it("a witness of another journal, or of another run's journal of the same name, is refused", async () => {
    const a = sampleJournal();
    a.close();
    const b = openJournal({ dir, runbookName: "sales", runbookHash: "abc", now: () => 1 });
    b.close();
    // b's witness beside a copy of a: another file name
    const copy = join(dir, "a-copy.jsonl");
    copyFileSync(a.file, copy);
    copyFileSync(witnessFile(b.file), witnessFile(copy));
    expect((await checkWitness(copy)).refused?.message).toContain(`belongs to another journal (${basename(b.file)})`);
    // another run's journal renamed to a's name, with a's witness: the header's link differs
    const aWitness = readFileSync(witnessFile(a.file), "utf8");
    renameSync(b.file, a.file);
    writeFileSync(witnessFile(a.file), aWitness);
    expect((await checkWitness(a.file)).refused?.message).toContain(
      "belongs to another journal (another run's journal of that name)",
    );
  });

  it("a journal rewritten after its witness (its line at the witnessed seq differs) is refused", async () => {
    const j = sampleJournal();
    j.close();
    const w = witnessOf(j.file);
    writeFileSync(witnessFile(j.file), JSON.stringify({ ...w, chain: "0".repeat(32) }));
    expect((await checkWitness(j.file)).refused?.message).toMatch(
      new RegExp(`its line at seq ${String(w.seq)} \\(line \\d+\\) is not the one its witness saw`),
    );
  });

  it("an unreadable or damaged witness is refused", async () => {
    const j = sampleJournal();
    j.close();
    writeFileSync(witnessFile(j.file), "{");
    expect((await checkWitness(j.file)).refused?.message).toContain("is not a syncbook witness");
    unlinkSync(witnessFile(j.file));
    const { mkdirSync } = await import("node:fs");
    mkdirSync(witnessFile(j.file));
    expect((await checkWitness(j.file)).refused?.message).toContain("cannot be read (EISDIR)");
  });

  it("a resume continues the witness; a journal from before witnesses is read with a warning", async () => {
    const j = sampleJournal();
    j.close();
    const r = openJournal({ dir, runbookName: "sales", runbookHash: "abc", file: j.file });
    const marker = JSON.parse(journalLines(j.file).at(-1)!) as { type: string; witness: boolean; seq: number };
    expect(marker).toMatchObject({ type: "journal.resumed", witness: true });
    expect(witnessOf(j.file)).toMatchObject({ seq: marker.seq });
    r.close();
    expect(await checkWitness(j.file)).toEqual({});
    // the same lines without `witness` (a format 2 journal before witnesses) and no witness file
    const old = join(dir, "old.jsonl");
    writeFileSync(
      old,
      `${journalLines(j.file)
        .filter((l) => !l.includes('"witness":true'))
        .join("\n")}\n`,
    );
    const v = await checkWitness(old);
    expect(v.refused).toBeUndefined();
    expect(v.warning).toBe(
      `${old} was written before journals were witnessed: lines cut off its end cannot be told from a crash`,
    );
  });
});
