#!/usr/bin/env node
/**
 * Command-line entry. Each command's work lives in `src/cli/<command>.ts` and is imported
 * lazily, so `syncbook lint` never pays for undici, listr2 or the simulator.
 */
import { writeOut } from "./write-out.js";
import { Command, CommanderError, Option } from "commander";
import { UserError, ExitCode, errorMessage } from "./errors.js";
import { terminalText } from "./text.js";
import { SYNCBOOK_VERSION } from "./version.js";
import { formatDuration } from "./runbook/duration.js";
import { CURRENT_SERVICE_VERSION } from "./sim/versions.js";
import { showCursor } from "./ui/cursor.js";
import type { LintCliOptions } from "./cli/lint.js";
import type { ReportCliOptions } from "./cli/report.js";
import type { SimCliOptions } from "./cli/sim.js";
import type { ExecuteFlags } from "./cli/execute.js";
import type { RehearseFlags } from "./cli/rehearse.js";
import type { PreflightCliOptions } from "./cli/preflight.js";
import type { StatusCliOptions } from "./cli/status.js";
import type { WatchCliOptions } from "./cli/watch.js";
import type { WaveLintOptions, WavePlanOptions, WaveRehearseOptions, WaveReportOptions } from "./cli/wave.js";

const program = new Command("syncbook")
  .description("Cluster-to-cluster sync cutovers as checked-in, linted, rehearsed YAML runbooks")
  .version(SYNCBOOK_VERSION)
  // help and the version: a reader gone (`--help | head`) ends them quietly (src/write-out.ts)
  .configureOutput({ writeOut })
  .showHelpAfterError()
  .exitOverride();

// The exit code table (README "Exit codes"), shown by `--help` of the root and of lint, run and rehearse.
const EXIT_CODES = `
Exit codes:
  0    done (lint: no errors and no more warnings than --max-warnings; rehearse: a safe verdict)
  1    failed: a step failed, lint found errors or too many warnings, or the rehearsal was unsafe
  2    invalid runbook or usage: nothing was sent
  3    stopped by an interlock: the refused command was not sent (run, rehearse)
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP): undo ran if commit was not sent
`;
program.addHelpText("after", EXIT_CODES);

// `--max-warnings` (lint, preflight): anything not a whole number becomes NaN, which main refuses with a hint
const MAX_WARNINGS_HELP = "fail when there are more warnings than this (-1: no limit)";
const wholeNumber = (v: string): number => (/^-?\d+$/.test(v.trim()) ? Number(v) : Number.NaN);

// Used by every command: `act(() => import("./cli/x.js"), (m) => m.main(...))`.
async function act<M>(load: () => Promise<M>, run: (m: M) => number | Promise<number>): Promise<void> {
  showCursor();
  process.exitCode = await run(await load());
}

// --- lint -------------------------------------------------------------------------------
program
  .command("lint")
  .description("Dry-run check of runbooks: schema, spec rules, positions and fix hints")
  .argument("[paths...]", "runbook files or folders (folders are searched recursively for *.yaml / *.yml)")
  .addOption(
    new Option("--format <format>", "output format (sarif: SARIF 2.1.0 for GitHub code scanning)")
      .choices(["pretty", "json", "github", "junit", "sarif"])
      .default("pretty"),
  )
  .option("--max-warnings <n>", MAX_WARNINGS_HELP, wholeNumber)
  .option("--list-rules", "print every rule: id, severity, what it finds")
  .option(
    "--load-plugins",
    "import the runbooks' own plugins (`plugins:`) to check their options: their top-level code runs (without it, lint runs no plugin code and leaves those checks to the run)",
  )
  .addHelpText("after", EXIT_CODES)
  .action((paths: string[], opts: LintCliOptions) =>
    act(
      () => import("./cli/lint.js"),
      (m) => m.main(paths, opts),
    ),
  );

