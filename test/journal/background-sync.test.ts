/**
 * Issue 41: the samples a watch writes inside the write-stop window (an instance read every few
 * milliseconds) were all flushed by the commit's own fsync, half a megabyte at 64 instances, 2 to
 * 5 ms of the window. Past `BACKGROUND_SYNC_BYTES` unsynced, the end of a turn's write starts an
 * fsync off the event loop through a second descriptor; its failure fails the journal, and its
 * descriptor is closed only once that fsync has answered.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type * as fsModule from "node:fs";
import type { RunEvent } from "../../src/events.js";

// every background fsync: its descriptor, the file's inode, and a way to answer it later
const bg = vi.hoisted(() => ({
  calls: [] as { fd: number; ino: number }[],
  hold: false,
  fail: undefined as NodeJS.ErrnoException | undefined,
  pending: [] as (() => void)[],
  /** No descriptor left for a second open (EMFILE). */
  noSecondOpen: false,
}));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof fsModule>();
  return {
    ...fs,
    openSync: (...a: Parameters<typeof fs.openSync>) => {
      // the journal's second descriptor (its witness opens its own file "r+" too)
      if (bg.noSecondOpen && a[1] === "r+" && String(a[0]).endsWith(".jsonl"))
        throw Object.assign(new Error("EMFILE: too many open files"), { code: "EMFILE" });
      return fs.openSync(...a);
    },
    fsync: (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      bg.calls.push({ fd, ino: fs.fstatSync(fd).ino });
      // held: answered when the test says, at once (the data is flushed by the journal's close)
      if (bg.hold) bg.pending.push(() => cb(bg.fail ?? null));
      else if (bg.fail) cb(bg.fail);
      else fs.fsync(fd, cb);
    },
  };
});

const { fstatSync, readdirSync, readlinkSync, realpathSync, statSync } = await import("node:fs");
/** This process's descriptors open on `file` (Linux's /proc). */
const openDescriptors = (file: string): string[] =>
  readdirSync("/proc/self/fd").filter((d) => {
    try {
      return readlinkSync(`/proc/self/fd/${d}`) === realpathSync(file);
    } catch {
      return false;
    }
  });
const { openJournal, BACKGROUND_SYNC_BYTES } = await import("../../src/journal/journal.js");
const { tempDir, inst } = await import("../support/journal.js");

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  bg.calls = [];
  bg.hold = false;
  bg.fail = undefined;
  bg.pending = [];
  bg.noSecondOpen = false;
});
afterEach(() => cleanup());

let seq = 0;
/** A progress sample (a line resume never reads: held, never fsynced on its own), about 500 bytes. */
const sample = (i: number): RunEvent =>
  ({
    type: "progress.sampled",
    seq: ++seq,
    at: Date.now(),
    instance: inst(i % 64),
    progress: {
      state: "RUNNING",
      canCommit: true,
      canWrite: false,
      info: "change event application",
      lagTimeSeconds: 3,
      collectionCopy: { estimatedTotalBytes: 1073741824, estimatedCopiedBytes: 1073741824 },
      directionMapping: { Source: "cluster0: 127.0.0.1:27017", Destination: "cluster1: 127.0.0.1:27018" },
      totalEventsApplied: 937 + i,
      mongosyncID: `instance-${i % 64}`,
      coordinatorID: "instance-0",
    },
  }) as unknown as RunEvent;
/** A line resume depends on (a step's start): fsynced before `write` returns. */
const durable = (j: ReturnType<typeof openJournal>): void =>
  j.write({
    type: "step.started",
    seq: ++seq,
    at: Date.now(),
    index: 0,
    id: "s",
    kind: "commit",
  } as unknown as RunEvent);
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
const open = (): ReturnType<typeof openJournal> => {
  seq = 0;
  return openJournal({ dir, runbookName: "r", runbookHash: "h" });
};
/** Writes samples in one turn until at least `bytes` were added to the file, then lets the turn end. */
async function samples(j: ReturnType<typeof openJournal>, bytes: number): Promise<void> {
  const start = statSync(j.file).size;
  for (let i = 0; statSync(j.file).size - start < bytes; i++) {
    j.write(sample(i));
    // held until the turn ends: the file grows only then (or past the hold's own limit)
    if (i % 16 === 15) await turn();
  }
  await turn();
}

