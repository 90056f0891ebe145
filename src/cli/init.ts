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
  writeFileSync(file, starterRunbook(name));
  process.stdout.write(`wrote ${file}\nnext: syncbook lint ${file} && syncbook rehearse ${file}\n`);
  return ExitCode.ok;
}
