/**
 * The journal writer: one append-only JSON-lines file per run. Every line resume depends on is
 * written before `write` returns, and fsynced at once or, emitted with `more` (a fan-out's lines but
 * the last, a step's start and end, decisions), with the next line that is fsynced. The lines that
 * need no fsync (samples, wait status, logs: `mustFsync`) are held and written together once per
 * turn of the event loop, or with the next line that is written, in the order they were emitted
 * (issue 41: a fleet's answers arrive in one turn, and a write each was a millisecond or more of the
 * write-stop window at 64 instances); a kill in that turn loses them, which resume never reads. The
 * runner emits `request.sent` before it sends a POST and `response.received` after its answer, and
 * `emit` is synchronous, so the file always knows at least as much as the fleet was told.
 *
 * Synchronous I/O on purpose: an async write could still be queued when the POST leaves or the
 * process dies; the cost (one small write + fsync per command) is nothing next to a network call.
 *
 * What a synchronous fsync costs grows with what it flushes: inside the write-stop window a watch
 * reads an instance every few milliseconds, and the samples held and written since the last durable
 * line (half a megabyte by the commit at 64 instances) made the commit's fsync 2 to 5 ms of it
 * (issue 41). Once `BACKGROUND_SYNC_BYTES` are written unsynced, a turn's write of held lines
 * starts an fsync of them off the event loop (libuv's pool), through a second descriptor of the
 * file: a write error is reported to each open description once (Linux's errseq, from 4.13;
 * Node 20 needs 4.18), so the background one never takes the report the durable line's own fsync
 * must see, and its own report fails the journal too. Only on Linux: elsewhere an error may be
 * reported to the first fsync alone, the background one's, whose callback comes a turn later,
 * after a durable line's fsync succeeded and its request left. It only ever adds flushes: every
 * durable line still has its own synchronous fsync (and witness) before `write` returns.
 */
import { closeSync, constants, fstatSync, fsync, fsyncSync, openSync, readdirSync, readSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { crashPoint } from "../crash-points.js";
import { ExitCode, UserError } from "../errors.js";
import type { CriticalListener, EmitOptions, RunEvent } from "../events.js";
import { jsonLine } from "../text.js";
import { appendChain, CHAIN_FIELD, splitChain } from "./chain.js";
import { createSampleBounder } from "./samples.js";
import {
  JOURNAL_EXTENSION,
  JOURNAL_FORMAT_VERSION,
  isObject,
  journalFileName,
  mustFsync,
  thisHost,
  type JournalHeader,
  type JournalResumed,
} from "./format.js";
import { emptyWitness, fsyncDir, openWitness, readWitness, type WitnessWriter } from "./witness.js";
import { selfIdentity } from "../processes.js";
import { ioError, makeFolder } from "./io-errors.js";

export interface OpenJournalOptions {
  /** The run's journal folder, e.g. `journalDir(runbook.name)` = `.syncbook/<runbook name>/`; created if missing. */
  dir: string;
  runbookName: string;
  /** sha256 of the runbook text (LoadedRunbook.hash). */
  runbookHash: string;
  /** An existing journal to append to (on `--resume`); default: a new file in `dir`. */
  file?: string | undefined;
  /** Clock, for tests. */
  now?: (() => number) | undefined;
}

export interface Journal {
  /** Path of the journal file. */
  readonly file: string;
  /** Highest seq in the file before this writer appended (0 for a new journal: the header's). */
  readonly resumedAfterSeq: number | undefined;
  /** The first write or fsync failure: once set, every later `write` throws it again. */
  readonly error: UserError | undefined;
  /**
   * Appends one event as one line; fsyncs it when resume depends on it, unless `more` says more
   * lines of the same fan-out follow at once: the last one's fsync makes them all durable (before
   * any of the fan-out's requests leaves). Throws on I/O failure.
   */
  write(event: RunEvent, options?: EmitOptions): void;
  /**
   * Marks the journal untrusted (issue 42): its run is about to do (or did) what it cannot record
   * (an undo after the journal failed), so `--resume` must never act on it. Its witness is emptied
   * (a truncation needs no disk space, witness.ts reads an empty witness as this mark) and nothing
   * writes it again. Returns why it could not be marked (undefined: marked, or no witness yet, which
   * is refused as well).
   */
  distrust(): string | undefined;
  /** Flushes and closes; idempotent. */
  close(): void;
}

/** What a scan of an existing journal tells the appender. */
interface Existing {
  header: unknown;
  lastSeq: number;
  maxRequestId: number;
  lines: number;
  endsWithNewline: boolean;
  size: number;
  /** The chain link of the last whole line ("" when it has none: a journal written before chaining). */
  lastChain: string;
  /** The header line's chain link (its witness names the journal by it: witness.ts). */
  headerChain: string;
}

const CHUNK = 1 << 16;

/** Reads an existing journal once, synchronously (resume only), for the numbers the appender needs. */
function scanExisting(fd: number): Existing {
  const size = fstatSync(fd).size;
  const buf = Buffer.allocUnsafe(CHUNK);
  let pos = 0;
  let partial = "";
  let header: unknown;
  let lastSeq = 0;
  let maxRequestId = 0;
  let lines = 0;
  let last = -1;
  let lastChain = "";
  let headerChain = "";
  const take = (line: string): void => {
    lines++;
    if (lines === 1) headerChain = splitChain(line)?.chain ?? "";
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return; // a truncated or corrupt line: the reader judges it
    }
    if (lines === 1) header = v;
    if (!isObject(v)) return;
    lastChain = typeof v[CHAIN_FIELD] === "string" ? v[CHAIN_FIELD] : "";
    if (typeof v.seq === "number" && v.seq > lastSeq) lastSeq = v.seq;
    if (
      (v.type === "request.sent" || v.type === "response.received") &&
      typeof v.id === "number" &&
      v.id > maxRequestId
    )
      maxRequestId = v.id;
  };
  for (;;) {
    const n = readSync(fd, buf, 0, CHUNK, pos);
    if (n === 0) break;
    pos += n;
    last = buf[n - 1]!;
    const parts = (partial + buf.toString("utf8", 0, n)).split("\n");
    partial = parts.pop() ?? "";
    for (const p of parts) take(p);
  }
  if (partial !== "") take(partial);
  return { header, lastSeq, maxRequestId, lines, endsWithNewline: last === 0x0a, size, lastChain, headerChain };
}

