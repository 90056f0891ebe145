import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireLock, fleetLockDir, LOCK_FILE_NAME } from "../../src/journal/index.js";
import { UserError } from "../../src/errors.js";
import { processInfo, selfIdentity } from "../../src/processes.js";
import { tempDir } from "../support/journal.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const lockFile = () => join(dir, LOCK_FILE_NAME);
/** This runner's PID namespace and boot: a lock written here names them (src/processes.ts). */
const me = selfIdentity();
const here = { ...(me.pidns ? { pidns: me.pidns } : {}), ...(me.boot ? { boot: me.boot } : {}) };
const writeLock = (pid: number, host = hostname(), more: Record<string, unknown> = here) =>
  writeFileSync(lockFile(), JSON.stringify({ pid, host, startedAt: "2024-05-01T12:00:00.000Z", ...more }));

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
      ...me,
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
          `kill -INT ${child.pid}.*then run again \\(with --resume.*process ids are reused.*delete the lock \\(rm ${lockFile().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\)`,
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
    expect(lock.staleFrom).toEqual({ pid: done.pid, host: hostname(), startedAt: "2024-05-01T12:00:00.000Z", ...here });
    expect(JSON.parse(readFileSync(lockFile(), "utf8")).pid).toBe(process.pid);
    lock.release();
  });

  it("with the runbook's status command, every way on names it: the holder's run stopped, or the lock deleted", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(()=>{},30000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => child.once("spawn", r));
      writeLock(child.pid!);
      const status = "syncbook status 'my rb.yaml' --journal-dir j";
      const err = thrown(() => acquireLock(dir, { status }));
      expect(err.hint).toBe(
        `wait for it to finish, or stop it (kill -INT ${child.pid}: it undoes its hooks and keeps its journal), then see where that run stopped and the exact way on: ${status}; if pid ${child.pid} is not a syncbook run (process ids are reused) and no syncbook run is using this journal folder, delete the lock (rm ${lockFile()}), then see where that run stopped and the exact way on: ${status}`,
      );
      writeLock(child.pid!, "another-host");
      expect(thrown(() => acquireLock(dir, { status })).hint).toBe(
        `a run on another host cannot be checked from here: stop it there first; if you are sure no syncbook run is using this journal folder, delete the lock (rm ${lockFile()}), then see where that run stopped and the exact way on: ${status}`,
      );
    } finally {
      child.kill("SIGKILL");
    }
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

  // a previous review: the fleet's lock (another copy of the runbook, another journal folder) said
  // "then run again (with --resume to continue that run)", no command: the holder names its own
  it("a holder that wrote its runbook and --journal-dir is named by its own status command; this runner's for one that did not", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(()=>{},30000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => child.once("spawn", r));
      const mine = "syncbook status b.yaml --journal-dir jb";
      writeLock(child.pid!, hostname(), { ...here, runbook: "/srv/a/rb.yaml", journalDir: "/srv/a journals" });
      const err = thrown(() => acquireLock(dir, { status: mine }));
      const theirs = "syncbook status /srv/a/rb.yaml --journal-dir '/srv/a journals'";
      expect(err.hint).toContain(`then see where that run stopped and the exact way on: ${theirs};`);
      expect(err.hint).not.toContain(mine);
      expect(err.hint).not.toContain("run again");
      writeLock(child.pid!, hostname(), { ...here, runbook: "/srv/a/rb.yaml" });
      expect(thrown(() => acquireLock(dir, { status: mine })).hint).toContain(
        "then see where that run stopped and the exact way on: syncbook status /srv/a/rb.yaml;",
      );
      writeLock(child.pid!, "another-host", { ...here, runbook: "/srv/a/rb.yaml", journalDir: "/j" });
      expect(thrown(() => acquireLock(dir, { status: mine })).hint).toMatch(
        /\), then see where that run stopped and the exact way on: syncbook status \/srv\/a\/rb\.yaml --journal-dir \/j$/,
      );
      writeLock(child.pid!);
      expect(thrown(() => acquireLock(dir, { status: mine })).hint).toContain(
        `then see where that run stopped and the exact way on: ${mine};`,
      );
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("writes its runbook and --journal-dir into the lock when given", () => {
    const lock = acquireLock(dir, { runbook: "/srv/a/rb.yaml", journalDir: "/srv/j" });
    expect(lock.info).toMatchObject({ runbook: "/srv/a/rb.yaml", journalDir: "/srv/j" });
    lock.release();
    const plain = acquireLock(dir);
    expect(plain.info.journalDir).toBeUndefined();
    plain.release();
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

/**
 * Issue 42, invariant 4: "A lock held in another PID namespace is never stale to you". A pid means
 * something only in its PID namespace and its boot; a live pid with another start time is another
 * process (pid_namespaces(7), proc(5)).
 */
describe("acquireLock: who holds it, beyond its pid", () => {
  it.skipIf(!me.pidns)(
    "a lock from another PID namespace is refused like one from another host, even when its pid is gone here",
    () => {
      const done = spawnSync(process.execPath, ["-e", "0"]);
      writeLock(done.pid, hostname(), { ...here, pidns: "pid:[1]" });
      const err = thrown(() => acquireLock(dir));
      expect(err.message).toBe(
        `another syncbook run (pid ${done.pid}, started 2024-05-01T12:00:00.000Z, in PID namespace pid:[1]) holds ${lockFile()}`,
      );
      expect(err.hint).toMatch(
        /its pid means nothing in this PID namespace .*cannot be checked from here, as for a run on another host/,
      );
      expect(JSON.parse(readFileSync(lockFile(), "utf8")).pidns).toBe("pid:[1]");
    },
  );

  it.skipIf(!me.pidns)("a lock that names no PID namespace (an older syncbook) cannot be judged: refused", () => {
    const done = spawnSync(process.execPath, ["-e", "0"]);
    writeLock(done.pid, hostname(), {});
    expect(thrown(() => acquireLock(dir)).message).toMatch(/in a PID namespace it does not name\) holds/);
  });

  it("a lock from an earlier boot is stale, whatever its pid does now", () => {
    // pid 1 always runs: only the boot tells that this lock's holder is gone
    writeLock(1, hostname(), { ...here, boot: "an-earlier-boot" });
    const lock = acquireLock(dir, { identity: { ...here, boot: "this-boot" } });
    expect(lock.staleFrom).toMatchObject({ pid: 1, boot: "an-earlier-boot" });
    lock.release();
  });

  it("a live pid with another start time than its holder's was reused: stale", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(()=>{},30000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => child.once("spawn", r));
      writeLock(child.pid!, hostname(), { ...here, start: 1 });
      const lock = acquireLock(dir, { startOf: (pid) => (pid === child.pid ? 2 : undefined) });
      expect(lock.staleFrom).toMatchObject({ pid: child.pid, start: 1 });
      lock.release();
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a live pid with its holder's start time (or one that cannot be read) holds the lock", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(()=>{},30000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => child.once("spawn", r));
      const start = processInfo(child.pid!)?.start;
      writeLock(child.pid!, hostname(), { ...here, start: start ?? 7 });
      expect(thrown(() => acquireLock(dir)).message).toMatch(new RegExp(`another syncbook run \\(pid ${child.pid}`));
      expect(thrown(() => acquireLock(dir, { startOf: () => undefined })).message).toMatch(/another syncbook run/);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("fleetLockDir: one folder per user, whatever the shell's environment", () => {
  const home = (): string => "/home/op";
  it("the same with and without XDG_RUNTIME_DIR or XDG_STATE_HOME (sudo -iu, cron, tmux), and whatever $HOME says", () => {
    const dirs = [
      {},
      { XDG_RUNTIME_DIR: "/run/user/1000" },
      { XDG_STATE_HOME: "/home/op/.state" },
      { HOME: "/tmp/elsewhere" },
      { XDG_RUNTIME_DIR: "/run/user/1000", XDG_STATE_HOME: "/x", HOME: "/y" },
    ].map((env) => fleetLockDir(env, home));
    expect(new Set(dirs)).toEqual(new Set([join("/home/op", ".local", "state", "syncbook", "locks")]));
  });
  it("SYNCBOOK_STATE_DIR first (the test suite's temp folder)", () => {
    expect(fleetLockDir({ SYNCBOOK_STATE_DIR: "/tmp/s", XDG_RUNTIME_DIR: "/run/user/1000" }, home)).toBe(
      join("/tmp/s", "locks"),
    );
  });
  it("a user the user database does not know (a container's arbitrary uid): the environment's home", () => {
    const d = fleetLockDir({}, () => {
      throw new Error("ENOENT");
    });
    expect(d).toBe(join(homedir(), ".local", "state", "syncbook", "locks"));
  });
});
