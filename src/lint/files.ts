/** Which files `syncbook lint <files or folders...>` reads. */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { ExitCode, UserError } from "../errors.js";

const RUNBOOK_FILE = /\.ya?ml$/i;
/** Folders never searched: dependencies and dot-folders (.git, .syncbook journals...). */
const SKIP_DIR = (name: string): boolean => name === "node_modules" || name.startsWith(".");

function io(message: string, hint: string, cause?: unknown): UserError {
  return new UserError(message, { hint, exitCode: ExitCode.usage, cause });
}

function walk(dir: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    throw io(
      `cannot read folder ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      "Check the folder's permissions.",
      err,
    );
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIR(e.name)) walk(p, out);
    } else if ((e.isFile() || e.isSymbolicLink()) && RUNBOOK_FILE.test(e.name)) out.push(p);
  }
}

/** A top-level `runbook:` key (block style at column 0, or in a flow mapping): what makes a YAML file a runbook. */
const RUNBOOK_KEY = /^["']?runbook["']?[ \t]*:|^\{[^]*?\brunbook[ \t]*:/m;

/** How much of a YAML file found in a folder is read to tell whether it is a runbook. */
const HEAD_BYTES = 1 << 16;

/**
 * Is this YAML file a runbook? Found in a folder, a file without a top-level `runbook:` key (a
 * docker-compose file, a workflow, Helm values) is not one and is skipped; a file named on the
 * command line is always linted. Reads the first 64 KiB (the key is near the top of a runbook).
 * A file no bigger than that is read whole: `whole` receives its bytes, so that lint does not
 * read it again.
 */
export function looksLikeRunbook(file: string, whole?: (bytes: Buffer) => void): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const size = fstatSync(fd).size;
    // the file's size, up to 64 KiB: a folder of small runbooks does not allocate 64 KiB each
    const buf = Buffer.allocUnsafe(Math.min(size, HEAD_BYTES));
    const n = readSync(fd, buf, 0, buf.length, 0);
    const runbook = RUNBOOK_KEY.test(buf.toString("utf8", 0, n));
    if (runbook && n === size) whole?.(buf);
    return runbook;
  } catch {
    return true; // unreadable: lint says why
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A path as shown in output: relative to `cwd` when inside it, with forward slashes. */
export function displayPath(file: string, cwd = process.cwd()): string {
  const abs = resolve(cwd, file);
  const rel = relative(cwd, abs);
  const shown = rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
  return sep === "/" ? shown : shown.split(sep).join("/");
}

/** What a folder search tells its caller besides the files (`findRunbookFiles`). */
export interface SearchReport {
  /** Receives the YAML files found in folders and skipped because they are not runbooks. */
  skipped?: string[];
  /** Called after each folder's walk, before its files are read, with the YAML files found in folders so far. */
  walked?: (yamlFiles: number) => void;
  /** Receives, by path as returned, the bytes of each runbook read whole to tell it from other YAML. */
  bytes?: Map<string, Buffer>;
}

/**
 * Expand files and folders into runbook files: a file is taken as given (whatever its
 * extension), a folder is searched recursively for `*.yaml` / `*.yml`. Each file once, in
 * the order given, folder contents sorted. A missing path or a folder without runbooks is a
 * usage error (exit 2): CI must not pass because it linted nothing.
 */
export function findRunbookFiles(paths: readonly string[], cwd = process.cwd(), report: SearchReport = {}): string[] {
  const { skipped, walked, bytes } = report;
  let yamlFiles = 0;
  if (paths.length === 0)
    throw io("no runbook files or folders given", "Run `syncbook lint runbooks/` or name runbook files.");
  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    let st;
    try {
      st = statSync(abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw io(
        code === "ENOENT" ? `no such file or folder: ${p}` : `cannot read ${p}: ${code ?? String(err)}`,
        code === "ENOENT"
          ? "Check the path (relative paths start from the current folder)."
          : "Check the path's permissions.",
        err,
      );
    }
    const found: string[] = [];
    if (st.isDirectory()) {
      const yaml: string[] = [];
      walk(abs, yaml);
      walked?.((yamlFiles += yaml.length));
      for (const f of yaml)
        (looksLikeRunbook(f, bytes && ((b) => bytes.set(displayPath(f, cwd), b))) ? found : (skipped ?? [])).push(f);
      const others = yaml.length - found.length;
      if (found.length === 0)
        throw io(
          `no runbooks in folder ${p}${others ? ` (${others} YAML file(s) without a top-level \`runbook:\` key, so not runbooks)` : " (*.yaml, *.yml)"}`,
          "Point lint at the folder that holds the runbooks, or name the files (a file named is always linted).",
        );
    } else found.push(abs);
    for (const f of found) {
      if (seen.has(f)) continue;
      seen.add(f);
      out.push(displayPath(f, cwd));
    }
  }
  return out;
}
