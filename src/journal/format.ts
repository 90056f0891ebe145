/**
 * The journal's on-disk format, shared by the writer (journal.ts) and the readers (state.ts here,
 * src/journal/read-whole.ts for reports).
 *
 * A journal is one append-only file per run: JSON lines, one RunEvent per line. Its first line is
 * a `journal.opened` header, event-shaped (type/seq/at) so that the report reader keeps reading it
 * as an unknown event type; each later `--resume` appends a `journal.resumed` marker before its
 * own events. Both carry the format version, the runbook's name and hash, and the writer's pid and
 * host. Every line ends with `chain`, its link in the journal's hash chain (chain.ts).
 */
import { realpathSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { RunEventType } from "../events.js";
import { makeFolder } from "./io-errors.js";

/** 2: every line ends with its hash chain link (chain.ts). Format 1 journals (no chain) are still read, with a warning. */
export const JOURNAL_FORMAT_VERSION = 2;
export const JOURNAL_EXTENSION = ".jsonl";
export const DEFAULT_JOURNAL_ROOT = ".syncbook";

/** Who wrote the lines that follow: the fields a journal's header and each resume marker share. */
interface JournalWriter {
  at: number;
  version: number;
  runbook: string;
  hash: string;
  pid: number;
  host: string;
  /** The journal's length is witnessed from here on (witness.ts): a journal without its witness is refused. */
  witness?: boolean;
  /**
   * The writer's PID namespace and boot (src/processes.ts): the pids it journals (its hook
   * processes) mean something only in that namespace and that boot.
   */
  pidns?: string;
  boot?: string;
}

export interface JournalHeader extends JournalWriter {
  type: "journal.opened";
  seq: 0;
  /**
   * The journals already in the folder when this one was opened (file names): this run came after
   * them, whatever the file times say (read.ts `chooseJournal`; a clock can step back).
   */
  after?: string[];
}

/** Appended by each resume, so the file tells its segments (writers) apart. */
export interface JournalResumed extends JournalWriter {
  type: "journal.resumed";
  seq: number;
  /**
   * Seq and request ids of the events that follow are shifted by these amounts: a resumed runner's
   * emitter and fleet count from 1 again, and one file must stay one ordered stream for reports.
   */
  seqBase: number;
  requestIdBase: number;
  /** The 1-based line the crashed writer left half-written, closed by a newline before this marker. */
  truncatedLine?: number;
  /**
   * The seq the journal's witness held when this resume began: the earlier writer's lines past it
   * were never witnessed, so no request they announce ever left (a request leaves only once its
   * line is fsynced and witnessed: journal.ts), and state.ts reads them as never sent.
   */
  witnessedSeq?: number;
}

/**
 * Events that are fsynced before `write` returns: every event resume or the report's
 * decisions depend on. Samples (progress, verifier, wait status) are polled every few seconds per
 * instance; an fsync each would cost a disk flush per poll for data resume never uses (it re-reads
 * the live fleet). They reach the OS by the end of the event loop's turn they were emitted in (one
 * write for a fleet's answers, journal.ts), and before any durable line: a kill of the process in
 * that turn, or a power loss before the next fsync, can drop the last few.
 */
const NOT_FSYNCED: ReadonlySet<string> = new Set<RunEventType>([
  "progress.sampled",
  "poll.failed",
  "polls.summary",
  // inside the write-stop window, where a flush is downtime; the step's end flushes it
  "window.closed",
  // a check's read of the write switch: the report's share of it, nothing resume reads
  "writes.checked",
  "verifier.sampled",
  "wait.status",
  "wait.slow",
  "log",
  // what the trace's collector acknowledged: a lost line only exports a span twice
  "trace.exported",
]);

/** Unknown (newer) event types are fsynced: when in doubt, durable. */
export function mustFsync(type: string): boolean {
  return !NOT_FSYNCED.has(type);
}

/**
 * `2024-05-01T12-30-00.123Z-4242.jsonl`: ISO time without colons (Windows, scp), then the pid;
 * `n` > 0 adds `-n` (a second journal opened by the same process in the same millisecond).
 */
export function journalFileName(at: Date, pid: number, n = 0): string {
  return `${at.toISOString().replace(/:/g, "-")}-${pid}${n > 0 ? `-${n}` : ""}${JOURNAL_EXTENSION}`;
}

/** A runbook name as one safe path segment (names are free text in the format). */
export function safeSegment(name: string): string {
  const s = name.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\.+/, "_");
  return s === "" ? "_" : s.slice(0, 120);
}

/** The default journal folder of a runbook: `<root>/<runbook name>/`. */
export function journalDir(runbookName: string, root: string = DEFAULT_JOURNAL_ROOT): string {
  return join(root, safeSegment(runbookName));
}

/**
 * The journal folder of a runbook file, from real paths: next to the runbook (its real location,
 * symlinks resolved) unless `root` (`--journal-dir`) names another. Two paths to one runbook (a
 * symlink to the file or to a folder on its way) must meet at one journal folder and so one lock:
 * otherwise two runners each hold "the" lock and both send start. The root is created here so
 * that its own real path can be taken (not with `create: false`, for `status`, which writes
 * nothing). (Hard links in two folders are two runbooks to this rule.)
 */
export function journalDirFor(
  runbookFile: string,
  runbookName: string,
  root?: string,
  opts: { create?: boolean } = {},
): string {
  const base = root !== undefined ? resolve(root) : join(dirname(realpathSync(runbookFile)), DEFAULT_JOURNAL_ROOT);
  if (opts.create === false) {
    // `status` writes nothing: a root not there yet (or not a folder) is named where it would be
    try {
      return journalDir(runbookName, realpathSync(base));
    } catch {
      return journalDir(runbookName, base);
    }
  }
  // a read-only checkout, `.syncbook` left as a file: the operator's to fix, said as such
  makeFolder(base, "create the journal folder");
  return journalDir(runbookName, realpathSync(base));
}

export function thisHost(): string {
  return hostname();
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
