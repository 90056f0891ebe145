/**
 * Reading a journal file, shared by `--resume` (journal/state.ts, strict: a corrupt line in the
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

/**
 * The newest journal (`*.jsonl`) in a folder: the most recently written, so a resumed older run
 * counts as newer than one started after it but not written since; names break ties.
 * Undefined when the folder holds none; a missing folder throws (ENOENT) for the caller to word.
 */
export async function newestJournal(dir: string): Promise<string | undefined> {
  const names = (await readdir(dir)).filter((n) => n.endsWith(JOURNAL_EXTENSION));
  const files = await Promise.all(names.map(async (n) => ({ n, s: await stat(join(dir, n)) })));
  const newest = files
    .filter((f) => f.s.isFile())
    .sort((a, b) => b.s.mtimeMs - a.s.mtimeMs || (a.n < b.n ? 1 : a.n > b.n ? -1 : 0))[0];
  return newest ? join(dir, newest.n) : undefined;
}
