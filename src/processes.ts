/**
 * What this machine says of a process, beyond its pid (issue 42): a pid is reused, is only
 * meaningful in its PID namespace, and means nothing after a reboot. So whoever must later tell
 * whether a process still runs (a lock's holder, a hook process a dead runner left) records,
 * besides the pid:
 * - its start time (`/proc/<pid>/stat` field 22, clock ticks since boot): a live pid with another
 *   start time is another process;
 * - the PID namespace it lives in (`/proc/self/ns/pid`, e.g. `pid:[4026531836]`): a pid from
 *   another namespace (a container with the host's network) cannot be checked from here at all;
 * - the boot (`/proc/sys/kernel/random/boot_id`): no process outlives a reboot.
 * Linux only; elsewhere every reader returns undefined, and the callers take the reading that
 * fails safe (they cannot tell, so they do not assume a process is gone).
 *
 * Sources: proc(5) (`/proc/pid/stat`: "(22) starttime: The time the process started after system
 * boot ... expressed in clock ticks"; `/proc/pid/environ`; `/proc/pid/ns/`), and
 * pid_namespaces(7) ("process IDs in different PID namespaces are independent").
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** One process as `/proc/<pid>/stat` and `/proc/<pid>/status` show it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** Its session id (a session leader's own pid). */
  sid: number;
  /** Field 22: clock ticks since boot when it started. */
  start: number;
  /** Field 3: R, S, D, Z (a zombie has exited), T… */
  state: string;
  /** A kernel thread: never a hook's process. */
  kernel: boolean;
}

/** PF_KTHREAD in `/proc/<pid>/stat`'s flags (field 9), from the kernel's include/linux/sched.h. */
const PF_KTHREAD = 0x00200000;

/** Parses `/proc/<pid>/stat`: the command name sits in parentheses and may hold spaces and parentheses itself. */
export function parseStat(text: string): ProcessInfo | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  // fields 3 onwards, counted from 3
  const f = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const field = (n: number): number => Number(f[n - 3]);
  const info: ProcessInfo = {
    pid,
    ppid: field(4),
    pgid: field(5),
    sid: field(6),
    start: field(22),
    state: f[0] ?? "",
    // a flags word past 2^53 does not exist (it is 32 bits in the kernel)
    kernel: (field(9) & PF_KTHREAD) !== 0 || pid === 2 || field(4) === 2,
  };
  return Number.isSafeInteger(info.pid) && Number.isSafeInteger(info.start) ? info : undefined;
}

/** `/proc/<pid>/stat` of one process (undefined: gone, or not Linux). */
export function processInfo(pid: number): ProcessInfo | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** Every process this machine lists in this PID namespace (undefined where `/proc` cannot be listed). */
export function listProcesses(): ProcessInfo[] | undefined {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const out: ProcessInfo[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const p = processInfo(Number(n));
    if (p) out.push(p);
  }
  return out;
}

/**
 * A process's environment as `NAME=value` entries: undefined when it is gone, "unreadable" when it
 * exists and this user may not read it (another user's, or a set-uid program such as sudo).
 */
export function processEnviron(pid: number): string[] | "unreadable" | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "EACCES" || code === "EPERM" ? "unreadable" : undefined;
  }
}

/** A process's real uid (`/proc/<pid>/status`, its `Uid:` line's first field). */
export function processUid(pid: number): number | undefined {
  try {
    const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Who this process is, beyond its pid: what a lock or a journal records for a later reader. */
export interface ProcessIdentity {
  /** The PID namespace, `pid:[inode]`. */
  pidns?: string;
  /** The boot this runs in. */
  boot?: string;
  /** This process's start, in clock ticks since boot. */
  start?: number;
}

/** This process's PID namespace, boot and start time (each undefined where the system does not say). */
export function selfIdentity(): ProcessIdentity {
  let pidns: string | undefined;
  let boot: string | undefined;
  try {
    pidns = readlinkSync("/proc/self/ns/pid");
  } catch {
    pidns = undefined;
  }
  try {
    boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined;
  } catch {
    boot = undefined;
  }
  // /proc/self, not /proc/<process.pid>: in a PID namespace without its own /proc mount the two differ
  let start: number | undefined;
  try {
    start = parseStat(readFileSync("/proc/self/stat", "utf8"))?.start;
  } catch {
    start = undefined;
  }
  return {
    ...(pidns !== undefined ? { pidns } : {}),
    ...(boot !== undefined ? { boot } : {}),
    ...(start !== undefined ? { start } : {}),
  };
}
