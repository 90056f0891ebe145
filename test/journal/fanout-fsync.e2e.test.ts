/**
 * Issue #18: a commit to 64 instances inside the write-stop window paid 64 fsyncs (100-250 ms on
 * a shared disk) before the last request left. The requests of one fan-out are now written one
 * line each and made durable together: one fsync, after the last line and before any request
 * leaves ("a POST whose request.sent line is not on disk is never sent" still holds).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type * as fsModule from "node:fs";
import type { EmitOptions, RunEvent } from "../../src/events.js";

// the inode of every fsynced file: the journal's own fsyncs are counted (its witness, witness.ts,
// fsyncs its own file and folder after each of them)
const fsyncs = vi.hoisted(() => ({ inos: [] as number[] }));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof fsModule>();
  return {
    ...fs,
    fsyncSync: (fd: number) => {
      fsyncs.inos.push(fs.fstatSync(fd).ino);
      fs.fsyncSync(fd);
    },
  };
});

const { readFileSync, statSync } = await import("node:fs");
/** fsyncs of this journal file so far. */
const journalFsyncs = (file: string): number => fsyncs.inos.filter((i) => i === statSync(file).ino).length;
const { openJournal, asListener } = await import("../../src/journal/index.js");
const { createFleet } = await import("../../src/fleet/index.js");
const { frozen } = await import("../support/sim.js");
const { tempDir, inst } = await import("../support/journal.js");

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const sent = (id: number): RunEvent => ({
  type: "request.sent",
  seq: id,
  at: Date.now(),
  id,
  target: "service",
  method: "POST",
  path: "/api/v1/commit",
  instance: inst(id),
});

describe("the journal and a fan-out", () => {
  it("writes every line of the fan-out at once and fsyncs once, with the last", () => {
    const j = openJournal({ dir, runbookName: "r", runbookHash: "h" });
    const before = journalFsyncs(j.file);
    const all = fsyncs.inos.length;
    for (let i = 1; i < 64; i++) j.write(sent(i), { more: true });
    expect(fsyncs.inos.length, "nothing fsynced, the witness neither").toBe(all);
    // the lines are written (the OS has them: a crash of the process loses none)
    expect(readFileSync(j.file, "utf8").split("\n").filter(Boolean)).toHaveLength(64);
    j.write(sent(64));
    expect(journalFsyncs(j.file)).toBe(before + 1);
    j.close();
  });

  it("the fleet marks every request but the last of a broadcast as `more`, then sends", async () => {
    const sim = await frozen({ instances: 3 });
    const seen: (EmitOptions | undefined)[] = [];
    let sentBeforeLast = -1;
    const fleet = createFleet({
      instances: sim.instances.map((i) => ({ url: i.url })),
      requestTimeoutMs: 2000,
      emit: (type, _payload, options) => {
        if (type !== "request.sent") return;
        seen.push(options);
        if (!options?.more)
          sentBeforeLast = sim.control.counts().instances.reduce((n, c) => n + (c["POST /api/v1/start"] ?? 0), 0);
      },
    });
    try {
      await fleet.broadcast("start", { source: "cluster0", destination: "cluster1" });
      expect(seen).toEqual([{ more: true }, { more: true }, undefined]);
      // nothing had reached an instance when the last line was recorded
      expect(sentBeforeLast).toBe(0);
    } finally {
      await fleet.close();
      await sim.close();
    }
  });

  it("asListener passes `more` through", () => {
    const j = openJournal({ dir, runbookName: "r", runbookHash: "h" });
    const listen = asListener(j);
    const before = journalFsyncs(j.file);
    listen(sent(1), { more: true });
    expect(journalFsyncs(j.file)).toBe(before);
    listen(sent(2));
    expect(journalFsyncs(j.file)).toBe(before + 1);
    j.close();
  });
});