// --- report -----------------------------------------------------------------------------
program
  .command("report")
  .description("Rebuild a run's report (report.json, junit.xml, report.html) from its journal")
  .argument("[journal]", "the run's journal: a JSON-lines file of run events (or a folder: its newest journal)")
  .option("--out <dir>", "where to write the three files (default: next to the journal, <name>.report/)")
  .option("--quiet", "print nothing but warnings")
  .option(
    "--otlp <file>",
    "instead: write the run's trace as OTLP JSON (an ExportTraceServiceRequest a collector's /v1/traces takes)",
  )
  .option(
    "--wave <dir>",
    "instead: the wave report (wave.json, junit.xml, wave.html) from the runbooks' reports and journals in this folder (the jobs' artifacts); --out defaults to it",
  )
  .option("--wave-file <file>", "with --wave: the wave file, for the order and the runbooks with nothing uploaded")
  .action((journal: string | undefined, opts: ReportCliOptions & WaveReportOptions & { wave?: string }) => {
    if (opts.wave !== undefined)
      return act(
        () => import("./cli/wave.js"),
        (m) =>
          journal !== undefined
            ? usageError("report --wave takes no journal")
            : m.reportMain(opts.wave as string, opts),
      );
    if (journal === undefined)
      return act(
        () => Promise.resolve(undefined),
        () => usageError("report needs a journal (or --wave <dir>)"),
      );
    return act(
      () => import("./cli/report.js"),
      (m) => m.main(journal, opts),
    );
  });

// --- wave -------------------------------------------------------------------------------
// many cutovers on an existing engine (docs/waves.md): syncbook plans, lints, rehearses and reports
const wave = program
  .command("wave")
  .description(
    "Many cutovers planned together for GitHub Actions or Argo Workflows: lint, plan, rehearse (docs/waves.md)",
  );
wave
  .command("lint")
  .description(
    "Lint a wave: every runbook, plus unknown or duplicate names, `after` cycles, two runbooks on one instance",
  )
  .argument("<wave>", "the wave file (YAML, `wave: 1`)")
  .addOption(
    new Option("--format <format>", "output format (as lint's)")
      .choices(["pretty", "json", "github", "junit", "sarif"])
      .default("pretty"),
  )
  .option("--max-warnings <n>", "fail when there are more warnings than this (-1: no limit)", (v) =>
    /^-?\d+$/.test(v.trim()) ? Number(v) : Number.NaN,
  )
  .addHelpText("after", EXIT_CODES)
  .action((file: string, opts: WaveLintOptions) =>
    act(
      () => import("./cli/wave.js"),
      (m) => m.lintMain(file, opts),
    ),
  );
wave
  .command("plan")
  .description("Print the wave for its engine: a GitHub Actions matrix (JSON) or an Argo Workflow (YAML)")
  .argument("<wave>", "the wave file (YAML, `wave: 1`)")
  .addOption(
    new Option("--format <format>", "github: {include:[{name,runbook,stage}]}; argo: a Workflow")
      .choices(["github", "argo", "json"])
      .default("github"),
  )
  .option("--stage <n>", "with --format github: only this stage's runbooks (a job per stage)")
  .action((file: string, opts: WavePlanOptions) =>
    act(
      () => import("./cli/wave.js"),
      (m) => m.planMain(file, opts),
    ),
  );
wave
  .command("rehearse")
  .description(
    "Rehearse every runbook of a wave, each against its own simulated fleet, at most maxParallel at once, in `after` order",
  )
  .argument("<wave>", "the wave file (YAML, `wave: 1`)")
  .option("--report <dir>", "write the wave report (wave.html, wave.json, junit.xml) and each runbook's report there")
  .option("--time-scale <x>", "simulated seconds per wall second", "50")
  .option("--max-parallel <n>", "rehearse at most this many at once (default: the wave's maxParallel)")
  .addHelpText("after", EXIT_CODES)
  .action((file: string, opts: WaveRehearseOptions) =>
    act(
      () => import("./cli/wave.js"),
      (m) => m.rehearseMain(file, opts),
    ),
  );

// --- schema / init ----------------------------------------------------------------------
program
  .command("schema")
  .description("Print the runbook JSON Schema")
  .action(() =>
    act(
      () => import("./cli/schema.js"),
      (m) => m.main(),
    ),
  );
program
  .command("init")
  .description("Write a commented starter runbook that lints clean")
  .argument("[file]", "where to write it", "runbook.yaml")
  .option("--force", "overwrite an existing file")
  .action((file: string, opts: { force?: boolean }) =>
    act(
      () => import("./cli/init.js"),
      (m) => m.main(file, opts),
    ),
  );