/** Unsynced bytes that start a background fsync at the end of a turn's write (see the top). */
export const BACKGROUND_SYNC_BYTES = 32 * 1024;
/** Where a writeback error reaches every open description of the file (see the top). */
const BACKGROUND_SYNC = process.platform === "linux";

/** Opens (creates, or on resume appends to) a run's journal. */
export function openJournal(options: OpenJournalOptions): Journal {
  const now = options.now ?? Date.now;
  const pid = process.pid;
  const host = thisHost();
  // what the pids this journal records mean: this PID namespace, this boot (src/processes.ts)
  const { pidns, boot } = selfIdentity();
  const writer = { ...(pidns !== undefined ? { pidns } : {}), ...(boot !== undefined ? { boot } : {}) };
  let file: string;
  let fd: number;
  let seqBase = 0;
  let requestIdBase = 0;
  let resumedAfterSeq: number | undefined;
  let failure: UserError | undefined;
  let closed = false;
  // marked untrusted (`distrust`): its witness stays empty
  let distrusted = false;
  const pendingLines: string[] = [];
  // the hash chain (chain.ts): each line's link covers the one before, so an edit shows where it was made
  let chain = "";
  const chained = (body: string): string => {
    const r = appendChain(chain, body);
    chain = r.chain;
    return r.line;
  };
  // the journal's witness (witness.ts): the header's link names this journal, and the seq of the
  // last line written is what each fsync makes certain
  let opened = "";
  let writtenSeq = 0;

  if (options.file === undefined) {
    makeFolder(options.dir, "create the journal folder");
    const at = new Date(now());
    for (let n = 0; ; n++) {
      file = join(options.dir, journalFileName(at, pid, n));
      try {
        // `ax`: append-only, and never another run's file
        fd = openSync(file, "ax");
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST" && n < 99) continue;
        throw ioError(file, "create the journal", err);
      }
    }
    const header: JournalHeader = {
      type: "journal.opened",
      seq: 0,
      at: now(),
      version: JOURNAL_FORMAT_VERSION,
      runbook: options.runbookName,
      hash: options.runbookHash,
      pid,
      host,
      witness: true,
      ...writer,
    };
    let earlier: string[] = [];
    try {
      earlier = readdirSync(options.dir)
        .filter((n) => n.endsWith(JOURNAL_EXTENSION) && n !== basename(file))
        .sort();
    } catch {
      // a folder we can write but not list: the choice falls back to what else the journals say
    }
    if (earlier.length) header.after = earlier;
    pendingLines.push(chained(jsonLine(header)));
    opened = chain;
  } else {
    file = options.file;
    try {
      // no O_CREAT: resuming a journal that is gone is an error, not a fresh start
      fd = openSync(file, constants.O_RDWR | constants.O_APPEND);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT")
        throw new UserError(`cannot resume: the journal ${file} does not exist`, {
          exitCode: ExitCode.usage,
          hint: `pass a journal under ${options.dir}, or run without --resume`,
        });
      throw ioError(file, "open the journal", err);
    }
    let ex: Existing;
    try {
      ex = scanExisting(fd);
    } catch (err) {
      closeSync(fd);
      throw ioError(file, "read the journal", err);
    }
    const h = ex.header;
    if (!isObject(h) || h.type !== "journal.opened") {
      closeSync(fd);
      throw new UserError(`cannot resume: ${file}:1 is not a syncbook journal header`, {
        exitCode: ExitCode.usage,
        hint: "pass the journal a syncbook run wrote (its first line is a journal.opened event)",
      });
    }
    if (h.runbook !== options.runbookName) {
      closeSync(fd);
      throw new UserError(
        `cannot resume: ${file} is the journal of runbook "${String(h.runbook)}", not "${options.runbookName}"`,
        { exitCode: ExitCode.usage, hint: "pass the journal of this runbook" },
      );
    }
    resumedAfterSeq = ex.lastSeq;
    // continue the chain from the last whole line (a journal written before chaining starts one here)
    chain = ex.lastChain;
    opened = ex.headerChain;
    seqBase = ex.lastSeq + 1;
    requestIdBase = ex.maxRequestId;
    const marker: JournalResumed = {
      type: "journal.resumed",
      seq: seqBase,
      at: now(),
      version: JOURNAL_FORMAT_VERSION,
      runbook: options.runbookName,
      hash: options.runbookHash,
      pid,
      host,
      seqBase,
      requestIdBase,
      witness: true,
      ...writer,
    };
    // read before this writer replaces it: how far the earlier writer was witnessed
    const found = readWitness(file);
    if (found && found.journal === basename(file)) marker.witnessedSeq = found.seq;
    // a crash mid-line left a fragment: end it, so our lines are not glued to it, and say so
    if (ex.size > 0 && !ex.endsWithNewline) {
      marker.truncatedLine = ex.lines;
      pendingLines.push("");
    }
    pendingLines.push(chained(jsonLine(marker)));
    writtenSeq = seqBase;
  }

  /** Bytes written since the last fsync began (a background one included). */
  let unsynced = 0;
  const writeAll = (text: string): void => {
    const buf = Buffer.from(text, "utf8");
    let off = 0;
    // writeSync may write less than asked (signals, pipes): loop until the line is whole
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    unsynced += buf.length;
  };
  const syncNow = (): void => {
    unsynced = 0;
    fsyncSync(fd);
  };
  // the background fsync's own descriptor (see the top): opened at its first use, closed by
  // `close`, or by its fsync's callback if one is still running then (its number must not be
  // reused under a pending fsync)
  let bgFd: number | undefined;
  let bgRunning = false;
  let bgCloseLater = false;
  const syncInBackground = (): void => {
    if (!BACKGROUND_SYNC || bgRunning || unsynced < BACKGROUND_SYNC_BYTES || distrusted) return;
    try {
      bgFd ??= openSync(file, "r+");
    } catch {
      // no second descriptor (out of them): the durable lines' own fsyncs still do it all
      return;
    }
    bgRunning = true;
    unsynced = 0;
    fsync(bgFd, (err) => {
      bgRunning = false;
      // what was written may not reach the disk: the journal is failed, as by the durable fsync
      if (err && !failure && !closed) fail(err);
      if (bgCloseLater) closeBackground();
    });
  };
  const closeBackground = (): void => {
    bgCloseLater = bgRunning;
    if (bgRunning || bgFd === undefined) return;
    const d = bgFd;
    bgFd = undefined;
    try {
      closeSync(d);
    } catch {
      /* nothing was written through it */
    }
  };
  // after the journal's own fsync, never before: a crash between the two leaves the witness
  // behind a longer journal (good), never ahead of a journal that lacks the line (witness.ts)
  let witnessWriter: WitnessWriter | undefined;
  const witness = (): void => {
    if (distrusted) return;
    const w = { journal: basename(file), opened, seq: writtenSeq, chain, at: now() };
    if (witnessWriter) witnessWriter.write(w);
    else witnessWriter = openWitness(file, w);
  };
  // lines that need no fsync, chained but not yet written: written with the next line that resume
  // depends on (before it), at the end of this turn of the event loop, at `close`, or at the
  // process's exit, whichever first
  let held = "";
  let flushSoon: NodeJS.Immediate | undefined;
  const fail = (err: unknown): UserError => {
    // after a failed fsync the kernel may have dropped the data: never carry on as if written
    failure = ioError(file, "write the journal", err, { during: true });
    return failure;
  };
  // a process that exits without `close` (a forced exit) still writes what it held; only a kill
  // loses it. Listened to only while lines are held: a process may open many journals
  const onExit = (): void => flushLater();
  const flushHeld = (): void => {
    if (flushSoon) {
      clearImmediate(flushSoon);
      process.off("exit", onExit);
    }
    flushSoon = undefined;
    if (held === "") return;
    const text = held;
    held = "";
    writeAll(text);
  };
  /** The end of the turn's write: a failure is the next `write`'s to throw (nothing awaits this one). */
  const flushLater = (): void => {
    if (flushSoon) process.off("exit", onExit);
    flushSoon = undefined;
    if (failure || closed) return;
    try {
      flushHeld();
      syncInBackground();
    } catch (err) {
      fail(err);
    }
  };
  /** Held lines larger than this are written at once (a flood of samples in one turn). */
  const HOLD_BYTES = 1 << 16;
  /** `hold`: a line resume never reads; `write`: one it does, made durable by a later fsync; `sync`: fsynced now. */
  const put = (line: string, how: "hold" | "write" | "sync"): void => {
    if (failure) throw failure;
    // an empty line closes a crashed writer's fragment
    held += `${line}\n`;
    if (how === "hold" && held.length < HOLD_BYTES) {
      if (!flushSoon) {
        flushSoon = setImmediate(flushLater);
        process.on("exit", onExit);
      }
      return;
    }
    try {
      flushHeld();
      if (how === "sync") {
        syncNow();
        witness();
      }
    } catch (err) {
      throw fail(err);
    }
  };

  try {
    for (const l of pendingLines) put(l, "hold");
    flushHeld();
    syncNow();
    if (options.file === undefined) fsyncDir(dirname(file));
    witness();
  } catch (err) {
    closeSync(fd);
    throw err instanceof UserError ? err : ioError(file, "write the journal", err);
  }
  crashPoint(options.file === undefined ? "journal:opened" : "journal:resumed");

  // progress samples are bounded in the journal (samples.ts): an answer's unknown fields can be huge
  const bound = createSampleBounder();
  const lineOf = (event: RunEvent): string => {
    let v: Record<string, unknown> = event;
    if (seqBase !== 0 || requestIdBase !== 0) {
      v = { ...v, seq: event.seq + seqBase };
      if ((event.type === "request.sent" || event.type === "response.received") && requestIdBase !== 0)
        v.id = event.id + requestIdBase;
      // a delivery names its event by seq: this segment's is shifted with it, an earlier run's is the file's already
      if ((event.type === "notification.sent" || event.type === "notification.settled") && event.earlier !== true)
        v.event = event.event + seqBase;
    }
    // the emitter redacted the event once, before any listener saw it (src/redact.ts)
    return jsonLine(v);
  };

  return {
    file,
    resumedAfterSeq,
    get error() {
      return failure;
    },
    write(event, options) {
      if (closed) throw new Error(`journal ${file} is closed`);
      if (failure) throw failure;
      const before = chain;
      const beforeSeq = writtenSeq;
      const durable = mustFsync(event.type);
      try {
        const line = chained(lineOf(bound(event)));
        writtenSeq = event.seq + seqBase;
        put(line, !durable ? "hold" : options?.more === true ? "write" : "sync");
      } catch (err) {
        // a line that did not reach the file is not part of the chain
        chain = before;
        writtenSeq = beforeSeq;
        throw err;
      }
      // a retry decision is not a point: how many a run makes depends on timing (a slow progress
      // read), and the requests it leads to are points of their own
      if (durable && !(event.type === "decision" && event.kind === "retry")) crashPoint(() => crashLabel(event));
    },
    distrust() {
      distrusted = true;
      return emptyWitness(file);
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        if (!failure) {
          flushHeld();
          if (!distrusted) {
            syncNow();
            // the samples written since the last durable event are certain now too
            witness();
          }
        }
      } catch (err) {
        throw fail(err);
      } finally {
        if (flushSoon) {
          clearImmediate(flushSoon);
          process.off("exit", onExit);
          flushSoon = undefined;
        }
        closeBackground();
        closeSync(fd);
        witnessWriter?.close();
      }
    },
  };
}

/** `journal:request.sent:commit:sync2`: the line's type, then its step, path and instance where it has them. */
function crashLabel(event: RunEvent): string {
  const e = event as { id?: unknown; path?: unknown; about?: unknown; instance?: { name?: string; url: string } };
  const parts = ["journal", event.type];
  if (typeof e.path === "string") parts.push(e.path.replace(/^.*\//, ""));
  else if (typeof e.id === "string") parts.push(e.id);
  else if (typeof e.about === "string") parts.push(e.about);
  if (e.instance) parts.push(e.instance.name ?? String(e.instance.url));
  return parts.join(":");
}

/** The journal as a listener of the run's event stream. */
export function asListener(journal: Journal): CriticalListener {
  return (event, options) => journal.write(event, options);
}
