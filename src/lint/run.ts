/**
 * `lintFiles`: files and folders → loader diagnostics + rule diagnostics. Kept apart from
 * `index.ts` so that `syncbook lint` loads only what it runs (the formatters are imported one
 * at a time by the CLI).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import type { Worker as WorkerThread } from "node:worker_threads";
import type { Diagnostic } from "../diagnostics.js";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import { loadRunbook, type LoadedRunbook } from "../runbook/index.js";
import { findRunbookFiles } from "./files.js";
import { lintWithLoader } from "./rules.js";
import { PLUGIN_CALL_KINDS } from "../steps/index.js";

export interface LintFilesResult {
  /** Every file linted, as shown in diagnostics. */
  files: string[];
  /** Loader and rule diagnostics of every file, sorted by file, line, column. */
  diagnostics: Diagnostic[];
  /** Source text per file (for the pretty format). */
  sources: Map<string, string>;
}

/** Loader diagnostics plus rule diagnostics of one loaded runbook, with its `accept:` applied over both. */
export function lintLoaded(loaded: LoadedRunbook): Diagnostic[] {
  return lintWithLoader(loaded);
}

/**
 * Plugin findings (a missing plugin file, a hook that does not exist, options its schema
 * rejects), loaded only for runbooks that name plugins or call hooks: the plugin loader and ajv
 * stay out of the start-up of a runbook without them. The runbook's own `plugins:` entries are
 * imported only when asked (`importPlugins`, `lint --load-plugins`): importing runs their
 * top-level code, and lint is a dry run. The built-ins are syncbook's own code.
 */
async function pluginDiagnostics(loaded: LoadedRunbook, importPlugins: boolean): Promise<Diagnostic[]> {
  if (!/\b(plugins|use)\s*:/.test(loaded.text)) return [];
  const { lintPlugins } = await import("../plugin/calls.js");
  return lintPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS, importEntries: importPlugins });
}

/** How many files are read at once (1,000 runbooks must not exhaust file descriptors). */
const CONCURRENCY = 32;

/**
 * From this many files, a worker thread lints beside this one, each taking pieces of
 * `CHUNK_FILES` files in turn (issue 41: lint of 1,000 runbooks within 20x a bare Node start
 * needs both cores). Below it the worker's own start-up (a second Node thread, its copy of the
 * code) costs more than it saves.
 */
export const WORKER_FROM_FILES = 200;

/** Options of `lintFiles` a worker is handed (plain data). */
export interface LintFilesOptions {
  cwd?: string;
  vars?: Record<string, string>;
  /** Import the runbooks' `plugins:` entries to check their options (runs their top-level code). */
  importPlugins?: boolean;
}

/** What a worker posts back for one piece of work: its files' diagnostics and texts, or the error that stopped it. */
export type WorkerReply =
  | { ok: true; results: Diagnostic[][]; sources: [string, string][] }
  | { ok: false; message: string; hint: string | undefined; exitCode: number };

/**
 * What this thread sends a worker: a piece of work (its index, its files, and the bytes of those
 * the folder search read whole), or that there is no more.
 */
export type WorkerTask = { chunk: number; files: string[]; bytes: Map<string, Uint8Array> } | { done: true };

/**
 * Files per piece of work. Both threads take the next piece when they finish one, so the worker's
 * slower start does not leave this thread idle at the end, as a fixed half did (about 0.4 s of
 * 2.9 s for 1,000 runbooks, issue 41). The last pieces are smaller (`pieces`).
 */
export const CHUNK_FILES = 25;
/** The smallest piece: each costs a message each way. */
const LAST_PIECE_FILES = 5;

/**
 * `n` files as pieces of work, [start, end) each: `CHUNK_FILES` files, then, for the last
 * hundred or so, a quarter of what is left (at least `LAST_PIECE_FILES`). Whichever thread
 * finishes first then waits for the other's last piece only: a few files, not 25 (about 50 ms
 * at the end of 1,000 runbooks, issue 41).
 */
