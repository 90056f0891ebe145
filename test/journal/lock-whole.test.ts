/**
 * A lock is never seen without its content. With a plain `wx` create then a write, a runner
 * launched at the same moment as the holder read an empty lock and said "being created by another
 * syncbook run (or is unreadable)" instead of naming the holder (a CI run of
 * test/run/two-copies.e2e). Here every file-system call acquireLock makes is followed by a look
 * at the lock's name: whenever it exists, it holds the whole lock.
 */
import type * as Fs from "node:fs";
import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const seen = vi.hoisted(() => ({ file: undefined as string | undefined, contents: [] as string[], linkFails: "" }));

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  const look = (): void => {
    if (seen.file !== undefined && fs.existsSync(seen.file)) seen.contents.push(fs.readFileSync(seen.file, "utf8"));
  };
  const watched = <F extends (...a: never[]) => unknown>(f: F): F =>
    ((...a: Parameters<F>) => {
      try {
        return f(...a);
      } finally {
        look();
      }
    }) as F;
  return {
    ...fs,
    openSync: watched(fs.openSync),
    writeSync: watched(fs.writeSync),
    fsyncSync: watched(fs.fsyncSync),
    closeSync: watched(fs.closeSync),
    linkSync: watched((from: Fs.PathLike, to: Fs.PathLike) => {
      if (seen.linkFails !== "") throw Object.assign(new Error(seen.linkFails), { code: seen.linkFails });
      fs.linkSync(from, to);
    }),
  };
});

const { acquireLock, LOCK_FILE_NAME } = await import("../../src/journal/index.js");
const { tempDir } = await import("../support/journal.js");

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  seen.file = join(dir, LOCK_FILE_NAME);
  seen.contents = [];
  seen.linkFails = "";
});
afterEach(() => cleanup());

describe("acquireLock writes the lock whole before its name exists", () => {
  it("every look at the name finds the whole lock, and nothing else is left in the folder", () => {
    const lock = acquireLock(dir);
    const whole = `${JSON.stringify(lock.info)}\n`;
    expect(seen.contents.length).toBeGreaterThan(0);
    expect(new Set(seen.contents)).toEqual(new Set([whole]));
    expect(readdirSync(dir)).toEqual([LOCK_FILE_NAME]);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a second runner finds the first's lock whole and names it; its own attempt leaves no file behind", () => {
    const lock = acquireLock(dir);
    expect(() => acquireLock(dir)).toThrow(/another syncbook run \(pid \d+, started /);
    expect(readdirSync(dir)).toEqual([LOCK_FILE_NAME]);
    lock.release();
  });

  it.each(["EPERM", "ENOTSUP"])(
    "on a file system without hard links (%s), the plain exclusive create still takes the lock",
    (code) => {
      seen.linkFails = code;
      const lock = acquireLock(dir);
      expect(JSON.parse(readFileSync(seen.file!, "utf8"))).toEqual(lock.info);
      expect(readdirSync(dir)).toEqual([LOCK_FILE_NAME]);
      expect(() => acquireLock(dir)).toThrow(/another syncbook run \(pid \d+, started /);
      lock.release();
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  it("another link failure is the lock's I/O error, naming the lock, with nothing left behind", () => {
    seen.linkFails = "EIO";
    expect(() => acquireLock(dir)).toThrow(new RegExp(`${LOCK_FILE_NAME}`));
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a `.new` or `.stale` a runner killed in its lock's write or take-over left a minute ago is removed; a fresh one, and other files, stay", () => {
    // a kill -9 between the write and the link left `syncbook.lock.<pid>.<uuid>.new` for ever
    const uuid = "0b7e6f5c-6d1a-4c8e-9a3b-2f1e0d9c8b7a";
    const old = [`${LOCK_FILE_NAME}.4242.${uuid}.new`, `${LOCK_FILE_NAME}.4243.${uuid}.stale`];
    const others = ["a.jsonl", `${LOCK_FILE_NAME}.notes.new`];
    for (const n of [...old, ...others]) writeFileSync(join(dir, n), "x");
    // a rename keeps the old lock's mtime: a `.stale` moved aside a moment ago is judged by its ctime
    const stale = `${LOCK_FILE_NAME}.4244.${uuid}.stale`;
    writeFileSync(join(dir, stale), "x");
    const hourAgo = (Date.now() - 3_600_000) / 1000;
    utimesSync(join(dir, stale), hourAgo, hourAgo);
    const twoMinutesOn = Date.now() + 120_000;
    // now: a minute has not passed since any was made, so none is a leftover yet
    const first = acquireLock(dir);
    expect(readdirSync(dir).sort()).toEqual([LOCK_FILE_NAME, ...old, stale, ...others].sort());
    first.release();
    // two minutes on, every one of the lock's own is
    const lock = acquireLock(dir, { now: () => twoMinutesOn });
    expect(readdirSync(dir).sort()).toEqual([LOCK_FILE_NAME, ...others].sort());
    lock.release();
  });
});
