import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireLock, LOCK_FILE_NAME } from "../../src/journal/index.js";
import { UserError } from "../../src/errors.js";
import { tempDir } from "../support/journal.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const lockFile = () => join(dir, LOCK_FILE_NAME);
const writeLock = (pid: number, host = hostname()) =>
  writeFileSync(lockFile(), JSON.stringify({ pid, host, startedAt: "2024-05-01T12:00:00.000Z" }));

function thrown(f: () => unknown): UserError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return err as UserError;
  }
  throw new Error("did not throw");
}

describe("acquireLock", () => {
  it("creates the lock with pid, host and start time, and releases it", () => {
    const lock = acquireLock(dir);
    expect(JSON.parse(readFileSync(lockFile(), "utf8"))).toEqual({
      pid: process.pid,
      host: hostname(),
      startedAt: expect.any(String),
    });
    expect(lock.staleFrom).toBeUndefined();
    lock.release();
    lock.release();
    expect(existsSync(lockFile())).toBe(false);
  });

  it("refuses a second runner while the first holds the lock", () => {
    const lock = acquireLock(dir);
    expect(thrown(() => acquireLock(dir)).message).toMatch(
      new RegExp(`another syncbook run \\(pid ${process.pid}, started `),
    );
    lock.release();
  });

  it("refuses a lock held by a live process", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(()=>{},30000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => child.once("spawn", r));
      writeLock(child.pid!);
      const err = thrown(() => acquireLock(dir));
      expect(err.message).toBe(
        `another syncbook run (pid ${child.pid}, started 2024-05-01T12:00:00.000Z) holds ${lockFile()}`,
      );
      expect(err.hint).toMatch(
        new RegExp(
          `kill -INT ${child.pid}.*process ids are reused.*delete ${lockFile().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`,
        ),
      );
      expect(err.exitCode).toBe(1);
      // the holder's lock is untouched
      expect(JSON.parse(readFileSync(lockFile(), "utf8")).pid).toBe(child.pid);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("takes over a stale lock (its process exited) and reports whose it was", () => {
    const done = spawnSync(process.execPath, ["-e", "0"]);
    writeLock(done.pid);
    const lock = acquireLock(dir);
    expect(lock.staleFrom).toEqual({ pid: done.pid, host: hostname(), startedAt: "2024-05-01T12:00:00.000Z" });
    expect(JSON.parse(readFileSync(lockFile(), "utf8")).pid).toBe(process.pid);
    lock.release();
  });

  it("refuses a lock from another host, with a hint to delete it if sure", () => {
    writeLock(12345, "other-box");
    const err = thrown(() => acquireLock(dir));
    expect(err.message).toMatch(/another syncbook run \(pid 12345 on host other-box, started .*\) holds/);
    expect(err.hint).toMatch(/cannot be checked from here.*if you are sure .* delete/);
  });

  it("refuses a fresh unreadable lock (being written), takes over an old one", () => {
    writeFileSync(lockFile(), "");
    expect(thrown(() => acquireLock(dir)).message).toMatch(/being created by another syncbook run/);
    utimesSync(lockFile(), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const lock = acquireLock(dir);
    expect(lock.staleFrom).toEqual({ unreadable: "" });
    lock.release();
  });

  it("does not treat pid 0 or a negative pid as a process (kill would address a group)", () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: -1, host: hostname(), startedAt: "x" }));
    utimesSync(lockFile(), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const lock = acquireLock(dir, {
      isAlive: () => {
        throw new Error("must not be asked");
      },
    });
    expect(lock.staleFrom).toMatchObject({ unreadable: expect.stringContaining('"pid":-1') });
    lock.release();
  });

  it("release leaves a lock that is no longer ours", () => {
    const lock = acquireLock(dir);
    writeLock(4242);
    lock.release();
    expect(JSON.parse(readFileSync(lockFile(), "utf8")).pid).toBe(4242);
  });
});