// --- sim --------------------------------------------------------------------------------
program
  .command("sim")
  .description("Run a simulated fleet of sync service instances and a verifier on loopback (until Ctrl-C)")
  .addOption(new Option("--instances <n>", "number of sync service instances").default("1"))
  .addOption(
    new Option("--port <port>", "port of instance 0; instance i listens on port + i (0: free ports)").default("27182"),
  )
  .addOption(new Option("--verifier-port <port>", "port of the verifier (0: a free port)").default("27020"))
  .addOption(new Option("--host <host>", "interface to bind").default("127.0.0.1"))
  .addOption(
    new Option("--source <name:topology>", "a cluster setting: name and replicaSet|sharded").default(
      "cluster0:replicaSet",
    ),
  )
  .addOption(new Option("--destination <name:topology>", "the other cluster setting").default("cluster1:sharded"))
  .addOption(new Option("--data <size>", "data to copy, split across instances (e.g. 5GiB)").default("5GiB"))
  .addOption(new Option("--time-scale <x>", "simulated seconds per wall second (1: real time)").default("50"))
  .addOption(
    new Option(
      "--fault <spec...>",
      "faults: kind[=value][,after=DUR][,for=DUR][,on=COMMAND][@scope[/endpoint]], e.g. http500=0.2@1/progress, " +
        "down=1,after=30s,for=60s, lag-floor=30, drop-after-effect@1/commit, late-effect=30s@0/commit, " +
        "identity-change=direction,on=commit@1, huge-progress=5MiB, negative-lag=3, insufficient-disk-space, " +
        "writes-off-slow=10s, writes-off-refused, verifier-progress-error, verifier-exit,after=60s " +
        "(all kinds: src/sim/faults.ts)",
    ),
  )
  .addOption(new Option("--seed <n>", "seed of the fault PRNG").default("1"))
  .addOption(
    new Option(
      "--service-version <v>",
      "service version to emulate: its progress fields, start fields and values, states and refusals (default: the current release)",
    ).default(CURRENT_SERVICE_VERSION),
  )
  .addOption(
    new Option(
      "--data-set <spec>",
      "collections, and how many have unique, TTL or hidden indexes (their metadata differs until commit)",
    ).default("collections=12,unique=2,ttl=1,hidden=1"),
  )
  .addOption(
    new Option(
      "--verifier-release <v>",
      "migration verifier release to emulate: v0.2.0 stands for v0.1.6 to v0.2.0 (progress answers an empty HTTP 500 until the first check)",
    )
      .choices(["v0.2.1", "v0.2.0"])
      .default("v0.2.1"),
  )
  .addOption(
    new Option(
      "--verifier-namespaces <which>",
      "the verifier's namespaces: all (started with --verifyAll), none (started without --verifyAll or --srcNamespace: its generation 0 has no task and compares nothing)",
    )
      .choices(["all", "none"])
      .default("all"),
  )
  .addOption(
    new Option(
      "--check-filter-matches <which>",
      "whether the simulated documents match a check's filter (one with a condition): all, or none (its document tasks compare 0 documents)",
    )
      .choices(["all", "none"])
      .default("all"),
  )
  .addOption(
    new Option(
      "--verifier-ddl-handling <how>",
      "the verifier's --ddlHandling: failAll (source DDL during a verification, POST /sim/ddl, makes it exit) or warnMost (create, modify, index and shard-key DDL is counted in srcChangeStats.eventCounts and skipped, not verified)",
    )
      .choices(["failAll", "warnMost"])
      .default("failAll"),
  )
  .addOption(new Option("--grace <ms>", "wall ms within which a command must reach every instance").default("2000"))
  .addOption(
    new Option(
      "--runbook <file>",
      "take the fleet's shape from a runbook: its instance count, clusters (topology, shard count, server version) and service version, in place of --instances, --source, --destination and --service-version",
    ),
  )
  .action((opts: SimCliOptions) =>
    act(
      () => import("./cli/sim.js"),
      (m) => m.main(opts),
    ),
  );

