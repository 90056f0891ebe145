/**
 * Which cutover a runbook's journals belong to. A cutover is often several runs, in one journal
 * (`--resume`, `--abort` append to it) or in several (a `--from` run that continues one writes a
 * new file): every run of it journals the same id in its `run.started` (`cutover`), so a pager
 * keeps one incident, a trace one trace id, and the window and the cutover's time are measured
 * across them. The journal a continuing run reads is chosen by `chooseJournal` (read.ts), the
 * one rule; this module only says what that journal's cutover is and where its other runs are.
 */
import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { JOURNAL_EXTENSION, isObject } from "./format.js";
import { errorMessage } from "../errors.js";
import { journalActed, journalLines } from "./read.js";
import { runbookJournal } from "./runbook-journal.js";
import type { JournalState, KindTraits } from "./state.js";

/** `20261127T001500Z-1a2b3c4d`: when the cutover's first run started, and which runbook text it ran. */
export function cutoverId(firstStartedAt: number, runbookHash: string, nonce?: string): string {
  const at = new Date(firstStartedAt).toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
  return `${at}-${runbookHash.replace(/^sha256:/, "").slice(0, 8)}${nonce ? `-${nonce}` : ""}`;
}

/**
 * A new cutover's id: its time and runbook, and a random part, so that two cutovers of one runbook
 * started in the same second (a `--new-cutover` right after a refused run, two runners) are two
 * cutovers to a pager (PagerDuty's `dedup_key`) and a trace backend, never one.
 */
export function newCutoverId(startedAt: number, runbookHash: string): string {
  return cutoverId(startedAt, runbookHash, randomBytes(4).toString("hex"));
}

/** The cutover of a `run.started` (a journal written before ids were journaled: derived as its runner did). */
export function cutoverOfRun(e: { cutover?: unknown; at: number; hash?: unknown }): string {
  return typeof e.cutover === "string" ? e.cutover : cutoverId(e.at, typeof e.hash === "string" ? e.hash : "");
}

/** What a journal says of its cutover: its id, when its first run started, and how its last run ended. */
export interface JournalCutover {
  file: string;
  /** The cutover's id (undefined: the journal holds no run). */
  cutover?: string;
  /** When the journal's first run started (epoch ms). */
  startedAt?: number;
  /** The last run's end: ok, called off (`--abort` whose undos all ran), another end, or none (killed). */
  ended?: "ok" | "called-off" | "other";
  /**
   * A line before its last that is no run event (`line 5 is not JSON`): what it held is not known,
   * a run among it. The last line alone may be cut short (a crash while writing it).
   */
  damaged?: string;
}

/** One pass over a journal's run lines (cheap: most lines are samples). Read errors are thrown as is. */
export async function journalCutover(file: string): Promise<JournalCutover> {
  const out: JournalCutover = { file };
  let bad: string | undefined;
  for await (const l of journalLines(file)) {
    // a bad line followed by another is damage, not a crash's cut-short last line
    if (bad !== undefined) out.damaged ??= bad;
    bad = l.why ? `line ${l.lineNo} is ${l.why}` : undefined;
    if (!/"(run\.started|run\.finished|journal\.resumed)"/.test(l.text)) continue;
    const v = l.value;
    if (!isObject(v) || typeof v.at !== "number") continue;
    if (v.type === "run.started") {
      if (out.cutover === undefined) {
        out.cutover = cutoverOfRun(v as { cutover?: unknown; at: number; hash?: unknown });
        out.startedAt = v.at;
      }
      delete out.ended;
    } else if (v.type === "journal.resumed") delete out.ended;
    else if (v.type === "run.finished")
      // a run stopped at --to (`to`) left its cutover open: not an end that counts as ok
      out.ended =
        v.outcome === "ok" && typeof v.to !== "string"
          ? "ok"
          : v.aborted === true && v.exitCode === 0
            ? "called-off"
            : "other";
  }
  return out;
}

/** The runbook's last cutover, when it did not end: the journal `--resume` would continue, and its id. */
export interface UnfinishedCutover {
  /** Undefined when the folder's journals do not order (two unfinished runs). */
  file?: string;
  /** Undefined when the journal cannot be read (then it is not known to be over either). */
  cutover?: string;
  /** Why it is unfinished, for the operator: killed, failed, interrupted, split, unreadable. */
  why: string;
  /** Its journal as the one answer read it (witness and all), when it could be acted on. */
  state?: JournalState;
}

/**
 * The runbook's journal by the one answer (`runbookJournal`, the one `--resume` and `status`
 * ask) when its cutover did not end: its last run neither finished ok nor was called off with
 * `--abort`, and it acted (a run that sent nothing and ran no hook is no cutover). A journal that
 * cannot be acted on (unreadable, edited, cut short, two that do not order) is not known to be
 * over: it is returned, with why. Undefined: no folder, no journal, or the last cutover ended.
 */
