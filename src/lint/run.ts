/**
 * `lintFiles`: files and folders → loader diagnostics + rule diagnostics. Kept apart from
 * `index.ts` so that `syncbook lint` loads only what it runs (the formatters are imported one
 * at a time by the CLI).
 */
import type { Diagnostic } from "../diagnostics.js";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import { loadRunbook, type LoadedRunbook } from "../runbook/index.js";
import { findRunbookFiles } from "./files.js";
import { lintRunbook, sortDiagnostics } from "./rules.js";
import { PLUGIN_CALL_KINDS } from "../steps/index.js";

export interface LintFilesResult {
  /** Every file linted, as shown in diagnostics. */
  files: string[];
  /** Loader and rule diagnostics of every file, sorted by file, line, column. */
  diagnostics: Diagnostic[];
  /** Source text per file (for the pretty format). */
  sources: Map<string, string>;
}

/** Loader diagnostics plus rule diagnostics of one loaded runbook. */
export function lintLoaded(loaded: LoadedRunbook): Diagnostic[] {
  return sortDiagnostics([...loaded.diagnostics, ...lintRunbook(loaded)]);
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
 * Lint files and folders (folders are searched recursively for *.yaml / *.yml). Runs with the
 * loader's `env: "lint"`: CI has no secrets, and `${env.*}` values are never needed to lint.
 * Throws a `UserError` with exit code 2 for a missing path, an unreadable file, or a folder
 * without runbooks.
 */
export async function lintFiles(
  paths: readonly string[],
  opts: {
    cwd?: string;
    vars?: Record<string, string>;
    /** Import the runbooks' `plugins:` entries to check their options (runs their top-level code). */
    importPlugins?: boolean;
  } = {},
): Promise<LintFilesResult> {
  const files = findRunbookFiles(paths, opts.cwd);
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
      results[i] = sortDiagnostics([
        ...lintLoaded(loaded),
        ...(await pluginDiagnostics(loaded, opts.importPlugins === true)),
      ]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
  return { files, diagnostics: results.flat(), sources };
}
