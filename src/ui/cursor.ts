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
export const SHOW_CURSOR = "\x1b[?25h";

export function showCursor(streams: readonly NodeJS.WriteStream[] = [process.stderr, process.stdout]): void {
  const tty = streams.find((s) => s.isTTY);
  tty?.write(SHOW_CURSOR);
}
