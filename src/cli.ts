#!/usr/bin/env node
/**
 * Command-line entry. Each command's work lives in `src/cli/<command>.ts` and is imported
 * lazily, so `syncbook lint` never pays for undici, listr2 or the simulator.
 * Edit only your own command's block here (targeted edits, never rewrite this file).
 */
import { Command, CommanderError, Option } from "commander";
import { UserError, ExitCode } from "./errors.js";

const program = new Command("syncbook")
  .description("Cluster-to-cluster sync cutovers as checked-in, linted, rehearsed YAML runbooks")
  .version("0.1.0")
  .showHelpAfterError()
  .exitOverride();

// Used by every command: `act(() => import("./cli/x.js"), (m) => m.main(...))`.
async function act<M>(load: () => Promise<M>, run: (m: M) => Promise<number>): Promise<void> {
  process.exitCode = await run(await load());
}

// --- lint -------------------------------------------------------------------------------
program
  .command("lint")
  .description("Dry-run check of runbooks: schema, spec rules, positions and fix hints")
  .argument("<paths...>", "runbook files or folders (searched for *.yaml / *.yml)")
  .addOption(new Option("--format <format>", "output format").choices(["pretty", "json", "github", "junit"]).default("pretty"))
  .option("--max-warnings <n>", "fail when there are more warnings than this", (v) => Number.parseInt(v, 10))
  .action((paths: string[], opts) => act(() => import("./cli/lint.js"), (m) => m.main(paths, opts)));

// --- schema / init ----------------------------------------------------------------------
program
  .command("schema")
  .description("Print the runbook JSON Schema")
  .action(() => act(() => import("./cli/schema.js"), (m) => m.main()));
program
  .command("init")
  .description("Write a commented starter runbook that lints clean")
  .argument("[file]", "where to write it", "runbook.yaml")
  .option("--force", "overwrite an existing file")
  .action((file: string, opts) => act(() => import("./cli/init.js"), (m) => m.main(file, opts)));

// --- sim --------------------------------------------------------------------------------
// (owned by the simulator work)

// --- run / rehearse ---------------------------------------------------------------------
// (owned by the runner work)

async function entry(): Promise<void> {
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit 0; usage errors 2 (commander already printed the message).
      process.exitCode = err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
      return;
    }
    if (err instanceof UserError) {
      process.stderr.write(`syncbook: ${err.message}\n`);
      if (err.hint) process.stderr.write(`  hint: ${err.hint}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    // A bug, not a user error: still no stack unless asked for.
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`syncbook: internal error: ${message}\n`);
    if (process.env.SYNCBOOK_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? ""}\n`);
    else process.stderr.write("  hint: set SYNCBOOK_DEBUG=1 for details, and please report it\n");
    process.exitCode = ExitCode.failed;
  }
}

await entry();
