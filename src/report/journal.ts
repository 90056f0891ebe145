/**
 * Reading a run's journal (JSON lines of RunEvents, one file per run under .syncbook/<runbook>/)
 * to rebuild its report after the fact. A journal cut short by a crash usually ends in half a
 * line: that line is reported as a warning and the report is built from the rest. A file that is
 * not a journal at all is refused (exit 2) before anything is written.
 */
import { stat } from "node:fs/promises";
import { ExitCode, UserError } from "../errors.js";
import { createChainChecker, createSampleRestorer, isRunEvent, journalLines, newestJournal } from "../journal/index.js";
import type { RunEvent } from "../events.js";

export { isRunEvent };

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
  const bad: { line: number; why: string }[] = [];
  let lastLine = 0;
  let firstLine: { line: number; ok: boolean; why: string } | undefined;
  // the hash chain: a report is still built from an edited journal, but says where the edit is
  const chain = createChainChecker();
  let chainBroken: string | undefined;
  // samples name the unknown fields they share with the previous one (journal/samples.ts)
  const samples = createSampleRestorer();
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
      if (broken) bad.push({ line: lineNo, why: broken });
      else if (isRunEvent(value)) {
        if (value.type === ("journal.resumed" as string)) samples.reset();
        events.push(samples.restore(value));
        if (chainBroken === undefined) {
          const opens = value.type === ("journal.opened" as string) || value.type === ("journal.resumed" as string);
          chainBroken = chain.check(lineNo, text, value.seq, opens).broken;
        }
      } else if ("type" in (value as object)) bad.push({ line: lineNo, why: "an event without numeric seq/at" });
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
  if (events.length === 0) throw notJournal(bad[0] ? `line ${bad[0].line} is ${bad[0].why}` : "it holds no run events");
  for (const b of bad) {
    if (b.line === lastLine)
      warnings.push(
        `the last line (${b.line}) is truncated or corrupt (${b.why}): the run was probably cut short while writing it; the report is built from the ${events.length} events before it`,
      );
    else warnings.push(`line ${b.line} of the journal is ${b.why}: skipped`);
  }
  if (chainBroken)
    warnings.push(`${chainBroken}: the journal was changed after the run wrote it; this report shows it as it is now`);
  return { file, events, warnings };
}