export async function unfinishedCutover(dir: string, traits: KindTraits): Promise<UnfinishedCutover | undefined> {
  const found = await runbookJournal(dir, traits);
  if (found.none) return undefined;
  const id = async (file: string): Promise<string | undefined> => {
    try {
      return (await journalCutover(file)).cutover;
    } catch {
      return undefined;
    }
  };
  if (found.refused !== undefined || !found.state || !found.file) {
    const cutover = found.file ? await id(found.file) : undefined;
    return {
      ...(found.file ? { file: found.file } : {}),
      ...(cutover ? { cutover } : {}),
      why: `its journal cannot be acted on (${errorMessage(found.refused)})`,
    };
  }
  const f = found.state.finished;
  if (f && ((f.outcome === "ok" && f.to === undefined) || f.aborted)) return undefined;
  if (!(await journalActed(found.file))) return undefined;
  const cutover = await id(found.file);
  return {
    file: found.file,
    ...(cutover ? { cutover } : {}),
    state: found.state,
    why: f
      ? `its last run ended ${f.outcome}${f.to !== undefined ? ` at --to ${f.to}, before the runbook's end` : ""}${f.message ? ` (${f.message})` : ""}`
      : "its last run ended without a word (killed, or its machine lost)",
  };
}

/**
 * The journals of a cutover in a folder, oldest run first (by when each journal's first run
 * started): every run of it, whichever journal holds it (those a `--from` run continued, that
 * run's own, a later run's). `except`, a journal the caller has read already, is neither read
 * again nor listed.
 */
export async function cutoverJournals(dir: string, cutover: string, except?: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter(
      (n) => n.endsWith(JOURNAL_EXTENSION) && (except === undefined || resolve(join(dir, n)) !== resolve(except)),
    );
  } catch {
    return [];
  }
  const read = await Promise.all(
    names.map(async (n) => {
      try {
        return await journalCutover(join(dir, n));
      } catch {
        // unreadable: it says nothing of this cutover
        const unread: JournalCutover = { file: join(dir, n) };
        return unread;
      }
    }),
  );
  return read
    .filter((j) => j.cutover === cutover)
    .sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0) || (a.file < b.file ? -1 : 1))
    .map((j) => j.file);
}

/** A journal of the folder that holds a run: its cutover and when its first run started. */
export type FolderJournal = JournalCutover & { cutover: string; startedAt: number };

/** A file of the folder (or the folder itself) whose journal cannot be judged, and why. */
export interface UnjudgedJournal {
  file: string;
  why: string;
}

/**
 * Every journal of a folder that holds a run, oldest first (by when its first run started), of
 * every cutover: what an earlier cutover left on the fleet is not told by the newest journal alone
 * (a new cutover that acted and sent no commit hid a split commit before it). Each file read on its
 * own: one that cannot be read (or is damaged before its last line, so a run in it may be hidden),
 * one that began at the same moment as another (they cannot be ordered), or a folder that cannot be
 * listed is in `unjudged`, with why; the others are judged all the same. No folder: nothing.
 */
export async function folderJournals(dir: string): Promise<{ journals: FolderJournal[]; unjudged: UnjudgedJournal[] }> {
  const unjudged: UnjudgedJournal[] = [];
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(JOURNAL_EXTENSION)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { journals: [], unjudged };
    return { journals: [], unjudged: [{ file: dir, why: `the folder cannot be listed (${errorMessage(err)})` }] };
  }
  const read: FolderJournal[] = [];
  for (const n of names) {
    const file = join(dir, n);
    let j: JournalCutover;
    try {
      j = await journalCutover(file);
    } catch (err) {
      unjudged.push({ file, why: `it cannot be read (${errorMessage(err)})` });
      continue;
    }
    if (j.cutover !== undefined && j.startedAt !== undefined)
      read.push({ ...j, cutover: j.cutover, startedAt: j.startedAt });
    // no run read in it, and a line that is none: a run it holds may be in that line
    else if (j.damaged !== undefined)
      unjudged.push({ file, why: `it cannot be read (${j.damaged}): whether it holds a run cannot be told` });
  }
  read.sort((a, b) => a.startedAt - b.startedAt);
  for (const [i, j] of read.entries()) {
    const before = read[i - 1];
    if (before && before.startedAt === j.startedAt)
      unjudged.push({
        file: j.file,
        why: `it began at the same moment as ${before.file}: which came first cannot be told`,
      });
  }
  return { journals: read, unjudged };
}