// --- run / rehearse ---------------------------------------------------------------------
const collect = (v: string, prev: string[] = []): string[] => [...prev, v];
function runOptions(cmd: Command): Command {
  return cmd
    .option("--step", "ask before each step: run, skip, run the rest, abort (needs a terminal)")
    .option("--from <id>", "start at this step (earlier steps are skipped; interlocks still apply)")
    .option("--to <id>", "stop after this step")
    .option(
      "--var <name=value>",
      "set a runbook variable (repeatable): a number and true/false keep their type; a value in double quotes is text (--var 'tenant=\"007\"')",
      collect,
    )
    .option("--yes", "answer every confirm step with yes (never lifts an interlock)")
    .option(
      "--force <check>",
      "skip a named interlock check (repeatable): fleet-idle, can-commit, writes-stopped, no-errors, fleet-state, fleet-identity, hook-processes, stopped-in-commit",
      collect,
    )
    .addOption(
      new Option(
        "--renderer <name>",
        "output: default (task list on a terminal), simple (a line per event), silent, json (one JSON object per line on stdout for every event; all else on stderr)",
      ).choices(["default", "simple", "silent", "json"]),
    )
    .option("--report <dir>", "write report.json, junit.xml and report.html there")
    .addHelpText("after", EXIT_CODES);
}
runOptions(
  program
    .command("run")
    .description("Run a runbook against the fleet: lint, then every step, with interlocks, a journal and a live view")
    .argument("<runbook>", "the runbook (YAML)")
    .option("--dry-run", "lint, then print every request in order; nothing is sent")
    .option("--probe", "with --dry-run: read progress (GET only) to check that the fleet's states allow the plan")
    .option(
      "--resume [journal]",
      "continue an interrupted run from its journal (never sends start or commit twice); name a journal file to pick one (default: the one `syncbook status` names)",
    )
    .option(
      "--abort [journal]",
      "call the cutover off: run the undos the journal still owes (writes back on), send nothing to the service, record the run as aborted; refused once commit may have been sent",
    )
    .option(
      "--only <instances>",
      "with --from: send the command steps to these instances only (names, comma-separated), to complete a command the others already have; interlocks apply, and it asks first (or --yes)",
    )
    .option(
      "--allow-changed-runbook",
      "with --resume, or --from a step after a committed cutover's commit: accept a runbook that changed since the journal was written (with --resume or --from, also --var values other than the cutover ran with, for the steps still to run)",
    )
    .option(
      "--new-cutover",
      "start a new cutover although the runbook's last one did not finish (without it such a run is refused; a --from run continues the unfinished one)",
    )
    .option("--journal-dir <dir>", "where journals are kept (default: .syncbook next to the runbook)"),
).action((file: string, opts: ExecuteFlags) =>
  act(
    () => import("./cli/run.js"),
    (m) => m.main(file, opts),
  ),
);
runOptions(
  program
    .command("rehearse")
    .description("Rehearse a runbook against an in-process simulated fleet and print a verdict")
    .argument("<runbook>", "the runbook (YAML)")
    .option(
      "--keep-hooks",
      "run the runbook's own hooks and plugin steps (stopWrites too, instead of the simulator's writes switch); notifications are still never sent: each prints a stand-in line",
    )
    .option("--time-scale <x>", "simulated seconds per wall second", "50")
    .option("--data <size>", "data to copy (e.g. 2GiB)")
    .option("--fault <spec>", "a simulator fault (repeatable), e.g. http500=0.2 or progress-down-after-resume", collect)
    .option("--seed <n>", "seed of the simulator's fault PRNG")
    .option(
      "--namespaces <file>",
      "copy the shape of the real data: the output of `syncbook preflight <runbook> --list-namespaces --format json`",
    )
    .option(
      "--trace",
      "export the rehearsal's trace when the OTLP variables are set (off by default: a rehearsal is not the cutover)",
    ),
).action((file: string, opts: RehearseFlags) =>
  act(
    () => import("./cli/rehearse.js"),
    (m) => m.main(file, opts),
  ),
);

// --- status -----------------------------------------------------------------------------
program
  .command("status")
  .description(
    "Show the fleet, the verifier and the journal now (read-only): states, canCommit, lag, copy, coordinator, identity, verifier counters, the journal --resume would use",
  )
  .argument("<runbook>", "the runbook (YAML): its instances, verifier and journal folder")
  .option("--json", "print the status as one JSON object (with --watch: one per line)")
  .option("--watch [seconds]", "refresh every few seconds (default 2) until Ctrl-C")
  .option("--journal-dir <dir>", "where journals are kept (default: .syncbook next to the runbook)")
  .addHelpText(
    "after",
    "\nExit codes: 0 every instance answered and they are one fleet, 1 an instance did not answer or they are not one fleet, 2 usage or a runbook that does not load",
  )
  .action((file: string, opts: StatusCliOptions) =>
    act(
      () => import("./cli/status.js"),
      (m) => m.main(file, opts),
    ),
  );

