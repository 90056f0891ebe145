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
  process.env.TMPDIR = dir;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
