/**
 * `--renderer json`: one JSON object per line (NDJSON) on stdout for every run event, for
 * wrappers and log pipelines.
 *
 * Each line is the event object the emitter handed every listener, serialized as the journal
 * serializes it: the emitter redacts once, before any listener sees an event, so these lines
 * carry exactly the journal's redaction (no `${env.*}` value, no URL password). Lines that are
 * not run events (the rehearsal verdict, a dry run's plan) have the same envelope: `type`, `at`,
 * and `seq` continuing the run's sequence where there is one.
 *
 * stdout carries nothing else while a command runs in this mode (`claimStdout`); the README's
 * "Events as JSON lines" has the rules.
 */
import type { RunEvent } from "../events.js";
import { jsonLine } from "../text.js";

export { jsonLine };

export interface JsonLines {
  listener: (event: RunEvent) => void;
  /** A line that is not a run event, e.g. `rehearsal.verdict` after `run.finished`. */
  line: (type: string, payload: Record<string, unknown>) => void;
}

export function createJsonLines(write: (text: string) => void): JsonLines {
  let lastSeq = 0;
  return {
    listener: (e) => {
      // the UI's own synthetic lines (seq -1, e.g. "confirmed: …" notes) are not run events
      if (e.seq < 0) return;
      lastSeq = Math.max(lastSeq, e.seq);
      write(`${jsonLine(e)}\n`);
    },
    line: (type, payload) => {
      write(`${jsonLine({ type, seq: ++lastSeq, at: Date.now(), ...payload })}\n`);
    },
  };
}

export interface ClaimedStdout {
  /** Writes to the real stdout (nothing once its reader has gone away). */
  write: (text: string) => void;
  /** Puts `process.stdout.write` back. */
  release: () => void;
}

/**
 * For as long as a `--renderer json` command runs, stdout is the JSON lines' alone: anything else
 * written to `process.stdout` (a plugin's console.log, a notifier that prints) goes to stderr, so
 * a consumer parsing every line never meets a stray one. A reader that goes away (`| head`, a
 * dead log shipper) stops the lines, said once on stderr, never the cutover: without an `error`
 * listener an EPIPE on stdout would crash the process mid-run. With `quiet` (a dry run: nothing
 * goes on once the plan is printed) the lines end in silence, as `--dry-run | head` does without json.
 */
export function claimStdout(
  stdout: NodeJS.WriteStream = process.stdout,
  stderr = process.stderr,
  opts: { quiet?: boolean } = {},
): ClaimedStdout {
  const own = Object.getOwnPropertyDescriptor(stdout, "write");
  const original = stdout.write.bind(stdout);
  let gone = false;
  const onError = (err: NodeJS.ErrnoException): void => {
    if (gone) return;
    gone = true;
    if (!opts.quiet)
      stderr.write(`syncbook: stdout closed (${err.code ?? err.message}): no more JSON lines; the run goes on\n`);
  };
  stdout.on("error", onError);
  const toStderr = stderr.write.bind(stderr) as (...args: unknown[]) => boolean;
  stdout.write = (...args: unknown[]) => toStderr(...args);
  return {
    write: (text) => {
      if (!gone) original(text);
    },
    release: () => {
      if (own) Object.defineProperty(stdout, "write", own);
      else delete (stdout as { write?: unknown }).write;
      // keep swallowing a late EPIPE from lines still in the pipe: the command is ending anyway
    },
  };
}