// --- watch ------------------------------------------------------------------------------
// a read-only live page of the cutover for the bridge call: its own process, GET only
program
  .command("watch")
  .description(
    "Serve a read-only live page of the cutover (/, /state.json, /events): steps, fleet, verifier, the write-stop window's clock, and the runner's death at once",
  )
  .argument("<target>", "the runbook (YAML), or its journal folder (.syncbook/<runbook name>)")
  .option(
    "--listen <host:port>",
    "where to listen (default 127.0.0.1 on a free port; another address needs --token-file)",
  )
  .option(
    "--token-file <file>",
    "a file holding the token the page asks for (required on an address other than loopback)",
  )
  .option("--journal-dir <dir>", "where journals are kept (default: .syncbook next to the runbook)")
  .option("--no-live", "read the journal only: do not read the fleet's and the verifier's progress")
  .option(
    "--no-notify",
    "do not tell the runbook's notifiers when the runner of an unfinished cutover is gone (the dead-man's switch)",
  )
  .addHelpText(
    "after",
    "\nRead-only: it reads the journal folder and GETs progress (at most once a second); it sends no command. Given the runbook, when the runner of an unfinished cutover is gone it tells the runbook's notifiers once (entries on runner.lost, run.failed or run.finished), and writes that it did beside the journal (watch-told.*.json).\nExit codes: 0 stopped by Ctrl-C, 2 usage (bad target, bad --listen, no token file off loopback, port in use)",
  )
  .action((target: string, opts: WatchCliOptions) =>
    act(
      () => import("./cli/watch.js"),
      (m) => m.main(target, opts),
    ),
  );

// --- preflight ----------------------------------------------------------------------------
// the runbook against the real clusters: read-only, lint's formats
program
  .command("preflight")
  .description(
    "Check a runbook against its real clusters (read-only, with the MongoDB driver): topology, versions, namespaces, indexes, oplog window, disk, balancer, zones, roles",
  )
  .argument(
    "<runbook>",
    "the runbook (YAML); each cluster's `uri` names the environment variable holding its connection string",
  )
  .addOption(
    new Option("--format <format>", "output format (as lint's; sarif for GitHub code scanning)")
      .choices(["pretty", "json", "github", "junit", "sarif"])
      .default("pretty"),
  )
  .option(
    "--list-namespaces",
    "also print the synced namespaces with documents and bytes (pretty, or json for a rehearsal)",
  )
  .option(
    "--connect-timeout <duration>",
    "upper bound for reaching each cluster, e.g. 30s (default: preflight.connectTimeout, else 10s)",
  )
  .option("--max-warnings <n>", MAX_WARNINGS_HELP, wholeNumber)
  .option(
    "--copy-rate <rate>",
    "expected copy rate for the oplog window check, e.g. 50MB/s (default: preflight.copyRate, else 20MB/s)",
  )
  .action((file: string, opts: PreflightCliOptions) =>
    act(
      () => import("./cli/preflight.js"),
      (m) => m.main(file, opts),
    ),
  );

function usageError(message: string): never {
  throw new UserError(message, { hint: "See syncbook report --help.", exitCode: ExitCode.usage });
}

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
      // a message quotes runbooks, services and hooks: their control characters shown, never obeyed
      process.stderr.write(`syncbook: ${terminalText(err.message, { lines: true })}\n`);
      if (err.hint) process.stderr.write(`  hint: ${terminalText(err.hint, { lines: true })}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    // A bug, not a user error: still no stack unless asked for.
    const message = errorMessage(err);
    process.stderr.write(`syncbook: internal error: ${terminalText(message, { lines: true })}\n`);
    if (process.env.SYNCBOOK_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? ""}\n`);
    else process.stderr.write("  hint: set SYNCBOOK_DEBUG=1 for details, and please report it\n");
    process.exitCode = ExitCode.failed;
  }
}

// A command whose work never settles (a plugin awaiting a promise nothing resolves) leaves Node
// with nothing to wait for, and it exits 0 as if all went well: `syncbook run … && next` would
// go on. Such an exit is a failure, and says so.
let settled = false;
process.on("exit", (code) => {
  if (settled || code !== 0) return;
  process.stderr.write(
    "syncbook: internal error: the command stopped before it finished (something it awaited can never complete, e.g. a plugin's promise)\n",
  );
  process.stderr.write("  hint: check the plugins this runbook loads; if none is to blame, please report it\n");
  process.exitCode = ExitCode.failed;
});
// Every failure path ends the command promptly: once it has settled, whatever it left running (a
// plugin's interval, a connection nobody closed) must not keep a CI job or an operator's shell
// waiting. Unref'd, so a process with nothing left exits at once as usual.
const LINGER_MS = 10_000;
void entry().finally(() => {
  settled = true;
  setTimeout(() => {
    process.stderr.write(
      `syncbook: the command finished ${formatDuration(LINGER_MS)} ago but something it started is still running (a plugin's timer or connection?): exiting\n`,
    );
    process.exit();
  }, LINGER_MS).unref();
});
