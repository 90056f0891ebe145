/** `syncbook init [file]`: write a commented starter runbook that lints clean. */
import { existsSync, writeFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import { starterRunbook } from "../init/starter.js";

export function main(file: string, opts: { force?: boolean }): number {
  if (existsSync(file) && !opts.force)
    throw new UserError(`${file} already exists`, {
      hint: "Pass --force to overwrite it, or name another file.",
      exitCode: ExitCode.usage,
    });
  const name = basename(file, extname(file)).replace(/[^A-Za-z0-9_.-]+/g, "-") || "cutover";
  try {
    writeFileSync(file, starterRunbook(name));
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
  process.stdout.write(`wrote ${file}\nnext: syncbook lint ${file} && syncbook rehearse ${file}\n`);
  return ExitCode.ok;
}
