/**
 * `syncbook init [file]`: write a commented starter runbook that lints clean. Its `$schema`
 * modeline points at a schema file inside the runbook's repository (an editor opens a path, a URL
 * of a repository that may not be reachable helps no one, and a path out of the repository into
 * the author's machine helps no teammate), and `.syncbook/` (journals, which hold the run's
 * requests) goes into the folder's `.gitignore`.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { ExitCode, UserError } from "../errors.js";
import { starterRunbook } from "../init/starter.js";
import { lintCommand } from "../next-run.js";
import { shellCommand } from "../text.js";

/** `schemas/runbook.schema.json` of this syncbook: the first folder up from this code that holds it. */
export function installedSchema(from: string = fileURLToPath(import.meta.url)): string | undefined {
  let d = dirname(from);
  for (;;) {
    const f = join(d, "schemas", "runbook.schema.json");
    if (existsSync(f) && existsSync(join(d, "package.json"))) return f;
    const up = dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

/** Adds `.syncbook/` to the folder's `.gitignore` unless it is there; says what it did (undefined: nothing). */
function ignoreJournals(folder: string): string | undefined {
  const file = join(folder, ".gitignore");
  const text = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (text !== undefined && /^\/?\.syncbook\/?\s*$/m.test(text)) return undefined;
  const entry = "# syncbook journals (runs' requests and answers, one folder per runbook)\n.syncbook/\n";
  writeFileSync(file, text === undefined ? entry : `${text}${text.endsWith("\n") || text === "" ? "" : "\n"}${entry}`);
  return `${text === undefined ? "wrote" : "added .syncbook/ to"} ${relative(process.cwd(), file) || file}`;
}

/** The repository a folder is in: the nearest folder up that holds `.git`, else the folder itself. */
function repositoryOf(folder: string): string {
  for (let d = folder; ;) {
    if (existsSync(join(d, ".git"))) return d;
    const up = dirname(d);
    if (up === d) return folder;
    d = up;
  }
}

const inside = (root: string, f: string): boolean => f.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);

/**
 * Where the modeline points, so that it works in a teammate's clone too: a schema in the
 * runbook's own repository (this syncbook's checkout, or its `node_modules/syncbook`), by a path
 * relative to the runbook; else a copy beside the runbook (`runbook.schema.json`, to commit),
 * never a path into this machine's folders outside the repository.
 */
function schemaFor(folder: string): { ref: string; copied?: string } | undefined {
  const root = repositoryOf(folder);
  const rel = (f: string): string => relative(folder, f).split(sep).join("/");
  for (let d = folder; inside(root, d) || d === root; d = dirname(d)) {
    const dep = join(d, "node_modules", "syncbook", "schemas", "runbook.schema.json");
    if (existsSync(dep)) return { ref: rel(dep) };
    if (d === root) break;
  }
  const schema = installedSchema();
  if (!schema) return undefined;
  if (inside(root, schema)) return { ref: rel(schema) };
  const copy = join(folder, "runbook.schema.json");
  if (!existsSync(copy)) {
    copyFileSync(schema, copy);
    return { ref: "runbook.schema.json", copied: copy };
  }
  return { ref: "runbook.schema.json" };
}

export function main(file: string, opts: { force?: boolean }): number {
  if (existsSync(file) && !opts.force)
    throw new UserError(`${file} already exists`, {
      hint: "Pass --force to overwrite it, or name another file.",
      exitCode: ExitCode.usage,
    });
  const name = basename(file, extname(file)).replace(/[^A-Za-z0-9_.-]+/g, "-") || "cutover";
  const folder = dirname(resolve(file));
  let made: string | undefined;
  let schema: ReturnType<typeof schemaFor>;
  try {
    // `syncbook init runbooks/x.yaml` in a fresh repository: the folder is made, as `git` or `mkdir -p` would
    made = mkdirSync(folder, { recursive: true });
    schema = schemaFor(folder);
    writeFileSync(file, schema ? starterRunbook(name, schema.ref) : starterRunbook(name));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code !== "string") throw err;
    throw new UserError(`cannot write ${file}: ${code}`, {
      hint:
        code === "EISDIR"
          ? "That is a folder: name the file to write, e.g. runbooks/cutover.yaml."
          : code === "ENOTDIR" || code === "EEXIST"
            ? "A part of its folder path is a file: name a file in a folder."
            : "Check the folder's permissions and free space.",
      exitCode: ExitCode.usage,
    });
  }
  const ignored = ignoreJournals(folder);
  const show = (f: string): string => relative(process.cwd(), f) || f;
  process.stdout.write(
    `${made ? `made ${show(made)}\n` : ""}wrote ${file}${schema?.copied ? `\nwrote ${show(schema.copied)} (the runbook format, for your editor's \`$schema\` line: commit it; \`syncbook schema > ${show(schema.copied)}\` refreshes it)` : ""}${ignored ? `\n${ignored} (journals stay out of git)` : ""}\nnext: ${lintCommand(file)} && ${shellCommand(["syncbook", "rehearse", file])}\n`,
  );
  return ExitCode.ok;
}
