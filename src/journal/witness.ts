/**
 * The journal's witness: the journal's last fsynced point (its seq and chain link) kept in a
 * second fsynced place, `<journal>.witness` beside it. The hash chain (chain.ts) catches a line
 * edited, inserted or deleted in the middle, but lines cut off the end look like a crash; a
 * journal cut back to before an undo would make `--resume` believe writes are still stopped and
 * commit with writes on (issue 30). The witness says how far the journal had certainly reached:
 * a journal that ends before that point, or whose line at that point is another one, is refused.
 *
 * Order of the two writes: the journal line first (written and fsynced), then the witness. A
 * crash between them leaves a witness one point behind a longer journal, which reads as a good
 * journal (the witness is a lower bound of its length); the other order could leave a witness
 * ahead of a journal that never got the line, and a good journal would look cut.
 *
 * How it is written (issue 41: it is written before every effect, inside the write-stop window
 * too): the file holds two slots of `SLOT` bytes, each one record with a digest of itself. The
 * file is made whole once (temp file, fsync, rename, the folder fsynced), then every point is
 * written over the older slot in place and fdatasync'd: one write and one flush, no new blocks (a
 * full disk cannot refuse it), where a new file per point took three flushes and a rename. A
 * crash or a torn write damages one slot at most; its digest says so, and the other slot, one
 * point behind, is read (a lower bound again). A witness of one record (written before the
 * slots) is still read.
 *
 * Fail-safe readings (DESIGN's "when not known, refuse"):
 * - a journal whose header or a resume marker says it is witnessed (`witness: true`, chained, so
 *   it cannot be removed without breaking the chain) and whose witness is missing, unreadable or
 *   belongs to another journal (another file name, or another run's header link) is refused: its
 *   length cannot be told, whatever else it says. A journal copied around must take its witness
 *   with it (a whole `.syncbook/` copy does).
 * - a journal written before witnesses (no `witness: true` anywhere) is read with a warning.
 *
 * What it is not: proof against a whole `.syncbook/` folder restored from an older snapshot (the
 * witness is restored with it) or against someone who rewrites both files; the live fleet and the
 * commit's own interlocks stay the last word there.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from "node:fs";
import { basename, dirname } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import { isObject } from "./format.js";
import { splitChain } from "./chain.js";
import { journalLines, type JournalLine } from "./read.js";

export const WITNESS_EXTENSION = ".witness";

/** The way on from a journal its run marked untrusted, said the same by the run and by every later refusal. */
export const UNTRUSTED_WAY_ON =
  "free disk space, check the application's writes and the fleet (syncbook status), then run again with --from the stopWrites step (it stops writes again before commit), not --resume";

/**
 * A journal refused because what it says cannot be trusted: edited or damaged (its chain broken,
 * a line that does not read in its middle), cut short of its witness, its witness lost or another
 * journal's. Its hint says what that means; the commands that help next name the runbook and its
 * `--journal-dir`, which the journal's reader does not know: the caller that does adds them
 * (src/run/earlier.ts `distrustedRefusal`: `--resume`, `--abort`, `--from`, `status`).
 */
export class DistrustedJournal extends UserError {
  constructor(
    message: string,
    readonly journal: string,
    /** What it means, the hint without the commands. */
    readonly meaning: string,
  ) {
    super(message, { exitCode: ExitCode.usage, hint: meaning });
  }
}

/** What the witness holds: which journal (file name, header link) and its last fsynced point. */
export interface Witness {
  journal: string;
  /** The chain link of the journal's header line: one run's journal, not a copy of another. */
  opened: string;
  seq: number;
  chain: string;
  /** Epoch ms of the write, for people. */
  at: number;
}

/** The witness file of a journal file. */
export function witnessFile(journalFile: string): string {
  return `${journalFile}${WITNESS_EXTENSION}`;
}

/** The bytes of one slot: a record and its digest, padded with spaces, ended by a newline. */
const SLOT = 4096;

/** A record's digest: what tells a whole slot from a torn or edited one. */
function digest(record: string): string {
  return createHash("sha256").update(record).digest("hex").slice(0, 32);
}

/** One slot's bytes (a blank slot for `undefined`). Throws if the record does not fit (a file name of thousands of bytes). */
function slotBytes(w: Witness | undefined): Buffer {
  const buf = Buffer.alloc(SLOT, " ");
  buf[SLOT - 1] = 0x0a;
  if (w) {
    // one order of the fields, the reader's (asWitness): the digest is of the same text
    const c: Witness = { journal: w.journal, opened: w.opened, seq: w.seq, chain: w.chain, at: w.at };
    const text = Buffer.from(JSON.stringify({ ...c, digest: digest(JSON.stringify(c)) }), "utf8");
    if (text.length > SLOT - 1) throw new Error(`the witness record is longer than ${SLOT - 1} bytes`);
    text.copy(buf);
  }
  return buf;
}

