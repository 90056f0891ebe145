/**
 * One runner per journal folder (and, through fleet-lock.ts, per sync service instance). The
 * lock is a file created exclusively (written whole, then linked into place), holding the
 * holder's pid, host and start time, and what makes its pid mean something (issue 42,
 * src/processes.ts): its PID namespace, its boot and the process's own start time. A lock whose
 * holder no longer runs is stale (the holder crashed or was killed) and is taken over:
 * - from another host, or from another PID namespace (a container with the host's network and
 *   host name): its pid cannot be checked from here, so it is refused, never taken over (a pid
 *   that is gone here may run there); a lock that does not name its namespace is judged so too;
 * - from an earlier boot of this machine: stale (no process outlives a reboot);
 * - its pid not running: stale; running with another start time than the holder's: the pid was
 *   reused, stale; running with the same start (or one that cannot be read): refused, and the
 *   hint says how to clear the lock if that pid is not a syncbook run.
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import { shellCommand } from "../text.js";
import { runbookArg } from "../next-run.js";
import { ioError, makeFolder } from "./io-errors.js";
import { isObject, thisHost } from "./format.js";
import { processInfo, selfIdentity, type ProcessIdentity } from "../processes.js";

export const LOCK_FILE_NAME = "syncbook.lock";

export interface LockInfo {
  pid: number;
  host: string;
  /** ISO time. */
  startedAt: string;
  /** The runbook file the holder runs, when it said (the fleet's locks: which copy holds it). */
  runbook?: string;
  /** The `--journal-dir` the holder was given, resolved, when it was (the fleet's locks: where its journal is). */
  journalDir?: string;
  /** The holder's PID namespace, boot and process start time (src/processes.ts), where the system tells them. */
  pidns?: string;
  boot?: string;
  start?: number;
}

/**
 * A lock's holder in words, for the line a run says when it takes the lock over: who held it and
 * since when (the PID namespace, boot and start that proved it gone stay in the lock file).
 */
export function lockHolderText(from: LockInfo | { unreadable: string }): string {
  if ("unreadable" in from)
    return from.unreadable === ""
      ? "an empty lock file"
      : `a lock file that could not be read: ${JSON.stringify(from.unreadable)}`;
  return `pid ${from.pid} on ${from.host}, since ${from.startedAt}${from.runbook !== undefined ? `, running ${from.runbook}` : ""}: that process is gone`;
}

export interface Lock {
  /** Path of the lock file. */
  readonly file: string;
  readonly info: LockInfo;
  /** The stale lock this runner took over (its holder had died), for the run's log. */
  readonly staleFrom?: LockInfo | { unreadable: string };
  /** Removes the lock if it is still ours; idempotent. */
  release(): void;
}

export interface AcquireLockOptions {
  /** For tests: the pid and host this runner claims. */
  pid?: number;
  host?: string;
  now?: () => number;
  /** Is this pid running on this host? Default: `process.kill(pid, 0)`. */
  isAlive?: (pid: number) => boolean;
  /** For tests: this runner's PID namespace, boot and start (default: src/processes.ts `selfIdentity`). */
  identity?: ProcessIdentity;
  /** The start time of a running pid (default: `/proc/<pid>/stat`); undefined where it cannot be read. */
  startOf?: (pid: number) => number | undefined;
  /** An unreadable (empty, half-written) lock older than this is stale, in ms (default 10 s). */
  unreadableStaleAfterMs?: number;
  /** The lock file's name in `dir` (default `syncbook.lock`). */
  fileName?: string;
  /** What the lock guards, for its messages (default "this journal folder"). */
  guards?: string;
  /** The runbook file this runner runs, written into the lock for the next runner's message. */
  runbook?: string;
  /** The `--journal-dir` this runner was given, resolved, written beside `runbook`. */
  journalDir?: string;
  /** How to put the lock elsewhere when its folder cannot be written ("or …"; default: `--journal-dir`). */
  elsewhere?: string;
  /**
   * The command that shows where the holder's run stopped and the exact way on (`syncbook status
   * <runbook>`), for the refusal's hint: the lock layer knows no runbook, and "run again with
   * --resume" is no command one pastes at 3 a.m. A holder that wrote its `runbook` is named by its
   * own (the fleet's locks: another copy of the runbook, another journal folder); this is said
   * for one that did not, and for a lock that cannot be read.
   */
  status?: string;
}

/** Signal 0 checks existence without sending anything; EPERM means it exists (another user's). */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function parseLock(text: string): LockInfo | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  // a pid ≤ 0 would make kill(pid, 0) address process groups: such a lock is unreadable
  if (
    !isObject(v) ||
    !Number.isSafeInteger(v.pid) ||
    (v.pid as number) <= 0 ||
    typeof v.host !== "string" ||
    typeof v.startedAt !== "string"
  )
    return undefined;
  return {
    pid: v.pid as number,
    host: v.host,
    startedAt: v.startedAt,
    ...(typeof v.runbook === "string" ? { runbook: v.runbook } : {}),
    ...(typeof v.journalDir === "string" ? { journalDir: v.journalDir } : {}),
    ...(typeof v.pidns === "string" ? { pidns: v.pidns } : {}),
    ...(typeof v.boot === "string" ? { boot: v.boot } : {}),
    ...(Number.isSafeInteger(v.start) ? { start: v.start as number } : {}),
  };
}

