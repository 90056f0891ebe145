/**
 * TEST-ONLY crash points (issue 30, "crash points enumerated, not sampled"). Every place where the
 * runner can die with a different outcome is numbered, in the order a run passes them: each
 * durable journal line once it is written (src/journal/journal.ts), each POST to the service or
 * the verifier before it leaves and once its answer is in, before the fleet journals it
 * (src/api/client.ts), each hook HTTP request the same way (src/plugin/http.ts), each hook process
 * right after its spawn and once it exited (src/plugin/process.ts; an undo is a hook call).
 *
 * `test/crash/crash-points.e2e.test.ts` counts the points of a clean run, then kills a run at each
 * one in turn and resumes it; `test/crash/disk-full.e2e.test.ts` fills the journal's (real, small)
 * file system at each one instead. Variables, read once per process:
 *
 *   SYNCBOOK_TEST_HOOKS=crash-points   arms the others; without it they are ignored, so a
 *                                      stray `SYNCBOOK_TEST_CRASH_AT` in a production shell
 *                                      cannot kill a real cutover
 *   SYNCBOOK_TEST_CRASH_AT=<n>         SIGKILL this process at point n (1-based)
 *   SYNCBOOK_TEST_CRASH_POINTS=<file>  append `<n> <label>` for each point passed
 *   SYNCBOOK_TEST_FILL_AT=<n>          at point n, write zeros to SYNCBOOK_TEST_FILL_FILE until its
 *                                      file system is full (ENOSPC), then go on: the next write
 *                                      that needs space fails as on a real full disk
 *
 * No point sits between a line's write and its fsync: under SIGKILL a written line survives in
 * the page cache, so both places leave the same file (a power loss is another test:
 * test/journal/fanout-fsync.e2e.test.ts). Lines that are not fsynced (progress samples, wait status,
 * logs) are not points, nor are retry decisions: resume reads none of them, and their count
 * depends on timing, while the points must be the same in every run of one runbook.
 *
 * Module state on purpose: the counter is the process's own (it is what dies), test-only, and
 * inert unless armed.
 */
import { appendFileSync, closeSync, openSync, writeSync } from "node:fs";

export const CRASH_ARM_ENV = "SYNCBOOK_TEST_HOOKS";
export const CRASH_ARM_VALUE = "crash-points";
export const CRASH_AT_ENV = "SYNCBOOK_TEST_CRASH_AT";
export const CRASH_POINTS_ENV = "SYNCBOOK_TEST_CRASH_POINTS";
export const FILL_AT_ENV = "SYNCBOOK_TEST_FILL_AT";
export const FILL_FILE_ENV = "SYNCBOOK_TEST_FILL_FILE";

interface Armed {
  at: number | undefined;
  file: string | undefined;
  fill: { at: number; file: string } | undefined;
  n: number;
}

let armed: Armed | null | undefined;

function arm(env: NodeJS.ProcessEnv): Armed | null {
  if (env[CRASH_ARM_ENV] !== CRASH_ARM_VALUE) return null;
  const raw = env[CRASH_AT_ENV];
  const at = raw !== undefined && /^[1-9]\d*$/.test(raw) ? Number(raw) : undefined;
  const file = env[CRASH_POINTS_ENV] || undefined;
  const fillAt = env[FILL_AT_ENV];
  const fill =
    fillAt !== undefined && /^[1-9]\d*$/.test(fillAt) && env[FILL_FILE_ENV]
      ? { at: Number(fillAt), file: env[FILL_FILE_ENV] }
      : undefined;
  if (at === undefined && file === undefined && fill === undefined) return null;
  process.stderr.write(
    `syncbook: test-only crash points armed (${CRASH_ARM_ENV}=${CRASH_ARM_VALUE}${at === undefined ? "" : `, SIGKILL at point ${at}`}${fill === undefined ? "" : `, disk filled at point ${fill.at}`})\n`,
  );
  return { at, file, fill, n: 0 };
}

/** Writes zeros to `file` until its file system has no room left (any other error ends it too). */
function fillDisk(file: string): void {
  const chunk = Buffer.alloc(1 << 16);
  let fd: number | undefined;
  try {
    fd = openSync(file, "a");
    for (let size = chunk.length; size >= 1;) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch {
        size = Math.floor(size / 2); // the last pages: smaller writes until not one byte fits
      }
    }
  } catch {
    // cannot even open it: the disk is as full as it gets
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A place where the runner can die. `label` is computed only when armed. */
export function crashPoint(label: string | (() => string)): void {
  if (armed === undefined) armed = arm(process.env);
  if (armed === null) return;
  const n = ++armed.n;
  if (armed.file !== undefined) appendFileSync(armed.file, `${n} ${typeof label === "function" ? label() : label}\n`);
  if (n === armed.fill?.at) fillDisk(armed.fill.file);
  if (n === armed.at) {
    process.kill(process.pid, "SIGKILL");
    // not one more instruction of the run: the signal is delivered before kill returns, this is a backstop
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
}