/**
 * Writes a journal's witness whole, atomically and durably (temp + fsync, rename, folder fsync):
 * `w` in the first slot, the second blank. Throws on I/O failure.
 */
export function writeWitness(journalFile: string, w: Witness): void {
  const file = witnessFile(journalFile);
  const temp = `${file}.tmp`;
  const fd = openSync(temp, "w");
  try {
    writeAll(fd, Buffer.concat([slotBytes(w), slotBytes(undefined)]), 0);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameOver(temp, file);
  fsyncDir(dirname(file));
}

function writeAll(fd: number, buf: Buffer, position: number): void {
  // writeSync may write less than asked: loop until the slot is whole
  for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off, position + off);
}

export interface WitnessWriter {
  /** Makes `w` the witness: written over the older slot in place, and flushed. Throws on I/O failure. */
  write(w: Witness): void;
  close(): void;
}

/**
 * The witness of a journal being written: made whole with `first` (`writeWitness`), then every
 * later point written over the older of the two slots in place.
 */
export function openWitness(journalFile: string, first: Witness): WitnessWriter {
  writeWitness(journalFile, first);
  const fd = openSync(witnessFile(journalFile), "r+");
  // slot 0 holds `first`: the next point goes to slot 1, then 0, and so on
  let next = 1;
  return {
    write(w) {
      writeAll(fd, slotBytes(w), next * SLOT);
      fdatasyncSync(fd);
      next = 1 - next;
    },
    close() {
      closeSync(fd);
    },
  };
}

/**
 * rename(2) replaces atomically; on Windows a reader holding the old file open (`syncbook status`
 * at that moment) makes it fail for a moment: try a few times, 10 ms apart, before it counts as
 * the journal's write failure (which stops the run before its next request).
 */
function renameOver(from: string, to: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      renameSync(from, to);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt >= 5 || (code !== "EPERM" && code !== "EACCES" && code !== "EBUSY")) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/**
 * Empties a journal's witness: the mark of a journal its own run could not keep whole (it did what
 * it could not record, e.g. an undo after the disk filled). Truncating needs no disk space, where
 * writing another mark might not find any; an empty witness never occurs otherwise (the writer
 * makes it whole by rename, then writes slots of a fixed size in place). Returns why it failed (undefined: emptied, or there is none yet:
 * a witnessed journal without its witness is refused too).
 */