/** What to do once the holder is gone: see where its run stopped (`status`), or run again. */
const afterHint = (status: string | undefined): string =>
  status !== undefined
    ? `then see where that run stopped and the exact way on: ${status}`
    : "then run again (with --resume to continue that run)";

const deleteHint = (file: string, guards: string, status: string | undefined, lead = "if you are sure"): string =>
  `${lead} no syncbook run is using ${guards}, delete the lock (${shellCommand(["rm", file])}), ${afterHint(status)}`;

/** "pid 42, started …" and the holder's runbook when it said. */
const holderText = (h: LockInfo, withHost: boolean): string =>
  `pid ${h.pid}${withHost ? ` on host ${h.host}` : ""}, started ${h.startedAt}${h.runbook !== undefined ? `, runbook ${h.runbook}` : ""}`;

/** Takes the journal folder's lock, or throws a UserError naming the holder. */
export function acquireLock(dir: string, options: AcquireLockOptions = {}): Lock {
  const file = join(dir, options.fileName ?? LOCK_FILE_NAME);
  const guards = options.guards ?? "this journal folder";
  const isAlive = options.isAlive ?? isPidAlive;
  const host = options.host ?? thisHost();
  const self = options.identity ?? selfIdentity();
  const startOf = options.startOf ?? ((pid: number) => processInfo(pid)?.start);
  const info: LockInfo = {
    pid: options.pid ?? process.pid,
    host,
    startedAt: new Date((options.now ?? Date.now)()).toISOString(),
    ...(options.runbook !== undefined ? { runbook: options.runbook } : {}),
    ...(options.journalDir !== undefined ? { journalDir: options.journalDir } : {}),
    ...self,
  };
  const text = `${JSON.stringify(info)}\n`;
  const staleAfter = options.unreadableStaleAfterMs ?? 10_000;
  makeFolder(dir, `create the ${options.fileName === undefined ? "journal" : "lock"} folder`, {
    ...(options.elsewhere ? { elsewhere: options.elsewhere } : {}),
  });

  sweepLeftovers(dir, options.fileName ?? LOCK_FILE_NAME, (options.now ?? Date.now)());
  let staleFrom: LockInfo | { unreadable: string } | undefined;
  // a few rounds: each one either wins the exclusive create or learns who holds the lock
  for (let round = 0; round < 5; round++) {
    try {
      createWhole(file, text);
      let released = false;
      return {
        file,
        info,
        ...(staleFrom ? { staleFrom } : {}),
        release() {
          if (released) return;
          released = true;
          // only our own lock: a lock someone else took over after declaring us stale is theirs
          try {
            if (readFileSync(file, "utf8") === text) unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw ioError(file, "create the lock", err, { ...(options.elsewhere ? { elsewhere: options.elsewhere } : {}) });
      }
    }

    let held: string;
    try {
      held = readFileSync(file, "utf8");
    } catch {
      continue; // released between our create and our read: try again
    }
    const holder = parseLock(held);
    if (!holder) {
      let ageMs = 0;
      try {
        ageMs = Date.now() - statSync(file).mtimeMs;
      } catch {
        continue;
      }
      // a lock appears whole (or, without hard links, is written right after its create): an
      // unreadable one that stays so was left by a crash, or damaged
      if (ageMs < staleAfter) {
        throw new UserError(`the lock ${file} is being created by another syncbook run (or is unreadable)`, {
          exitCode: ExitCode.failed,
          hint: `wait a few seconds and try again; ${deleteHint(file, guards, options.status)}`,
        });
      }
      if (takeOver(file, held)) staleFrom = { unreadable: held.slice(0, 200) };
      continue;
    }
    // the command that shows where the holder's run stopped: its own runbook and journal folder
    const status =
      holder.runbook !== undefined
        ? `syncbook status ${runbookArg({ file: holder.runbook, journalDir: holder.journalDir })}`
        : options.status;
    if (holder.host !== host) {
      throw new UserError(`another syncbook run (${holderText(holder, true)}) holds ${file}`, {
        exitCode: ExitCode.failed,
        hint: `a run on another host cannot be checked from here: stop it there first; ${deleteHint(file, guards, status)}`,
      });
    }
    // no process outlives a reboot: a lock from an earlier boot of this machine is stale
    const rebooted = holder.boot !== undefined && self.boot !== undefined && holder.boot !== self.boot;
    if (!rebooted && holder.pidns !== self.pidns) {
      throw new UserError(
        `another syncbook run (${holderText(holder, false)}, ${holder.pidns === undefined ? "in a PID namespace it does not name" : `in PID namespace ${holder.pidns}`}) holds ${file}`,
        {
          exitCode: ExitCode.failed,
          hint: `its pid means nothing in this PID namespace (${self.pidns ?? "unnamed"}: another container, or the host): whether it still runs cannot be checked from here, as for a run on another host: stop it where it runs first; ${deleteHint(file, guards, status)}`,
        },
      );
    }
    // a live pid whose start differs from the holder's is another process that reuses its number
    const reused = (pid: number): boolean => {
      if (holder.start === undefined) return false;
      const now = startOf(pid);
      return now !== undefined && now !== holder.start;
    };
    if (!rebooted && isAlive(holder.pid) && !reused(holder.pid)) {
      throw new UserError(`another syncbook run (${holderText(holder, false)}) holds ${file}`, {
        exitCode: ExitCode.failed,
        hint: `wait for it to finish, or stop it (kill -INT ${holder.pid}: it undoes its hooks and keeps its journal), ${afterHint(status)}; ${deleteHint(file, guards, status, `if pid ${holder.pid} is not a syncbook run (process ids are reused) and`)}`,
      });
    }
    if (takeOver(file, held)) staleFrom = holder;
  }
  throw new UserError(`could not take the lock ${file}: other runs keep taking it`, {
    exitCode: ExitCode.failed,
    hint: `make sure only one syncbook run uses ${guards}`,
  });
}

/** All of `text`: a short write would link a cut lock that others take for a crash's. */
function writeWhole(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
}

/**
 * Creates `file` holding `text`, or throws EEXIST: written and synced under a name of its own, then
 * hard-linked to `file` (link, like `wx`, fails if the name is taken). A lock is never seen empty,
 * so a runner launched at the same moment as its holder names the holder rather than "a lock being
 * created" (a CI run of test/run/two-copies.e2e saw that with a plain `wx` create then write).
 */
function createWhole(file: string, text: string): void {
  const own = `${file}.${process.pid}.${randomUUID()}.new`;
  const fd = openSync(own, "wx");
  try {
    try {
      writeWhole(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(own, file);
    } catch (err) {
      // a file system without hard links: the plain exclusive create, seen empty for a moment
      if (!["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
      const fd2 = openSync(file, "wx");
      try {
        writeWhole(fd2, text);
        fsyncSync(fd2);
      } finally {
        closeSync(fd2);
      }
    }
  } finally {
    try {
      unlinkSync(own);
    } catch {
      // gone
    }
  }
}

/** How old a lock's own `.new` or `.stale` file must be to be a leftover: each lives milliseconds. */
export const LEFTOVER_AFTER_MS = 60_000;

/**
 * Removes the files a runner killed between its lock's write and its link (`createWhole`'s `.new`)
 * or inside a take-over (`.stale`) left beside the lock: by age, not by pid, as the folder may be
 * shared with other hosts. A live runner's own lasts milliseconds; one a minute old was left.
 */
function sweepLeftovers(dir: string, lockName: string, now: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // the create that follows says what is wrong with the folder
  }
  for (const name of names) {
    if (!name.startsWith(`${lockName}.`) || !/\.\d+\.[0-9a-f-]{36}\.(new|stale)$/.test(name)) continue;
    const path = join(dir, name);
    try {
      // a rename keeps the file's mtime (a `.stale` is the old lock moved aside): its ctime is the move's
      const st = statSync(path);
      if (now - Math.max(st.mtimeMs, st.ctimeMs) > LEFTOVER_AFTER_MS) unlinkSync(path);
    } catch {
      // gone, or not ours to remove: harmless beside the lock
    }
  }
}

/**
 * Removes a stale lock, race-safely: it is moved aside first (atomic) and checked to be the
 * stale one we read; if another runner had already replaced it with a fresh lock, that lock is
 * put back without overwriting anything (link fails if the name is taken). Returns whether the
 * stale lock was removed (the caller then retries the exclusive create either way).
 */
function takeOver(file: string, staleText: string): boolean {
  const aside = `${file}.${process.pid}.${randomUUID()}.stale`;
  try {
    renameSync(file, aside);
  } catch {
    return false; // someone else moved or released it first
  }
  let moved = "";
  try {
    moved = readFileSync(aside, "utf8");
  } catch {
    // unreadable: treat as not ours to delete
  }
  if (moved !== staleText) {
    try {
      linkSync(aside, file);
    } catch {
      // the name was taken meanwhile: that run holds the lock now, and the next round says so
    }
    try {
      unlinkSync(aside);
    } catch {
      // gone
    }
    return false;
  }
  try {
    unlinkSync(aside);
  } catch {
    // gone (swept by another runner): the stale lock is out of the way all the same
  }
  return true;
}
