/**
 * The terminal's cursor, shown again as any syncbook command starts.
 *
 * The task list hides the cursor while it redraws (listr2: a visible cursor jumps about the
 * redrawn lines) and shows it again when it ends, on Ctrl-C and on any exit Node runs code for.
 * A kill -9 runs no code, so the terminal is left without a cursor. Not hiding it would make every
 * live view flicker for the sake of a rare kill; instead the next syncbook command, whichever it
 * is (`status`, `run --resume`), shows it first. The sequence is written only to a terminal, never
 * into a pipe or a file.
 */
import { fstatSync } from "node:fs";

export const SHOW_CURSOR = "\x1b[?25h";

/**
 * Whether descriptor `fd` may be a terminal: a terminal is a character device. Checked with fstat
 * first because `process.stdout` / `process.stderr` and `tty.isatty` load the stream, net and tty
 * modules, a few ms of every start-up (issue 41: lint's cold start); a pipe or a file is ruled
 * out without them. /dev/null is a character device too: callers that need a terminal ask the
 * stream's `isTTY` after this says maybe. On Windows a console reports a character device from
 * libuv 1.45 (Node 20.3) on: the `engines` floor is above it.
 */
export function mayBeTerminal(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
}

/** Writes SHOW_CURSOR to stderr, or else stdout, whichever is a terminal first. */
export function showCursor(): void {
  for (const fd of [2, 1] as const) {
    if (!mayBeTerminal(fd)) continue;
    const stream = fd === 2 ? process.stderr : process.stdout;
    if (stream.isTTY) return void stream.write(SHOW_CURSOR);
  }
}
