/**
 * Reading a run's journal (JSON lines of RunEvents, one file per run under .syncbook/<runbook>/)
 * to rebuild its report after the fact. A journal cut short by a crash usually ends in half a
 * line: that line is reported as a warning and the report is built from the rest. A file that is
 * not a journal at all is refused (exit 2) before anything is written.
 */
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ExitCode, UserError } from "../errors.js";
import type { RunEvent } from "../run/events.js";

export interface JournalRead {
  /** The file read (a directory argument resolves to its newest journal). */
  file: string;
  events: RunEvent[];
  warnings: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Event-shaped: a string `type`, numeric `seq` and `at`. Unknown types are kept (newer runners). */
export function isRunEvent(v: unknown): v is RunEvent {
  return isObject(v) && typeof v.type === "string" && typeof v.seq === "number" && Number.isFinite(v.seq) && typeof v.at === "number" && Number.isFinite(v.at);
}

const JOURNAL_NAME = /\.(jsonl|ndjson|journal)$/i;

/** A directory stands for its newest journal file (*.jsonl, *.ndjson, *.journal). */
export async function resolveJournal(path: string): Promise<string> {
  let st;
  try {
    st = await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read ${path}: ${code === "ENOENT" ? "no such file or directory" : ((err as Error).message ?? String(err))}`, {
      exitCode: ExitCode.usage,
      hint: "pass a run's journal: a JSON-lines file under .syncbook/<runbook>/",
    });
  }
  if (!st.isDirectory()) return path;
  const names = (await readdir(path)).filter((n) => JOURNAL_NAME.test(n));
  const files = await Promise.all(names.map(async (n) => ({ n, s: await stat(join(path, n)) })));
  const newest = files.filter((f) => f.s.isFile()).sort((a, b) => b.s.mtimeMs - a.s.mtimeMs)[0];
  if (!newest) throw new UserError(`${path} holds no journal (*.jsonl, *.ndjson, *.journal)`, { exitCode: ExitCode.usage, hint: "pass the journal file itself" });
  return join(path, newest.n);
}

/** Reads a journal line by line (journals of long runs are large). */
export async function readJournal(path: string): Promise<JournalRead> {
  const file = await resolveJournal(path);
  const events: RunEvent[] = [];
  const warnings: string[] = [];
  const bad: { line: number; why: string }[] = [];
  let lineNo = 0;
  let lastLine = 0;
  let firstLine: { line: number; ok: boolean; why: string } | undefined;
  const notJournal = (why: string): UserError =>
    new UserError(`${file} is not a syncbook journal: ${why}`, { exitCode: ExitCode.usage, hint: 'a journal is JSON lines of run events ({"type","seq","at",…}), one file per run under .syncbook/<runbook>/' });

  const input = createReadStream(file, { encoding: "utf8" });
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const raw of lines) {
      lineNo++;
      const line = raw.trim();
      if (line === "") continue;
      lastLine = lineNo;
      let value: unknown;
      let parsed = true;
      try {
        value = JSON.parse(line);
      } catch {
        parsed = false;
      }
      const why = !parsed ? "not JSON" : !isObject(value) ? "not a JSON object" : "";
      if (!firstLine) {
        firstLine = { line: lineNo, ok: why === "", why };
        // refuse a binary early instead of reading all of it
        if (!firstLine.ok && line.includes("\u0000")) throw notJournal("it is binary");
      }
      if (why) bad.push({ line: lineNo, why });
      else if (isRunEvent(value)) events.push(value);
      else if ("type" in (value as object)) bad.push({ line: lineNo, why: "an event without numeric seq/at" });
      // other JSON objects (a header or metadata a later journal format adds) are skipped quietly
    }
  } catch (err) {
    if (err instanceof UserError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read ${file}: ${code === "EISDIR" ? "is a directory" : ((err as Error).message ?? String(err))}`, { exitCode: ExitCode.usage });
  } finally {
    lines.close();
    input.destroy();
  }

  if (!firstLine) throw notJournal("it is empty");
  // a journal starts with an event (or a JSON object header); truncation only ever hits the end
  if (!firstLine.ok) throw notJournal(`line ${firstLine.line} is ${firstLine.why}`);
  if (events.length === 0) throw notJournal(bad[0] ? `line ${bad[0].line} is ${bad[0].why}` : "it holds no run events");
  for (const b of bad) {
    if (b.line === lastLine) warnings.push(`the last line (${b.line}) is truncated or corrupt (${b.why}): the run was probably cut short while writing it; the report is built from the ${events.length} events before it`);
    else warnings.push(`line ${b.line} of the journal is ${b.why}: skipped`);
  }
  return { file, events, warnings };
}
