/**
 * Reading a journal file, and choosing a runbook's journal, shared by `--resume` (journal/state.ts, strict: a corrupt line in the
 * middle refuses the resume) and `syncbook report` (read-whole.ts, lenient: it skips and
 * warns). Both read the same lines the same way; each applies its own policy.
 */
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { actsOn, type RunEvent } from "../events.js";
import { JOURNAL_EXTENSION, isObject } from "./format.js";

/** One non-blank line: its JSON value, or why it is not a run event ("" when it is one). */
export interface JournalLine {
  lineNo: number;
  text: string;
  value: unknown;
  /** "" | "not JSON" | "not a JSON object" | "not a run event (no type, seq or at)" */
  why: string;
}

/** Event-shaped: a string `type`, finite `seq` and `at`. Unknown types are kept (newer runners). */
export function isRunEvent(v: unknown): v is RunEvent {
  return (
    isObject(v) &&
    typeof v.type === "string" &&
    typeof v.seq === "number" &&
    Number.isFinite(v.seq) &&
    typeof v.at === "number" &&
    Number.isFinite(v.at)
  );
}

/** The journal's non-blank lines in order, streamed (journals of long runs are large). Read errors are thrown as is. */
export async function* journalLines(file: string): AsyncGenerator<JournalLine> {
  const input = createReadStream(file, { encoding: "utf8" });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  try {
    for await (const raw of lines) {
      lineNo++;
      const text = raw.trim();
      if (text === "") continue;
      let value: unknown;
      let why = "";
      try {
        value = JSON.parse(text);
        if (!isObject(value)) why = "not a JSON object";
        else if (!isRunEvent(value)) why = "not a run event (no type, seq or at)";
      } catch {
        why = "not JSON";
      }
      yield { lineNo, text, value, why };
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

/** What a journal says of itself, for choosing among a folder's journals without trusting file times. */
export interface JournalSummary {
  /**
   * Its run sent a request (to the fleet, the verifier, a hook's target) or ran a hook; or it
   * continued its cutover from an earlier journal (`run.started.carried`) and finished ok: a
   * `--from verify` that verified on a writesOff sent before is the cutover's last word, and a
   * `status` that passed over it said "not verified".
   */
  acted: boolean;
  /** The journals its header names as already in the folder when it was opened (file names). */
  after: string[];
  /** Its last segment recorded the run's end with outcome ok, not stopped at `--to` (nothing left to resume). */
  finishedOk: boolean;
}

/** One pass over a journal for `chooseJournal`. Read errors are thrown as is. */
export async function summarizeJournal(file: string): Promise<JournalSummary> {
  const out: JournalSummary = { acted: false, after: [], finishedOk: false };
  let carried = false;
  for await (const l of journalLines(file)) {
    // a cheap look first: most lines are samples
    if (!/"(request\.sent|hook\.started|journal\.opened|journal\.resumed|run\.finished|run\.started)"/.test(l.text))
      continue;
    const v = l.value;
    if (!isObject(v)) continue;
    if (actsOn(v)) out.acted = true;
    else if (v.type === "run.started" && isObject(v.carried)) carried = true;
    else if (v.type === "journal.opened" && Array.isArray(v.after))
      out.after = v.after.filter((n): n is string => typeof n === "string");
    else if (v.type === "journal.resumed") out.finishedOk = false;
    else if (v.type === "run.finished") out.finishedOk = v.outcome === "ok" && typeof v.to !== "string";
  }
  if (carried && out.finishedOk) out.acted = true;
  return out;
}

/** Did this journal's run act on anything: send a request (to the fleet, the verifier, a hook's target) or run a hook? */
export async function journalActed(file: string): Promise<boolean> {
  return (await summarizeJournal(file)).acted;
}

export interface JournalChoice {
  /** The journal `--resume` continues and `syncbook report <folder>` reads; undefined when the folder holds none. */
  file: string | undefined;
  /** Newer journals passed over because their run sent nothing and ran no hook (a refused or aborted start). */
  skipped: string[];
  /**
   * Set when more than one journal holds an unfinished run and none names the others as earlier:
   * a resume must not guess between them (`file` is then only the most recently written, for a report).
   */
  ambiguous?: string[];
  /** The journals holding an unfinished run that no later journal follows (the candidates of a resume). */
  unfinished: string[];
}

/**
 * The one rule for "the journal of this runbook", from what the journals say, not from file times
 * (a clock stepped back, or a journal copied in, makes a file time lie):
 * - a journal whose run sent no request and ran no hook (a run refused by an interlock, stopped at
 *   a prompt, interrupted before it did anything) never shadows one that did: resuming "nothing"
 *   would leave the real interrupted run behind;
 * - a journal that a later one names in its header (`after`: the journals already in the folder
 *   when it was opened) is over: the later run came after it;
 * - of the rest, the one whose run is unfinished (no `run.finished` ok in its last segment) is the
 *   journal; two or more unfinished ones are `ambiguous` (the caller refuses to guess); when every
 *   run finished ok, the one written last (nothing to resume either way).
 * When none acted, the most recently written. File times only order equals, names break ties.
 * A missing folder throws (ENOENT) for the caller to word.
 */
export async function chooseJournal(dir: string): Promise<JournalChoice> {
  const names = (await readdir(dir)).filter((n) => n.endsWith(JOURNAL_EXTENSION));
  const files = await Promise.all(names.map(async (n) => ({ n, s: await stat(join(dir, n)) })));
  const ordered = files
    .filter((f) => f.s.isFile())
    .sort((a, b) => b.s.mtimeMs - a.s.mtimeMs || (a.n < b.n ? 1 : a.n > b.n ? -1 : 0));
  const read = await Promise.all(
    ordered.map(async (f) => {
      try {
        return { ...f, ...(await summarizeJournal(join(dir, f.n))) };
      } catch {
        // unreadable: not for this rule to judge; the reader will say what is wrong with it
        return { ...f, acted: true, after: [], finishedOk: false };
      }
    }),
  );
  const acted = read.filter((f) => f.acted);
  if (!acted.length) return { file: ordered[0] && join(dir, ordered[0].n), skipped: [], unfinished: [] };
  const live = acted.filter((f) => !acted.some((g) => g !== f && g.after.includes(f.n)));
  // (a cycle of `after`, only by hand, leaves none live: every acted one is then a candidate)
  const candidates = live.length ? live : acted;
  const open = candidates.filter((f) => !f.finishedOk);
  const chosen = (open.length ? open : candidates)[0]!;
  const skipped = read.filter((f) => !f.acted && f.s.mtimeMs > chosen.s.mtimeMs).map((f) => join(dir, f.n));
  return {
    file: join(dir, chosen.n),
    skipped,
    unfinished: open.map((f) => join(dir, f.n)),
    // by name (the time the run began, as its host saw it): for the message, not for the choice
    ...(open.length > 1 ? { ambiguous: open.map((f) => join(dir, f.n)).sort() } : {}),
  };
}
/** The journal `chooseJournal` picks (undefined when the folder holds none). */
export async function newestJournal(dir: string): Promise<string | undefined> {
  return (await chooseJournal(dir)).file;
}
