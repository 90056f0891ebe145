/**
 * The hook calls a journal records, with every process each one started (src/plugin/process.ts
 * journals `hook.started` with the call's token before it runs, and `hook.process` right after
 * each spawn): what a later run needs to tell whether a process an earlier run started may still
 * change the application (src/run/orphans.ts). One fold, read by `--resume`'s strict reader
 * (state.ts) and by the lenient scan of every journal of a runbook's folder (`earlierHookCalls`):
 * a run that commits waits out the hook processes of every earlier run of the cutover, not only
 * those of the journal it continues.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { JOURNAL_EXTENSION, isObject } from "./format.js";
import { journalLines } from "./read.js";

/** Who wrote a journal's lines from a header or resume marker on: where its pids mean something. */
export interface HookWriter {
  host: string;
  /** Its PID namespace (src/processes.ts); absent in journals written before it was recorded. */
  pidns?: string;
  /** Its boot; absent likewise. */
  boot?: string;
}

/** A hook call (or undo) as journaled, with the processes it started (src/plugin/process.ts). */
export interface HookCall extends HookWriter {
  token: string;
  stepIndex: number;
  id: string;
  use: string;
  undo: boolean;
  /** When it started (its `hook.started` line). */
  at: number;
  /** Its processes: pid, process group (= session, a spawned process leads both) and start time, journaled right after each spawn. */
  processes: { pid: number; pgid?: number; start?: number }[];
  /** Its `hook.finished` is in the journal. */
  finished: boolean;
  /** The journal that records it. */
  file?: string;
}

const positive = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

/** The fold: `writer` at each header and resume marker, `apply` for every event line. */
export function hookCallFold(file?: string): {
  writer(v: Record<string, unknown>): void;
  apply(e: Record<string, unknown>): void;
  readonly calls: HookCall[];
} {
  const calls: HookCall[] = [];
  let writer: HookWriter = { host: "" };
  return {
    calls,
    writer(v) {
      writer = {
        host: String(v.host),
        ...(typeof v.pidns === "string" ? { pidns: v.pidns } : {}),
        ...(typeof v.boot === "string" ? { boot: v.boot } : {}),
      };
    },
    apply(e) {
      switch (e.type) {
        case "hook.started":
          if (typeof e.token === "string")
            calls.push({
              token: e.token,
              stepIndex: Number(e.index),
              id: String(e.id),
              use: String(e.use),
              undo: e.undo === true,
              at: Number(e.at),
              processes: [],
              finished: false,
              ...writer,
              ...(file !== undefined ? { file } : {}),
            });
          return;
        case "hook.process": {
          const call = calls.find((c) => c.token === e.token);
          if (call && positive(e.pid))
            call.processes.push({
              pid: e.pid,
              ...(positive(e.pgid) ? { pgid: e.pgid } : {}),
              ...(Number.isSafeInteger(e.start) && (e.start as number) >= 0 ? { start: e.start as number } : {}),
            });
          return;
        }
        case "hook.finished": {
          const index = Number(e.index);
          const call = calls.findLast((c) => c.stepIndex === index && c.undo === (e.undo === true) && !c.finished);
          if (call) call.finished = true;
          return;
        }
        default:
          return;
      }
    },
  };
}

/** What a scan of the folder found: every hook call, and the journals it could not read. */
export interface EarlierHookCalls {
  calls: HookCall[];
  /** Journals that could not be read: their hook processes cannot be checked. */
  unreadable: { file: string; why: string }[];
}

/**
 * The hook calls of every journal in a runbook's journal folder (none when there is no folder),
 * read leniently: a line that does not parse is skipped (the strict reader of the journal a run
 * continues judges it), since this only adds processes to wait for.
 */
export async function earlierHookCalls(dir: string): Promise<EarlierHookCalls> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(JOURNAL_EXTENSION)).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { calls: [], unreadable: [] };
    return { calls: [], unreadable: [{ file: dir, why: code ?? String(err) }] };
  }
  const out: EarlierHookCalls = { calls: [], unreadable: [] };
  for (const n of names) {
    const file = join(dir, n);
    const fold = hookCallFold(file);
    try {
      for await (const l of journalLines(file)) {
        // a cheap look first: most lines are samples
        if (!/"(hook\.started|hook\.process|hook\.finished|journal\.opened|journal\.resumed)"/.test(l.text)) continue;
        const v = l.value;
        if (!isObject(v)) continue;
        if (v.type === "journal.opened" || v.type === "journal.resumed") fold.writer(v);
        else fold.apply(v);
      }
    } catch (err) {
      out.unreadable.push({ file, why: (err as NodeJS.ErrnoException).code ?? String(err) });
      continue;
    }
    out.calls.push(...fold.calls);
  }
  return out;
}
