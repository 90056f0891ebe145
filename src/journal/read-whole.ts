/**
 * Reading a run's journal whole (JSON lines of RunEvents, one file per run under
 * .syncbook/<runbook>/), leniently, to rebuild its report after the fact, or the history of the
 * cutover's earlier runs (the window and time of a run that continued it, and `status`). A journal cut short by a crash usually ends in half a
 * line: that line is reported as a warning and the report is built from the rest. A file that is
 * not a journal at all is refused (exit 2) before anything is written.
 */
import { stat } from "node:fs/promises";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import { createChainChecker } from "./chain.js";
import { cutoverJournals } from "./cutover.js";
import { isRunEvent, journalLines, newestJournal } from "./read.js";
import { journalEventRestorer } from "./samples.js";
import type { RunEvent } from "../events.js";

export interface JournalRead {
  /** The file read (a directory argument resolves to its newest journal). */
  file: string;
  events: RunEvent[];
  warnings: string[];
}

/** A directory stands for its newest journal (the one `--resume` would continue). */
export async function resolveJournal(path: string): Promise<string> {
  let st;
  try {
    st = await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(
      `cannot read ${path}: ${code === "ENOENT" ? "no such file or directory" : ((err as Error).message ?? String(err))}`,
      {
        exitCode: ExitCode.usage,
        hint: "pass a run's journal: a JSON-lines file under .syncbook/<runbook>/",
      },
    );
  }
  if (!st.isDirectory()) return path;
  const newest = await newestJournal(path);
  if (!newest)
    throw new UserError(`${path} holds no journal (*.jsonl)`, {
      exitCode: ExitCode.usage,
      hint: "pass the journal file itself",
    });
  return newest;
}

/** Reads a journal, skipping (and warning about) lines that are not run events. */
export async function readJournal(path: string): Promise<JournalRead> {
  const file = await resolveJournal(path);
  const events: RunEvent[] = [];
  const warnings: string[] = [];
  const bad: BadLines[] = [];
  let lastLine = 0;
  let firstLine: { line: number; ok: boolean; why: string } | undefined;
  // the hash chain: a report is still built from an edited journal, but says where the edit is
  const chain = createChainChecker();
  let chainBroken: string | undefined;
  // samples name the unknown fields they share with the previous one (journal/samples.ts)
  const restore = journalEventRestorer();
  const notJournal = (why: string): UserError =>
    new UserError(`${file} is not a syncbook journal: ${why}`, {
      exitCode: ExitCode.usage,
      hint: 'a journal is JSON lines of run events ({"type","seq","at",…}), one file per run under .syncbook/<runbook>/',
    });

  try {
    for await (const { lineNo, text, value, why } of journalLines(file)) {
      lastLine = lineNo;
      // a JSON object that is not an event (a header or metadata a later journal format adds) is fine
      const broken = why === "not JSON" || why === "not a JSON object" ? why : "";
      if (!firstLine) {
        firstLine = { line: lineNo, ok: broken === "", why: broken };
        // refuse a binary early instead of reading all of it
        if (!firstLine.ok && text.includes("\u0000")) throw notJournal("it is binary");
      }
      if (broken) addBad(bad, lineNo, broken);
      else if (isRunEvent(value)) {
        events.push(restore(value));
        if (chainBroken === undefined) {
          const opens = value.type === ("journal.opened" as string) || value.type === ("journal.resumed" as string);
          chainBroken = chain.check(lineNo, text, value.seq, opens).broken;
        }
      } else if ("type" in (value as object)) addBad(bad, lineNo, "an event without numeric seq/at");
      // other JSON objects are skipped quietly
    }
  } catch (err) {
    if (err instanceof UserError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(
      `cannot read ${file}: ${code === "EISDIR" ? "is a directory" : ((err as Error).message ?? String(err))}`,
      { exitCode: ExitCode.usage },
    );
  }
  if (!firstLine) throw notJournal("it is empty");
  // a journal starts with an event (or a JSON object header); truncation only ever hits the end
  if (!firstLine.ok) throw notJournal(`line ${firstLine.line} is ${firstLine.why}`);
  if (events.length === 0) throw notJournal(bad[0] ? `line ${bad[0].from} is ${bad[0].why}` : "it holds no run events");
  warnings.push(...badLineWarnings(bad, lastLine, events.length));
  if (chainBroken)
    warnings.push(`${chainBroken}: the journal was changed after the run wrote it; this report shows it as it is now`);
  return { file, events, warnings };
}

/** A run of consecutive bad lines with one reason. */
interface BadLines {
  from: number;
  to: number;
  why: string;
}

/** The bad-line ranges a report names one by one; the rest are counted. */
const MAX_BAD_WARNINGS = 20;

/** Consecutive bad lines with the same reason are one range: a damaged journal can hold any number. */
function addBad(bad: BadLines[], line: number, why: string): void {
  const last = bad[bad.length - 1];
  if (last && last.to === line - 1 && last.why === why) last.to = line;
  else bad.push({ from: line, to: line, why });
}

/** One warning per range of bad lines (at most `MAX_BAD_WARNINGS`, then their count), the cut last line said apart. */
function badLineWarnings(bad: readonly BadLines[], lastLine: number, events: number): string[] {
  const out: string[] = [];
  const tail = bad[bad.length - 1];
  const cut = tail !== undefined && tail.to === lastLine ? tail : undefined;
  const ranges = bad.slice(0, cut ? -1 : bad.length);
  if (cut && cut.from < cut.to) ranges.push({ ...cut, to: cut.to - 1 });
  for (const b of ranges.slice(0, MAX_BAD_WARNINGS))
    out.push(
      b.from === b.to
        ? `line ${b.from} of the journal is ${b.why}: skipped`
        : `lines ${b.from} to ${b.to} of the journal (${b.to - b.from + 1} lines) are ${b.why}: skipped`,
    );
  if (ranges.length > MAX_BAD_WARNINGS) {
    const rest = ranges.slice(MAX_BAD_WARNINGS);
    let lines = 0;
    for (const b of rest) lines += b.to - b.from + 1;
    out.push(`${rest.length} more ranges of bad lines (${lines} lines, from line ${rest[0]!.from}): skipped`);
  }
  if (cut)
    out.push(
      `the last line (${cut.to}) is truncated or corrupt (${cut.why}): the run was probably cut short while writing it; the report is built from the ${events} events before it`,
    );
  return out;
}

/** Which of a cutover's journals to read, and where an unreadable one is said. */
export interface CutoverReadOptions {
  except?: string;
  unreadable?: (file: string, why: string) => void;
}

/**
 * A cutover's journals in a folder other than `except`, each read whole, oldest run first: the
 * cutover's runs that journal does not hold (those a `--from` run continued, and any run of the
 * cutover in a later journal). An unreadable journal is left out, and said through `unreadable`.
 */
export async function cutoverJournalsRead(
  dir: string,
  cutover: string,
  opts: CutoverReadOptions = {},
): Promise<JournalRead[]> {
  const files = await cutoverJournals(dir, cutover, opts.except);
  const out: JournalRead[] = [];
  for (const f of files) {
    try {
      out.push(await readJournal(f));
    } catch (err) {
      opts.unreadable?.(f, errorMessage(err));
    }
  }
  return out;
}
