/**
 * vitest global setup: every test (and every process a test starts: the CLI, hooks, the crash
 * harness's children) makes its temporary folders under one folder of this run, removed when the
 * run ends, so `npm test` leaves nothing in the system's temp folder even where a test forgets
 * to clean up or is killed mid-way. `os.tmpdir()` follows TMPDIR, which forked workers and their
 * children inherit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), "syncbook-test-"));
  const before = process.env.TMPDIR;
  const beforeState = process.env.SYNCBOOK_STATE_DIR;
  process.env.TMPDIR = dir;
  // the runs' per-user state (the fleet locks, src/journal/fleet-lock.ts): here too, not in $HOME
  process.env.SYNCBOOK_STATE_DIR = join(dir, "state");
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (beforeState === undefined) delete process.env.SYNCBOOK_STATE_DIR;
    else process.env.SYNCBOOK_STATE_DIR = beforeState;
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
