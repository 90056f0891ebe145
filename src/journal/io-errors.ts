/**
 * A file-system error on the journal's side (its folder, its lock, the fleet's locks, the journal
 * itself) as the operator reads it: what could not be done to which path, why in words, and what
 * to do; never a bare errno or "internal error". Most of these are the operator's to fix (a
 * read-only checkout, `.syncbook` left as a file, a full disk), so before the run begins they are
 * usage errors (exit 2); a journal that fails in the middle of a run keeps the run's exit (1).
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ExitCode, UserError } from "../errors.js";

/** Why, in words, for the errors a folder or file of ours can meet. */
const WHY: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EPERM: "not permitted",
  EROFS: "the file system is read-only",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  ENOTDIR: "a part of the path is a file, not a folder",
  EEXIST: "a file is in the way where a folder belongs",
  EISDIR: "a folder is in the way where a file belongs",
  ENAMETOOLONG: "the path is too long",
  ELOOP: "too many symbolic links in the path",
};

/** The other place to name: a journal folder's (`--journal-dir`), by default. */
const JOURNAL_ELSEWHERE = "or pass --journal-dir <a writable folder> (status and --resume take it too)";

/** What to do about it: the fix for the folder at `path`, or another place (`elsewhere`). */
function hintFor(code: string | undefined, path: string, during: boolean, elsewhere: string): string {
  switch (code) {
    case "EACCES":
    case "EPERM":
      return `let this user write ${path}, ${elsewhere}`;
    case "EROFS":
      return `the runbook's checkout is read-only here: ${elsewhere.replace(/^or /, "")}`;
    case "ENOSPC":
    case "EDQUOT":
      // during a run, the way on depends on what ran after the failure: the run's end says it
      // (src/run/unwind.ts `writesAfterJournalFailure`), once, so that no two hints disagree
      return during
        ? "the disk is full: free space; the run's last lines say how to go on (nothing is sent while the journal cannot record it)"
        : `free space on the disk of ${path}, ${elsewhere}`;
    case "ENOTDIR":
    case "EEXIST":
      return `syncbook keeps its journals in folders: move the file on the way to ${path} aside, ${elsewhere}`;
    default:
      return during
        ? "check the folder's permissions and the disk; the run's last lines say how to go on (nothing is sent while the journal cannot record it)"
        : `check ${path} and its folders, ${elsewhere}`;
  }
}

/**
 * `cannot <what> <path>: <CODE> (<why>)` with its hint. `during`: the run has begun (exit 1, and
 * the hint says nothing is sent while the journal cannot record it); else exit 2. `elsewhere`:
 * how to put it in another place, "or …" (default: `--journal-dir`).
 */
export function ioError(
  path: string,
  what: string,
  err: unknown,
  opts: { during?: boolean; elsewhere?: string } = {},
): UserError {
  const during = opts.during === true;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const why = code ? `${code}${WHY[code] ? ` (${WHY[code]})` : ""}` : err instanceof Error ? err.message : String(err);
  return new UserError(`cannot ${what} ${path}: ${why}`, {
    exitCode: during ? ExitCode.failed : ExitCode.usage,
    hint: hintFor(code, path, during, opts.elsewhere ?? JOURNAL_ELSEWHERE),
    cause: err,
  });
}

/** Creates a folder and the folders above it, or throws `ioError` with the reason that stopped it. */
export function makeFolder(path: string, what: string, opts: Parameters<typeof ioError>[3] = {}): void {
  try {
    mkdirSync(path, { recursive: true });
  } catch (err) {
    throw ioError(path, what, realCause(path, err), opts);
  }
}

/**
 * Node's recursive mkdir answers ENOENT for whatever stopped it on the way (a read-only file
 * system among them): ask the first missing folder itself, which answers with the real reason.
 */
function realCause(path: string, err: unknown): unknown {
  if ((err as NodeJS.ErrnoException).code !== "ENOENT") return err;
  let first = path;
  while (dirname(first) !== first && !existsSync(dirname(first))) first = dirname(first);
  try {
    mkdirSync(first);
    return err;
  } catch (real) {
    return real;
  }
}