export function pieces(n: number): [number, number][] {
  const out: [number, number][] = [];
  for (let start = 0; start < n;) {
    const size = Math.min(CHUNK_FILES, Math.max(LAST_PIECE_FILES, Math.ceil((n - start) / 4)));
    out.push([start, Math.min(n, start + size)]);
    start += size;
  }
  return out;
}

/**
 * A lint worker thread, or undefined when none may be used: the runbooks' own plugins are
 * imported on this thread only (their top-level code runs), one core has no room for it, and run
 * from the TypeScript sources (tests) there is no worker file (everything is linted on this
 * thread). Its file: the lint bundle's beside the CLI bundle (dist/cli/lint-worker.cjs), or the
 * compiled library's (dist/src/lint/worker.js).
 */
function startWorker(opts: LintFilesOptions): WorkerThread | undefined {
  if (opts.importPlugins || availableParallelism() < 2) return undefined;
  const here = import.meta.url;
  const file = fileURLToPath(new URL(here.endsWith(".cjs") ? "./lint-worker.cjs" : "./worker.js", here));
  if (!existsSync(file)) return undefined;
  // loaded here, not at the top: lint of one runbook (the cold start) never needs it
  const { Worker } = createRequire(import.meta.url)("node:worker_threads") as { Worker: typeof WorkerThread };
  return new Worker(file, { workerData: { opts } });
}

/** A worker started for a search that then found too few runbooks, or failed: nothing more is asked of it. */
function stopWorker(w: WorkerThread): void {
  w.on("error", () => undefined); // whatever it met while starting: it has no work to report on
  void w.terminate();
}

/** One piece of work's outcome, on either thread. */
type Piece = WorkerReply | { ok: false; error: unknown };

/**
 * Lints the pieces of `files` on this thread and the worker `w`, each taking the next piece when
 * done; resolves when every piece handed out has its outcome (the worker then exits on its own:
 * its teardown is not waited for). After a failure no new piece is handed out: the pieces before
 * it were all handed out already, so the first failing file is still found.
 */
async function lintShared(
  w: WorkerThread,
  files: readonly string[],
  bytes: ReadonlyMap<string, Buffer>,
  opts: LintFilesOptions,
): Promise<(Piece | undefined)[]> {
  const chunks = pieces(files.length).map(([a, b]) => files.slice(a, b));
  const out: (Piece | undefined)[] = new Array<Piece | undefined>(chunks.length);
  let next = 0;
  let failed = false;
  const take = (): number | undefined => (!failed && next < chunks.length ? next++ : undefined);
  const settle = (i: number, p: Piece): void => {
    out[i] = p;
    if (!p.ok) failed = true;
  };
  const onWorker = new Promise<void>((resolve, reject) => {
    const inFlight = new Set<number>();
    const give = (): void => {
      const i = take();
      if (i !== undefined) {
        inFlight.add(i);
        const mine = chunks[i]!;
        const task: WorkerTask = { chunk: i, files: mine, bytes: new Map() };
        for (const f of mine) {
          const b = bytes.get(f);
          if (b) task.bytes.set(f, b);
        }
        w.postMessage(task);
      } else if (inFlight.size === 0) {
        w.postMessage({ done: true } satisfies WorkerTask);
        // every piece it was handed has its outcome: its exit (tens of ms) is not on lint's path
        w.unref();
        resolve();
      }
    };
    w.on("message", (m: { chunk: number; reply: WorkerReply }) => {
      inFlight.delete(m.chunk);
      settle(m.chunk, m.reply);
      give();
    });
    w.once("error", reject);
    w.once("exit", (code) =>
      inFlight.size === 0
        ? resolve()
        : reject(new Error(`the lint worker exited (code ${code}) without the results of ${inFlight.size} piece(s)`)),
    );
    // two pieces at once: it starts the second while this thread takes its answer to the first
    give();
    give();
  });
  for (let i = take(); i !== undefined; i = take()) {
    try {
      const r = await lintFileList(chunks[i]!, opts, bytes);
      settle(i, { ok: true, results: r.results, sources: [...r.sources] });
    } catch (error) {
      settle(i, { ok: false, error });
    }
    // let the worker's answers in, so it is handed its next piece without waiting for this thread
    await new Promise((r) => setImmediate(r));
  }
  await onWorker;
  return out;
}