export function emptyWitness(journalFile: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(witnessFile(journalFile), "r+");
    ftruncateSync(fd, 0);
    fsyncSync(fd);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? undefined : (code ?? String(err));
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Makes a file's directory entry durable too (a file fsynced into a lost entry is lost). */
export function fsyncDir(dir: string): void {
  let dfd: number | undefined;
  try {
    dfd = openSync(dir, "r");
    fsyncSync(dfd);
  } catch {
    // some platforms (Windows) cannot open or fsync a directory: the file's own fsync is what they offer
  } finally {
    if (dfd !== undefined) closeSync(dfd);
  }
}

/** A journal's witness as it is on disk (undefined: missing, unreadable, empty or damaged). */
export function readWitness(journalFile: string): Witness | undefined {
  try {
    return parseWitness(readFileSync(witnessFile(journalFile), "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * The witness a file holds: of its two slots, the whole one (its digest matches) with the later
 * point; or the one record of a witness written before the slots.
 */
function parseWitness(text: string): Witness | undefined {
  const buf = Buffer.from(text, "utf8");
  if (buf.length !== 2 * SLOT) return asWitness(parseJson(text));
  const slots = [0, 1]
    .map((k) => parseJson(buf.subarray(k * SLOT, (k + 1) * SLOT).toString("utf8")))
    .map((v) => {
      if (!isObject(v) || typeof v.digest !== "string") return undefined;
      const { digest: d, ...rest } = v;
      const w = asWitness(rest);
      return w && d === digest(JSON.stringify(w)) ? w : undefined;
    })
    .filter((w): w is Witness => w !== undefined);
  return slots.sort((a, b) => b.seq - a.seq)[0];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function asWitness(v: unknown): Witness | undefined {
  if (
    !isObject(v) ||
    typeof v.journal !== "string" ||
    typeof v.opened !== "string" ||
    typeof v.chain !== "string" ||
    !Number.isSafeInteger(v.seq) ||
    typeof v.at !== "number"
  )
    return undefined;
  return { journal: v.journal, opened: v.opened, seq: v.seq as number, chain: v.chain, at: v.at };
}

export interface WitnessVerdict {
  /** Why the journal cannot be trusted to be whole (undefined: it can). */
  refused?: UserError;
  /** Its own run marked it untrusted (an empty witness: `emptyWitness`). */
  untrusted?: true;
  /** Said, not refused (a journal written before witnesses). */
  warning?: string;
}

/**
 * Checks a journal against its witness. Read errors of the journal are thrown as they are (the
 * journal's reader words them); everything about the witness is a verdict.
 */
export async function checkWitness(journalFile: string): Promise<WitnessVerdict> {
  const check = witnessCheck(journalFile);
  for await (const l of journalLines(journalFile)) check.line(l);
  return check.verdict();
}

/**
 * `checkWitness` line by line, so that the journal's one strict read checks it as it goes
 * (src/journal/runbook-journal.ts): the witness is read now, each of the journal's lines is handed
 * to `line` in order, and `verdict` judges once all of them have been.
 */
export function witnessCheck(journalFile: string): { line(l: JournalLine): void; verdict(): WitnessVerdict } {
  const wfile = witnessFile(journalFile);
  let text: string | undefined;
  let readError: string | undefined;
  try {
    text = readFileSync(wfile, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") readError = code ?? String(err);
  }
  const witness = text === undefined ? undefined : parseWitness(text);

  let opened: string | undefined;
  let expected = false;
  let lastSeq = -1;
  let lastLine = 0;
  let atSeq: { line: number; chain: string | undefined } | undefined;
  let first = true;
  const line = (l: JournalLine): void => {
    const own = splitChain(l.text);
    if (first) opened = own?.chain;
    first = false;
    if (!isObject(l.value)) return;
    const v = l.value;
    if ((v.type === "journal.opened" || v.type === "journal.resumed") && v.witness === true) expected = true;
    if (typeof v.seq !== "number") return;
    if (v.seq > lastSeq) {
      lastSeq = v.seq;
      lastLine = l.lineNo;
    }
    if (witness && v.seq === witness.seq) atSeq = { line: l.lineNo, chain: own?.chain };
  };
  const verdict = (): WitnessVerdict => {
    if (!expected)
      return {
        warning: `${journalFile} was written before journals were witnessed: lines cut off its end cannot be told from a crash`,
      };
    const refuse = (what: string, hint: string): WitnessVerdict => ({
      refused: new DistrustedJournal(`cannot trust ${journalFile}: ${what}`, journalFile, hint),
    });
    // the commands that help next are the caller's, which knows the runbook (`DistrustedJournal`)
    const byHand = "do not resume from it";
    if (text === undefined)
      return refuse(
        readError
          ? `its witness ${wfile} cannot be read (${readError}), so its length cannot be checked`
          : `its witness ${wfile} is missing, so its length cannot be checked (lines cut off its end would look like a crash)`,
        `a journal copied or moved must take its ${basename(wfile)} with it; if the witness is lost, ${byHand}`,
      );
    if (text === "")
      return {
        ...refuse(
          `its own run marked it untrusted (its witness ${wfile} is empty): the journal could not be written (a full or failing disk) and the run then did what it could not record (an undo: writes may be back on)`,
          `do not resume from it: ${UNTRUSTED_WAY_ON}`,
        ),
        untrusted: true,
      };
    if (!witness) return refuse(`its witness ${wfile} is not a syncbook witness (damaged or edited)`, byHand);
    if (witness.journal !== basename(journalFile) || witness.opened !== opened)
      return refuse(
        `its witness ${wfile} belongs to another journal (${witness.journal !== basename(journalFile) ? witness.journal : "another run's journal of that name"})`,
        `pass the journal with its own witness; ${byHand}`,
      );
    if (witness.seq > lastSeq)
      return refuse(
        `the journal is shorter than its last fsynced point: it ends at seq ${lastSeq} (line ${lastLine}), but its witness saw seq ${witness.seq} written at ${new Date(witness.at).toISOString()}: lines were cut off its end (a restored snapshot, a partial copy, an edit)`,
        `what the cut lines said (an undo that turned writes back on, a command sent) is unknown; ${byHand}`,
      );
    if (atSeq?.chain !== witness.chain)
      return refuse(
        `its line at seq ${witness.seq}${atSeq ? ` (line ${atSeq.line})` : ""} is not the one its witness saw: the journal was rewritten`,
        byHand,
      );
    return {};
  };
  return { line, verdict };
}
