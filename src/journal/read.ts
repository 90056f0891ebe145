/**
 * Reading a journal file, and choosing a runbook's journal, shared by `--resume` (journal/state.ts, strict: a corrupt line in the
 * middle refuses the resume) and `syncbook report` (report/journal.ts, lenient: it skips and
 * warns). Both read the same lines the same way; each applies its own policy.
 */
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { RunEvent } from "../events.js";
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

/** Did this journal's run act on anything: send a request (to the fleet, the verifier, a hook's target) or run a hook? */
export async function journalActed(file: string): Promise<boolean> {
  for await (const l of journalLines(file)) {
    // a cheap look first: most lines are samples
    if (!l.text.includes('"request.sent"') && !l.text.includes('"hook.started"')) continue;
    if (isObject(l.value) && (l.value.type === "request.sent" || l.value.type === "hook.started")) return true;
  }
  return false;
}

export interface JournalChoice {
  /** The journal `--resume` continues and `syncbook report <folder>` reads; undefined when the folder holds none. */
  file: string | undefined;
  /** Newer journals passed over because their run sent nothing and ran no hook (a refused or aborted start). */
  skipped: string[];
}

/**
 * The one rule for "the journal of this runbook": the most recently written `*.jsonl` (a resumed
 * older run counts as newer than one started after it but not written since; names break ties),
 * except that a journal whose run sent no request and ran no hook (a run refused by an interlock,
 * stopped at a prompt, interrupted before it did anything) never shadows an older one that did:
 * resuming "nothing" would leave the real interrupted run behind. When none acted, the newest.
 * A missing folder throws (ENOENT) for the caller to word.
 */
export async function chooseJournal(dir: string): Promise<JournalChoice> {
  const names = (await readdir(dir)).filter((n) => n.endsWith(JOURNAL_EXTENSION));
  const files = await Promise.all(names.map(async (n) => ({ n, s: await stat(join(dir, n)) })));
  const ordered = files
    .filter((f) => f.s.isFile())
    .sort((a, b) => b.s.mtimeMs - a.s.mtimeMs || (a.n < b.n ? 1 : a.n > b.n ? -1 : 0))
    .map((f) => join(dir, f.n));
  const skipped: string[] = [];
  for (const f of ordered) {
    let acted = true;
    try {
      acted = await journalActed(f);
    } catch {
      // unreadable: not for this rule to judge; the reader will say what is wrong with it
    }
    if (acted) return { file: f, skipped };
    skipped.push(f);
  }
  return { file: ordered[0], skipped: [] };
}

/** The journal `chooseJournal` picks (undefined when the folder holds none). */
export async function newestJournal(dir: string): Promise<string | undefined> {
  return (await chooseJournal(dir)).file;
}