/**
 * Lint files and folders (folders are searched recursively for *.yaml / *.yml). Runs with the
 * loader's `env: "lint"`: CI has no secrets, and `${env.*}` values are never needed to lint.
 * Throws a `UserError` with exit code 2 for a missing path, an unreadable file, or a folder
 * without runbooks.
 */
export async function lintFiles(paths: readonly string[], opts: LintFilesOptions = {}): Promise<LintFilesResult> {
  // the bytes of the files the folder search read whole: each file is read once
  const bytes = new Map<string, Buffer>();
  let worker: WorkerThread | undefined;
  let files: string[];
  try {
    files = findRunbookFiles(paths, opts.cwd, {
      bytes,
      // started as soon as a folder holds enough YAML files, so that its start-up overlaps the
      // search's reads (it only waits for its first piece meanwhile)
      walked: (n) => void (worker ??= n >= WORKER_FROM_FILES ? startWorker(opts) : undefined),
    });
  } catch (err) {
    if (worker) stopWorker(worker);
    throw err;
  }
  if (files.length < WORKER_FROM_FILES) {
    // the folders' YAML files were mostly not runbooks
    if (worker) stopWorker(worker);
    worker = undefined;
  } else worker ??= startWorker(opts);
  if (!worker) return { files, ...(await lintFileList(files, opts, bytes)) };
  const outcomes = await lintShared(worker, files, bytes, opts);
  const diagnostics: Diagnostic[] = [];
  const sources = new Map<string, string>();
  // in file order, and the first file's error first, as on one thread
  for (const p of outcomes) {
    if (p === undefined) continue;
    if ("error" in p) throw p.error;
    if (!p.ok)
      throw new UserError(p.message, { ...(p.hint !== undefined ? { hint: p.hint } : {}), exitCode: p.exitCode });
    for (const r of p.results) diagnostics.push(...r);
    for (const [f, text] of p.sources) sources.set(f, text);
  }
  return { files, diagnostics, sources };
}

/** Lints the given runbook files on this thread, in order (`lintFiles` without the search). */
export async function lintFileList(
  files: readonly string[],
  opts: LintFilesOptions = {},
  /** The bytes of files already read (the folder search's): not read again. */
  bytes?: ReadonlyMap<string, Uint8Array>,
): Promise<{ results: Diagnostic[][]; diagnostics: Diagnostic[]; sources: Map<string, string> }> {
  const results: Diagnostic[][] = new Array<Diagnostic[]>(files.length);
  const sources = new Map<string, string>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      const file = files[i] as string;
      let loaded: LoadedRunbook;
      try {
        // env values are never read; their lengths are, to warn about secrets too short to redact
        loaded = await loadRunbook(file, {
          env: "lint",
          envLengths: process.env,
          readSync: true,
          ...(bytes?.has(file) ? { bytes: bytes.get(file) } : {}),
          ...(opts.vars ? { vars: opts.vars } : {}),
        });
      } catch (err) {
        if (err instanceof UserError)
          throw new UserError(err.message, {
            hint: err.hint ?? "Check the file.",
            exitCode: ExitCode.usage,
            cause: err,
          });
        const code = (err as NodeJS.ErrnoException).code;
        throw new UserError(`cannot read ${file}: ${code ?? errorMessage(err)}`, {
          hint: "Check that the file exists and is readable.",
          exitCode: ExitCode.usage,
          cause: err,
        });
      }
      sources.set(file, loaded.text);
      // the plugin checks' findings are the loader's for `accept:` (one pass accepts both). Added
      // in place: a copy ({ ...loaded }) would compute the text's sha256 (its `hash` getter),
      // which lint never reads, and load node:crypto into lint's start-up (issue 41)
      loaded.diagnostics.push(...(await pluginDiagnostics(loaded, opts.importPlugins === true)));
      results[i] = lintLoaded(loaded);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
  return { results, diagnostics: results.flat(), sources };
}