describe.runIf(process.platform === "linux")("the journal's background fsync", () => {
  it("starts once the lines written since the last fsync pass the limit, on another descriptor of the same file", async () => {
    const j = open();
    await samples(j, BACKGROUND_SYNC_BYTES / 2);
    expect(bg.calls, "under the limit: no background fsync").toEqual([]);
    await samples(j, BACKGROUND_SYNC_BYTES / 2 + 1024);
    expect(bg.calls).toHaveLength(1);
    const call = bg.calls[0]!;
    expect(call.ino).toBe(statSync(j.file).ino);
    // a descriptor of its own: the journal's keeps the durable lines' error reports
    expect(openDescriptors(j.file).length).toBe(2);
    j.close();
    // closed with the journal (once its fsync answered): its number is free again
    await vi.waitFor(() => expect(() => fstatSync(call.fd)).toThrow());
  });

  it("counts from the durable line's own fsync: what it flushed is not flushed again", async () => {
    const j = open();
    await samples(j, BACKGROUND_SYNC_BYTES * 0.75);
    // a durable line: its fsync flushes the samples before it
    durable(j);
    await samples(j, BACKGROUND_SYNC_BYTES * 0.75);
    expect(bg.calls).toEqual([]);
    j.close();
  });

  it("one at a time: none starts while one is still running", async () => {
    bg.hold = true;
    const j = open();
    await samples(j, BACKGROUND_SYNC_BYTES + 1024);
    await samples(j, BACKGROUND_SYNC_BYTES * 2);
    expect(bg.calls).toHaveLength(1);
    bg.pending.shift()!();
    await turn();
    // its descriptor stays open for the next one, until the journal closes
    expect(openDescriptors(j.file)).toHaveLength(2);
    await samples(j, BACKGROUND_SYNC_BYTES + 1024);
    expect(bg.calls).toHaveLength(2);
    expect(bg.calls[1]!.fd).toBe(bg.calls[0]!.fd);
    bg.pending.shift()!();
    j.close();
  });

  it("a background fsync that fails fails the journal: the next line is refused with the file named", async () => {
    bg.fail = Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO", errno: -5, syscall: "fsync" });
    const j = open();
    await samples(j, BACKGROUND_SYNC_BYTES + 1024);
    expect(bg.calls).toHaveLength(1);
    expect(j.error?.message).toContain(j.file);
    expect(() => j.write(sample(1))).toThrow(j.file);
    j.close();
  });

  it("a journal closed while its background fsync runs closes that descriptor only once it has answered", async () => {
    bg.hold = true;
    const j = open();
    await samples(j, BACKGROUND_SYNC_BYTES + 1024);
    const { fd } = bg.calls[0]!;
    j.close();
    // still open: a number reused under a pending fsync would flush (and fail) another file
    expect(fstatSync(fd).ino).toBe(statSync(j.file).ino);
    // its answer, an error after the close (which fsynced on its own), fails nothing
    bg.fail = Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
    bg.pending.shift()!();
    await vi.waitFor(() => expect(() => fstatSync(fd)).toThrow());
    expect(j.error).toBeUndefined();
  });

  it("not off Linux: there a writeback error may reach the first fsync only, the background one's", async () => {
    const platform = Object.getOwnPropertyDescriptor(process, "platform")!;
    Object.defineProperty(process, "platform", { value: "darwin" });
    try {
      vi.resetModules();
      const other = await import("../../src/journal/journal.js");
      const j = other.openJournal({ dir, runbookName: "r", runbookHash: "h" });
      await samples(j, BACKGROUND_SYNC_BYTES * 2);
      expect(bg.calls).toEqual([]);
      j.close();
    } finally {
      Object.defineProperty(process, "platform", platform);
    }
  });

  it("no descriptor left for it: none starts, and the journal goes on (the durable lines' own fsyncs do it all)", async () => {
    bg.noSecondOpen = true;
    const j = open();
    await samples(j, BACKGROUND_SYNC_BYTES * 2);
    expect(bg.calls).toEqual([]);
    expect(j.error).toBeUndefined();
    durable(j);
    expect(openDescriptors(j.file)).toHaveLength(1);
    j.close();
  });

  it("a journal marked untrusted starts none", async () => {
    const j = open();
    j.distrust();
    await samples(j, BACKGROUND_SYNC_BYTES * 2);
    expect(bg.calls).toEqual([]);
    j.close();
  });
});
