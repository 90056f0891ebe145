/**
 * `syncbook init [file]`: write a commented starter runbook that lints clean. Its `$schema`
 * modeline points at the schema file of the syncbook that wrote it (an editor opens a path, and
 * a URL of a repository that may not be reachable helps no one), and `.syncbook/` (journals, which
 * hold the run's requests) goes into the folder's `.gitignore`.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { ExitCode, UserError } from "../errors.js";
import { starterRunbook } from "../init/starter.js";

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

export function main(file: string, opts: { force?: boolean }): number {
  if (existsSync(file) && !opts.force)
    throw new UserError(`${file} already exists`, {
      hint: "Pass --force to overwrite it, or name another file.",
      exitCode: ExitCode.usage,
    });
  const name = basename(file, extname(file)).replace(/[^A-Za-z0-9_.-]+/g, "-") || "cutover";
  const folder = dirname(resolve(file));
  const schema = installedSchema();
  const ref = schema ? relative(folder, schema).split(sep).join("/") : undefined;
  try {
    writeFileSync(file, ref ? starterRunbook(name, ref) : starterRunbook(name));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code !== "string") throw err;
    throw new UserError(`cannot write ${file}: ${code}`, {
      hint:
        code === "ENOENT"
          ? "Its folder does not exist: create it first, or name a file in an existing folder."
          : code === "EISDIR"
            ? "That is a folder: name the file to write, e.g. runbooks/cutover.yaml."
            : "Check the folder's permissions and free space.",
      exitCode: ExitCode.usage,
    });
  }
  const ignored = ignoreJournals(folder);
  process.stdout.write(
    `wrote ${file}${ignored ? `\n${ignored} (journals stay out of git)` : ""}\nnext: syncbook lint ${file} && syncbook rehearse ${file}\n`,
  );
  return ExitCode.ok;
}
