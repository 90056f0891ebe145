/**
 * `syncbook run <runbook>`: the maintenance window. Lints first (an invalid runbook never
 * reaches the fleet), journals every event under .syncbook/<runbook>/ (one runner per journal,
 * by lock), shows the live task list, and exits 0 done, 1 a step failed, 2 invalid runbook or
 * usage, 3 stopped by an interlock (the refused command was not sent), 130 interrupted.
 */
import { writeSync } from "node:fs";
import { resolve } from "node:path";
import { codeFrame, plural, shellCommand } from "../text.js";
import { nextAfterFailedUndo } from "../ui/format.js";
import { writesLeftSentence } from "../writes-words.js";
import { stoppedInCommitWords } from "../fleet/index.js";
import {
  CALLED_OFF_RESUME,
  MASKED_VAR_NOTE,
  RUNBOOK_CHANGED_NOTE,
  runbookArg,
  runTarget,
  secretVarsLeftOut,
  STOPPED_IN_COMMIT_AGAIN,
  STOPPED_IN_COMMIT_ONLY_IF,
  STOPPED_IN_COMMIT_RESTART,
  STOPPED_IN_COMMIT_RESTART_WORDS,
  STOPPED_IN_COMMIT_RESUME,
  wayOnVarsAfter,
  wayOnVarsKept,
} from "../next-run.js";
import { formatDuration } from "../runbook/duration.js";
import { DRAIN_MS } from "../plugin/deliveries.js";
import { ExitCode, UserError, errorMessage, redactedError } from "../errors.js";
import type { PluginRegistry } from "../plugin/index.js";
import { actsOn, type CriticalListener, type Emit, type RunEvent, type RunListener } from "../events.js";
import type { ResumePlan } from "../run/runner.js";
import type { EarlierHooksGate } from "../run/orphans.js";
import type { WritesProbe } from "../steps/index.js";
import type { LoadedRunbook } from "../runbook/index.js";
import type { ClaimedStdout, Ui } from "../ui/index.js";
import type { CommandSummary } from "./step-summary.js";
import type { FleetLock, UnjudgedJournal } from "../journal/index.js";
import {
  interruptOnSignals,
  keepRunningWithoutOutput,
  loadForRun,
  loadPluginsFor,
  parseForce,
  printPlan,
  printPlanJson,
  probe,
  reportOutput,
  traceOutput,
  stderr,
  stdout,
  type ExecuteFlags,
} from "./execute.js";

export async function main(file: string, flags: ExecuteFlags): Promise<number> {
  // a cutover goes on when its terminal or pipe goes away (every line is in the journal)
  keepRunningWithoutOutput();
  // GitHub Actions job summary (src/cli/step-summary.ts), when GITHUB_STEP_SUMMARY is set
  const summary = process.env.GITHUB_STEP_SUMMARY
    ? (await import("./step-summary.js")).commandSummary("run", file)
    : undefined;
  // --renderer json: stdout is the JSON lines' alone from here on (src/ui/json.ts)
  const claimed =
    flags.renderer === "json"
      ? (await import("../ui/json.js")).claimStdout(process.stdout, process.stderr, { quiet: flags.dryRun === true })
      : undefined;
  try {
    return await runMain(file, flags, claimed, summary);
  } catch (err) {
    summary?.failed(failureText(err), err instanceof UserError ? err.exitCode : ExitCode.failed);
    throw err;
  } finally {
    claimed?.release();
  }
}

/** A command's error as the summary says it: the message and its hint. */
export function failureText(err: unknown): string {
  return err instanceof UserError && err.hint ? `${err.message}\nhint: ${err.hint}` : errorMessage(err);
}

async function runMain(
  file: string,
  flags: ExecuteFlags,
  json?: ClaimedStdout,
  summary?: CommandSummary,
): Promise<number> {
  if (flags.probe && !flags.dryRun)
    throw new UserError("--probe goes with --dry-run", {
      hint: "syncbook run x.yaml --dry-run --probe",
      exitCode: ExitCode.usage,
    });
  if (flags.resume && (flags.from || flags.to))
    throw new UserError("--resume decides where to continue: it does not take --from or --to", {
      hint: "Drop --from/--to.",
      exitCode: ExitCode.usage,
    });
  if (flags.resume && flags.only)
    throw new UserError("--resume decides which instances a command still has to reach: it does not take --only", {
      hint: "Drop --only: --resume completes a command the journal shows reached only part of the fleet.",
      exitCode: ExitCode.usage,
    });
  if (flags.abort && (flags.resume || flags.from || flags.to || flags.only || flags.step || flags.dryRun))
    throw new UserError(
      "--abort runs the undos the journal still owes and nothing else: it takes none of --resume, --from, --to, --only, --step, --dry-run",
      {
        // the --var values as typed are not repeated (one may be a secret, which no output shows)
        hint: `syncbook run ${runbookArg({ file, journalDir: flags.journalDir }, ["--abort"])}${flags.var?.length ? ", with the --var values you gave (it refuses other values than the cutover's, naming them)" : ""}`,
        exitCode: ExitCode.usage,
      },
    );
  if (flags.newCutover && (flags.resume || flags.abort))
    throw new UserError("--new-cutover starts a new cutover: --resume and --abort continue the last one", {
      hint: "Drop --new-cutover to continue the last cutover, or drop --resume/--abort to start a new one.",
      exitCode: ExitCode.usage,
    });
  if (flags.step && !(process.stdin.isTTY && process.stderr.isTTY))
    throw new UserError("--step asks before every step and needs a terminal", {
      hint: "Run it in a terminal, or without --step.",
      exitCode: ExitCode.usage,
    });
  const force = await parseForce(flags.force);
  const loaded = await loadForRun(file, flags, stderr);
  // what it prints names journals, whose folder is made of the runbook's name (which `${env.*}`
  // may fill) or of a --journal-dir: through the runbook's redactor, as every other output
  try {
    return await runLoaded(loaded, flags, force, json, summary);
  } catch (err) {
    throw redactedError(err, loaded.redact);
  }
}

async function runLoaded(
  loaded: LoadedRunbook,
  flags: ExecuteFlags,
  force: string[],
  json?: ClaimedStdout,
  summary?: CommandSummary,
): Promise<number> {
  const say = (s: string): void => stderr(loaded.redact(s));
  const registry = await loadPluginsFor(loaded, say);
  // every usage error before anything is opened or sent: a typo never leaves a journal behind
  const { instanceTargets, onlyAsOffered, planSteps, stepRange } = await import("../run/plan.js");
  const range = loaded.runbook ? stepRange(planSteps(loaded.runbook), flags.from, flags.to) : undefined;
  const only =
    flags.only && loaded.runbook ? instanceTargets(loaded.runbook, [flags.only], flags.from, flags.to) : undefined;
  // the --only every way on repeats: never a password it was typed with
  const onlyArg =
    flags.only && only && loaded.runbook ? onlyAsOffered(loaded.runbook, flags.only, only, loaded.redact) : undefined;
  if (flags.dryRun) {
    // no run, so no run events: the plan itself is the one JSON line (README "Events as JSON lines")
    if (json) await printPlanJson(loaded, json.write, range);
    else await printPlan(loaded, stdout, range);
    if (summary && loaded.runbook) {
      const { planSteps, planRequests } = await import("../run/plan.js");
      const steps = planSteps(loaded.runbook);
      const reqs = planRequests(loaded.runbook, steps, loaded.redact);
      summary.plan(
        loaded.runbook.name,
        steps.map((s) => ({
          index: s.index,
          id: s.id,
          kind: s.kind,
          title: loaded.redact(s.title),
          requests: reqs.filter((r) => r.step === s.id).length,
          skipped: s.step.when === false,
        })),
      );
    }
    if (!flags.probe) return ExitCode.ok;
    const problems = await probe(loaded, json ? say : stdout);
    for (const p of problems) say(`probe: ${p}`);
    return problems.length ? ExitCode.failed : ExitCode.ok;
  }
  const runbook = loaded.runbook;
  if (!runbook) return ExitCode.usage;

  const { openJournal, asListener, acquireLock, acquireFleetLock, journalDirFor, lockHolderText, tookOverLines } =
    await import("../journal/index.js");
  // next to the runbook by default, not in the current directory: a resume after a lost SSH
  // session finds the journal (and the lock) wherever the operator's new shell starts; from real
  // paths, so a symlink to the runbook meets the same lock
  const dir = journalDirFor(loaded.file, runbook.name, flags.journalDir);
  // the refusal names the command that shows where the holder's run stopped and the way on
  const status = `syncbook status ${runbookArg(loaded)}`;
  const lock = acquireLock(dir, { status });
  if (lock.staleFrom) say(`journal: took over a stale lock (left by ${lockHolderText(lock.staleFrom)})`);
  // and one runner per instance, whatever the runbook's path: two checkouts (or a hard link) of
  // one runbook have two journal folders, but one fleet (src/journal/fleet-lock.ts)
  let fleetLock: FleetLock | undefined;
  try {
    const { instancesOf } = await import("../runbook/types.js");
    fleetLock = acquireFleetLock(
      [
        ...instancesOf(runbook).map((i) => ({
          url: i.url,
          label: loaded.redact(i.name !== undefined ? `${i.name} (${i.url})` : i.url),
        })),
        // one verification per verifier process: two cutovers never share one (fleet-lock.ts);
        // --abort sends the verifier nothing, and another cutover's verify must not keep it from its undos
        ...(runbook.verifier && !flags.abort
          ? [{ url: runbook.verifier, label: loaded.redact(runbook.verifier), kind: "verifier" as const }]
          : []),
      ],
      // the holder's runbook and journal folder: a runner refused names the holder's status
      {
        runbook: resolve(loaded.file),
        journalDir: loaded.journalDir === undefined ? undefined : resolve(loaded.journalDir),
        status,
      },
    );
    for (const line of tookOverLines(fleetLock.tookOver)) say(line);
  } catch (err) {
    lock.release();
    throw err;
  }
  // Ctrl-C (a TERM, a lost terminal) before the run begins: the waits below (hook processes an
  // earlier run left, the fleet a --resume reads, minutes at most) end at once with what was and
  // was not done, and the locks are released; Node's default killed the process without a word.
  // The run's own handler (a word at once, a second signal forces the exit), handed over to the
  // run's when it takes the signals (`execute`'s `handOver`): no moment without one
  const signalled = new AbortController();
  const planning = new AbortController();
  signalled.signal.addEventListener("abort", () => {
    const why = errorMessage(signalled.signal.reason);
    planning.abort(
      new UserError(
        `${why}: stopped before the run began (while reading what earlier runs left): nothing was sent, no hook ran, and the journal is as it was`,
        {
          exitCode: ExitCode.interrupted,
          hint: `Run the same command again when ready; \`syncbook status ${runbookArg(loaded)}\` shows the fleet and the journal.`,
        },
      ),
    );
  });
  const planned = interruptOnSignals(signalled, say);
  try {
    const { planResume } = await import("../run/resume.js");
    const { planAbort } = await import("../run/abort.js");
    const { earlierCommitAsked, fromJournal, waitOutEarlierRuns } = await import("../run/earlier.js");
    const signal = planning.signal;
    // every entry point, before it reads or decides anything: the hook processes earlier runs of
    // this cutover left are waited out (an orphaned undo must not turn writes on behind this run);
    // what cannot be told is left to commit's `hook-processes` interlock (src/run/orphans.ts)
    const hooks = await waitOutEarlierRuns(loaded, dir, { say, signal });
    const resume = flags.abort
      ? await planAbort(loaded, dir, {
          say,
          signal,
          allowChangedRunbook: flags.allowChangedRunbook === true,
          ...(typeof flags.abort === "string" ? { file: flags.abort } : {}),
        })
      : flags.resume
        ? await planResume(loaded, dir, {
            allowChangedRunbook: flags.allowChangedRunbook === true,
            say,
            signal,
            mayHaveActed: hooks.mayHaveActed,
            ...(typeof flags.resume === "string" ? { file: flags.resume } : {}),
          })
        : undefined;
    // one cutover, one identity: a run that is not --resume/--abort either continues the runbook's
    // unfinished cutover (--from) or starts a new one, never silently (src/journal/cutover.ts)
    const chosen = resume ? undefined : await newOrContinued(loaded, dir, flags, only, signal);
    const continues = chosen && "cutover" in chosen ? chosen : undefined;
    // a --from run continues this cutover: what its journal established counts for the interlocks
    // (not for a new cutover: it knows nothing of the one it leaves)
    const earlier =
      !resume && flags.from && !flags.newCutover
        ? await fromJournal(
            loaded,
            dir,
            say,
            hooks.mayHaveActed,
            continues !== undefined,
            flags.from,
            flags.allowChangedRunbook === true,
            {
              ...(flags.to !== undefined ? { to: flags.to } : {}),
              ...(only ? { only, ...(onlyArg !== undefined ? { onlyArg } : {}) } : {}),
            },
          )
        : undefined;
    // the earlier runs' events, from the one read that judged the journal (src/run/earlier.ts):
    // the runner knows when writes were stopped, --report tells one story
    const history = resume?.history;
    // the cutover's runs in other journals (those a --from run continued): its window and its time span them
    const earlierRuns = await cutoverRunsBefore(
      dir,
      resume ? history : undefined,
      continues?.cutover,
      resume?.file,
      say,
    );
    signal.throwIfAborted();
    // the job summary's steps are the cutover's: what an earlier run did is not "not reached"
    summary?.seed(earlierRuns.length ? earlierRuns : (history ?? []));
    const journal = openJournal({ dir, runbookName: runbook.name, runbookHash: loaded.hash, file: resume?.file });
    say(`journal: ${journal.file}`);
    try {
      const record = asListener(journal);
      const wayOn: string[] = [];
      const code = await execute(loaded, registry, flags, force, summary ? [summary.listener] : [], {
        wayOn,
        ...(resume
          ? { mode: "resume", resume: resume.plan, ...(history ? { history } : {}) }
          : {
              mode: "run",
              ...(earlier ? { resume: earlier } : {}),
              ...(continues ? { cutover: continues.cutover } : {}),
            }),
        ...(earlierRuns.length ? { earlierRuns } : {}),
        journalFile: journal.file,
        ...(onlyArg !== undefined ? { onlyArg } : {}),
        ...(chosen && "notContinued" in chosen ? { notContinued: chosen.notContinued } : {}),
        // a run's own report names the cutover's, built from every run of it (issue 37)
        cutoverReport: loaded.redact(shellCommand(["syncbook", "report", dir])),
        critical: [record],
        distrustJournal: () => journal.distrust(),
        ...(hooks.gate ? { earlierHooks: hooks.gate } : {}),
        // an earlier cutover's commit that may still take effect (an instance holding it in commit's
        // round shows RUNNING): no undo of this run's write stop turns writes on under it, asked
        // when the undo is due (an --abort refuses itself for it, src/run/abort.ts)
        ...(flags.abort
          ? {}
          : {
              earlierCommit: earlierCommitAsked(
                dir,
                journal.file,
                chosen && "distrusted" in chosen ? [chosen.distrusted] : [],
              ),
            }),
        ...(json ? { json: json.write } : {}),
        // a signal from here on is the run's to handle: it undoes and journals
        handOver: { signal: signalled.signal, release: planned },
      });
      summary?.finish(code, undefined, wayOn);
      return code;
    } finally {
      journal.close();
    }
  } finally {
    planned();
    fleetLock.release();
    lock.release();
  }
}

export async function execute(
  loaded: LoadedRunbook,
  registry: PluginRegistry,
  flags: ExecuteFlags,
  force: string[],
  extraListeners: RunListener[],
  how: {
    mode: "run" | "rehearse" | "resume";
    resume?: ResumePlan;
    /** The events of the earlier runs (a resumed journal's). */
    history?: readonly RunEvent[];
    /** Every run of the cutover before this one, `history`'s among them, in the order they started (`cutoverRunsBefore`). */
    earlierRuns?: readonly RunEvent[];
    /** This run's journal (what the `--resume` its end offers would continue is told against it). */
    journalFile?: string;
    /** The cutover a `--from` run continues. */
    cutover?: string;
    /** The run's `--only` as a way on repeats it (src/run/plan.ts `onlyAsOffered`). */
    onlyArg?: string;
    /** A `--from` run after a committed cutover's commit that did not continue it: why, and the command that does. */
    notContinued?: string;
    /** The command that builds the cutover's report from every run of it: this run's own report names it. */
    cutoverReport?: string;
    timeScale?: number;
    yes?: boolean;
    critical?: CriticalListener[];
    /** `--renderer json`: where the JSON lines go (the claimed stdout); other output goes to stderr. */
    json?: (text: string) => void;
    /** After the run, before the outputs close: e.g. the rehearsal's verdict as a last JSON line. */
    after?: (ui: Ui) => Promise<void>;
    /** Collects the ways on the run's end names (each a line with the command), for the job summary. */
    wayOn?: string[];
    /** A rehearsal's view of the simulated application's writes (the stopWrites interlock reads it). */
    writesProbe?: WritesProbe;
    /** What commit asks of the hook processes earlier runs left (src/run/orphans.ts). */
    earlierHooks?: EarlierHooksGate;
    /** Why no undo of a write stop may turn writes on, asked when one is due (src/steps/kit/context.ts `RunContext.earlierCommit`). */
    earlierCommit?: () => Promise<string | undefined>;
    /** Marks the run's journal untrusted before an undo it cannot record (src/journal/journal.ts `distrust`). */
    distrustJournal?: () => string | undefined;
    /**
     * The signal handler that stood before the run (its planning): released once the run's own
     * takes the signals, and a signal it got in between stops the run as soon as it starts.
     */
    handOver?: { signal: AbortSignal; release: () => void };
  },
): Promise<number> {
  const say = (s: string): void => stderr(loaded.redact(s));
  const { runRunbook } = await import("../run/runner.js");
  const { createUi, pickRenderer } = await import("../ui/index.js");
  const yes = flags.yes === true || how.yes === true;
  const { readinessPlan, realRunOr, REHEARSE_FROM_THE_START } = await import("../steps/index.js");
  const plan = loaded.runbook ? readinessPlan(loaded.runbook) : undefined;
  // the earlier runs of the cutover: a resume's live view keeps the write-stop clock running, and
  // exports the earlier runs' spans its collector never got
  const earlier = how.earlierRuns ?? how.history ?? [];
  const ui = createUi({
    renderer: pickRenderer({ flag: flags.renderer }),
    yes,
    ...(plan ? { readiness: plan } : {}),
    ...(how.json ? { jsonWrite: how.json } : {}),
    ...(earlier.length ? { earlier } : {}),
  });
  const report = await reportOutput(flags.report, say, how.history, how.cutoverReport);
  const tracing = await traceOutput(process.env, loaded.redact, {
    ...(earlier.length ? { earlier } : {}),
    ...(how.mode === "rehearse" ? { rehearsal: { trace: flags.trace === true } } : {}),
  });
  const controller = new AbortController();
  const forced = new AbortController();
  // after the run, the wait for its notifications: bounded, and a Ctrl-C ends it at once
  const drainStop = new AbortController();
  let draining = false;
  // a rehearsal's too (src/cli/rehearse.ts comes here without main)
  keepRunningWithoutOutput();
  let acted = false;
  const off = interruptOnSignals(controller, say, forced, undefined, {
    active: () => draining,
    stop: drainStop,
  });
  if (how.handOver) {
    how.handOver.release();
    if (how.handOver.signal.aborted) controller.abort(how.handOver.signal.reason);
  }
  // closed once: on the way out of a run that threw too, so the list and the cursor are not left hanging
  let closed = false;
  // this run's own command, for a failure whose way on it is (a fleet-identity refusal before it
  // acted): journaled with it, so that its end, status and the watch page name the one command
  const { ownCommandArgs } = await import("../model/again.js");
  const againArgs =
    how.mode === "rehearse"
      ? undefined
      : ownCommandArgs({
          ...flags,
          // a named journal, as this shell names it: journaled, and read from another directory
          // or by another machine's watch page (an outside review), so whole
          ...(typeof flags.resume === "string" ? { resume: resolve(flags.resume) } : {}),
          ...(how.onlyArg !== undefined ? { onlyArg: how.onlyArg } : {}),
        });
  try {
    const result = await runRunbook({
      loaded,
      registry,
      mode: how.mode,
      ...(againArgs ? { againArgs } : {}),
      listeners: [
        ...extraListeners,
        ui.listener,
        ...report.listeners,
        ...(tracing ? [tracing.listener] : []),
        // whether this run acted (a request, a hook): only a run that did not can have its journal
        // passed over by the --resume its end offers (`resumeNote`)
        (e) => {
          if (actsOn(e)) acted = true;
        },
      ],
      ...(how.critical ? { critical: how.critical } : {}),
      signal: controller.signal,
      forceSignal: forced.signal,
      // synchronous: the process exits right after
      onForceStop: (lines) => {
        for (const l of lines) writeSync(2, `forced exit: ${l}\n`);
      },
      prompt: ui.prompt,
      yes,
      stepMode: flags.step === true,
      force,
      ...(flags.from ? { from: flags.from } : {}),
      ...(flags.to ? { to: flags.to } : {}),
      ...(flags.only ? { only: [flags.only] } : {}),
      ...(how.resume ? { resume: how.resume } : {}),
      ...(flags.abort ? { abort: true } : {}),
      ...(how.history ? { history: how.history } : {}),
      ...(how.earlierRuns ? { earlierRuns: how.earlierRuns } : {}),
      ...(how.cutover ? { cutover: how.cutover } : {}),
      ...(how.timeScale ? { timeScale: how.timeScale } : {}),
      ...(how.writesProbe ? { writesProbe: how.writesProbe } : {}),
      ...(how.earlierHooks ? { earlierHooks: how.earlierHooks } : {}),
      ...(how.earlierCommit ? { earlierCommit: how.earlierCommit } : {}),
      ...(how.distrustJournal ? { distrustJournal: how.distrustJournal } : {}),
      // notify steps and console notifiers: stdout, unless it belongs to the JSON lines
      // a rehearsal's stand-in lines (a hook not run, a notification not sent) are the renderer's
      // to show: `--renderer silent` prints none of them
      print: how.mode === "rehearse" && flags.renderer === "silent" ? () => undefined : how.json ? say : stdout,
      ...(tracing ? { traceparent: () => tracing.traceparent(), onRecord: (r: Emit) => tracing.record(r) } : {}),
      drainSignal: drainStop.signal,
      onDrain: (pending) => {
        draining = true;
        say(
          `notifications: waiting at most ${formatDuration(DRAIN_MS)} for ${plural(pending, "notification")} still being sent (Ctrl-C: stop waiting)`,
        );
      },
    });
    draining = false;
    await how.after?.(ui);
    closed = true;
    await ui.close();
    const notes = result.notifications;
    if (notes?.undelivered.length) {
      say(`notifications: ${plural(notes.undelivered.length, "notification")} not delivered:`);
      for (const u of notes.undelivered) say(`  - ${u}`);
    }
    // the run itself ended as it says; the operator stopped the wait for its notifications
    if (notes?.interrupted) return ExitCode.interrupted;
    // the runbook as the next command names it, with the --var values its `when`s were decided
    // with (a resume with others is refused, src/run/earlier.ts `whenDecidedOtherwise`; an --abort
    // given none still owes its cutover's), then the values the cutover runs with since this run
    // began, not this run's alone (src/next-run.ts `wayOnVarsAfter`; a secret value left out)
    const vars = wayOnVarsAfter(loaded, how.resume);
    const target = runTarget(loaded, vars);
    // (a secret one shown masked there: the note below, that the commands leave it out, is not said)
    let maskedShown = false;
    const keptResume = (flags: readonly string[]): string => {
      const kept = flags.includes("--allow-changed-runbook") ? wayOnVarsKept(loaded, how.resume) : undefined;
      if (kept?.masked) maskedShown = true;
      return `  once the hint above is done, resume with: syncbook run ${kept ? runTarget(loaded, kept.vars) : target} ${["--resume", ...flags].join(" ")}${kept?.masked ? MASKED_VAR_NOTE : ""}`;
    };
    // the --resume after a run that sent nothing and ran no hook: it passes this run's journal over
    // and goes on from the journal of the last run that acted, whose failure may need a hint done
    // first and flags (`resumeFirst`), as status and the page say it (a review: a --from x --to x
    // after such a failure offered a plain --resume, refused again). A run that acted is the one
    // --resume goes on from: its own failure says its way on (`resumeFlags`), and a --to run that
    // acted stopped after its --to step ended ok
    const passedOverResume = async (where?: string): Promise<string> => {
      const { note, first } = await resumeNote(loaded, flags.journalDir, how.journalFile);
      const kept = first?.flags?.includes("--allow-changed-runbook") ? wayOnVarsKept(loaded, how.resume) : undefined;
      if (kept?.masked) maskedShown = true;
      const said = [
        ...(where !== undefined ? [where] : []),
        // this run's own failure: its hint is the one printed above, not said twice
        ...(first
          ? [
              first.id === result.failedStep
                ? "first, do what the hint above says"
                : `first, as step ${first.number} ${first.id}'s failure said: ${first.hint}`,
            ]
          : []),
      ];
      return `syncbook run ${kept ? runTarget(loaded, kept.vars) : target} ${["--resume", ...(first?.flags ?? [])].join(" ")}${said.length ? ` (${said.join("; ")})` : ""}${kept?.masked ? MASKED_VAR_NOTE : ""}${note}`;
    };
    // a way on: said, and kept for the job summary, which names the same commands (redacted as
    // said: the summary is built only from what is redacted)
    let offered = false;
    const forcesOffered = new Set<string>();
    const next = (line: string): void => {
      how.wayOn?.push(loaded.redact(line).trim());
      say(line);
      offered = true;
      for (const m of line.matchAll(/--force=([\w,-]+)/g)) for (const f of m[1]!.split(",")) forcesOffered.add(f);
    };
    if (result.aborted) {
      // the renderer's summary said it already: once, not twice
      if (result.message && !ui.showsEnd) say(result.message);
      if (result.writesKeptOff) say(`  hint: ${result.hint ?? ""}`);
      const stuck = ui.writesLeftStopped();
      if (stuck) for (const l of nextAfterFailedUndo(target, stuck)) next(`  ${l}`);
      if (result.exitCode === 0)
        next(
          `  nothing was sent to the sync; to go on with this cutover later: syncbook run ${target} --resume (${CALLED_OFF_RESUME})`,
        );
      else if (result.stopUndoless && !result.writesKeptOff)
        next(
          `  nothing was sent to the sync; turn application writes back on by hand (the runbook gives step ${result.stopUndoless} no \`undo:\`), and to go on with this cutover later: syncbook run ${target} --resume (${CALLED_OFF_RESUME})`,
        );
    } else if (result.outcome === "ok" && how.mode !== "rehearse" && loaded.runbook) {
      // the run ended ok (no writes-on hook refused it), yet an instance stopped during the commit:
      // said at its end too, not only in a warning among the lines above (an adversarial run)
      if (result.stoppedInCommit)
        say(`  warning: ${stoppedInCommitWords(result.stoppedInCommit)}; ${STOPPED_IN_COMMIT_RESTART_WORDS}`);
      if (result.handedToPerson !== undefined)
        say(`  ${writesLeftSentence("may-be-stopped", false, false, result.handedToPerson)}`);
      const { afterLastCommit, planSteps } = await import("../run/plan.js");
      const steps = planSteps(loaded.runbook);
      const at = flags.to ? steps.findIndex((st) => st.id === flags.to) : -1;
      // a verify that failed under continueOnError after the commit: run again in this cutover,
      // whose commit counts (src/run/earlier.ts `afterItsCommit`)
      const again = result.committed
        ? (result.wentPast ?? []).find((id) => afterLastCommit(loaded.runbook!, id))
        : undefined;
      // a --to run leaves its cutover open (its journal says where it stopped): the way on
      // where --resume goes on is its journal's to say (a run that sent nothing and ran no hook is
      // passed over, and the one before it continues): status names it, not a step of this run's
      // a --resume refused (its own journal's commit in doubt ahead of it, carried from an earlier
      // run of the cutover; an earlier cutover's commit that may still take effect, a journal that
      // cannot be judged): not offered, the refusal said in the resume's words with its hint (a
      // review followed the --resume offered here into that refusal)
      const refused =
        at >= 0 && at < steps.length - 1 && acted && how.journalFile
          ? await (await import("../run/earlier.js")).resumeRefused(loaded, how.journalFile, steps[at + 1]!.id)
          : undefined;
      if (refused)
        next(
          `  stopped at --to ${flags.to}; a --resume would be refused (${refused.message}). ${sentence(refused.hint) ?? `See the fleet: syncbook status ${runbookArg(loaded)}`}`,
        );
      else if (at >= 0 && at < steps.length - 1)
        next(
          `  stopped at --to ${flags.to}: the cutover goes on with: ${acted ? `syncbook run ${target} --resume (syncbook status ${runbookArg(loaded)} shows where)` : await passedOverResume(`syncbook status ${runbookArg(loaded)} shows where`)}`,
        );
      else if (again)
        next(
          `  step ${again} failed and the run went on past it (continueOnError); to run it again in this cutover (its commit counts): syncbook run ${target} --from ${again}`,
        );
    } else if (result.outcome !== "ok") {
      const what =
        result.outcome === "interrupted"
          ? "interrupted"
          : result.exitCode === ExitCode.interlock
            ? "stopped by an interlock (exit 3: the refused command was not sent)"
            : "failed";
      // the failing step's paragraph, hint and place are on screen already: point to them
      const told = ui.toldAbove(result.message);
      // "interrupted during step x", not "interrupted: interrupted during step x"; and once: the
      // default and simple renderers' last line ends with it (a trial saw it twice)
      if (!(result.outcome === "interrupted" && result.message && ui.showsEnd))
        say(
          result.message && result.outcome === "interrupted"
            ? result.message
            : `${what}${result.message ? `: ${told ?? result.message}` : ""}`,
        );
      if (result.place && !told) for (const l of codeFrame(result.place)) say(`  ${l}`);
      if (result.hint && !told) say(`  hint: ${result.hint}`);
      if (result.handedToPerson !== undefined)
        say(`  ${writesLeftSentence("may-be-stopped", false, false, result.handedToPerson)}`);
      // a rehearsal has no journal to resume from: it is simply run again
      const rerun = how.mode !== "rehearse" ? result.rerunWith : undefined;
      // commit refused for want of a write stop: --resume would meet the same refusal; the stopWrites step runs again
      const restopAt =
        !rerun && result.refused === "writes-stopped" ? await stopWritesBefore(loaded, result.failedStep) : undefined;
      // unless the fleet shows the commit made already (a --from commit after the cutover
      // committed): stopping writes again would wait for a canCommit that never comes
      const { commitNoLongerHolds } = await import("../run/earlier.js");
      // Ctrl-C during that read ends it (the run's signal): not known, so the stop is named again
      const committedBefore =
        restopAt !== undefined &&
        (await commitNoLongerHolds(loaded, controller.signal).catch(() => "not known")) === undefined;
      const restop = committedBefore ? undefined : restopAt;
      // an undo of a stopWrites failed: the application is down; --abort retries it, --resume goes on
      const stuck = how.mode !== "rehearse" && !result.committed ? ui.writesLeftStopped() : undefined;
      if (stuck && !rerun) {
        const { planSteps } = await import("../run/plan.js");
        const failed = loaded.runbook ? planSteps(loaded.runbook).find((st) => st.id === result.failedStep) : undefined;
        for (const l of nextAfterFailedUndo(
          target,
          stuck,
          failed ? { number: failed.index + 1, id: failed.id } : undefined,
        ))
          next(`  ${l}`);
      } else if (rerun) next(`  run again with: syncbook run ${target} ${rerun} (not --resume)`);
      // a rehearsal's simulator is read by no `status` (src/steps/kit/context.ts `realRunOr`)
      else if (committedBefore)
        next(
          realRunOr(
            how,
            `  every instance already shows COMMITTED: this cutover's commit went through before this run (an earlier run, or by hand); stopping writes again would wait for a canCommit that never comes. See the fleet and the journal: syncbook status ${runbookArg(loaded)}`,
            "  every instance shows COMMITTED: stopping writes again would wait for a canCommit that never comes; see why above, then rehearse again",
          ),
        );
      // with the run's --only: without it the way on sends the commit to every instance, and a
      // commit an earlier cutover left on part of the fleet refuses that (src/run/earlier.ts).
      // A rehearsal's simulator starts afresh: a rehearsal from the stop has no sync to commit,
      // and there is no cutover to call off (an outside review: `rehearse --from commit` named both)
      else if (restop) {
        for (const line of realRunOr(
          how,
          [
            `  stop writes again, then go on: syncbook run ${target} --from ${restop}${how.onlyArg !== undefined ? ` ${shellCommand(["--only", how.onlyArg])}` : ""}${flags.to !== undefined ? ` ${shellCommand(["--to", flags.to])}` : ""}`,
            // or back (an adversarial run found no way back to writes on after a stopWrites whose check
            // failed): status judges whether --abort may (a review followed a plain --abort offered
            // here into a refusal, after a split commit of an earlier cutover)
            ...(!result.commitSent
              ? [
                  `  or, to call the cutover off and turn writes back on: syncbook status ${runbookArg(loaded)} offers --abort where no commit may be on the fleet`,
                ]
              : []),
          ],
          [`  ${REHEARSE_FROM_THE_START}`],
        ))
          next(line);
      } else if (result.refused === "writes-stopped" && how.notContinued) next(`  ${how.notContinued}`);
      else if (
        result.refused === "writes-stopped" &&
        result.message?.includes((await import("../steps/index.js")).COMMIT_WRITES_FORCED)
      )
        // a verify after a commit sent past a forced writes-stopped interlock: no write stop of any
        // folder counts for it; the refusal's hint above is the way on (a reread: this end said
        // "no write stop of this cutover is in the journals", false where one had held)
        next(
          `  the commit was sent past a forced writes-stopped interlock: a write stop in any journal no longer counts for the verifier; the hint above names the way on (declare the stop in the runbook, or force this check and stay not verified)`,
        );
      else if (result.refused === "writes-stopped")
        // a step after the commit (a verify) that found no write stop: none is in this journal
        // folder. A rehearsal journals nothing and takes no --journal-dir: one that starts past the
        // write stop has none (an adversarial run: `rehearse --from verify` was told of journals)
        for (const line of realRunOr(
          how,
          [
            `  no write stop of this cutover is in the journals of ${flags.journalDir ?? "the runbook's .syncbook folder"}: if its runs journaled elsewhere, run again with --journal-dir <that folder>; if writes were stopped outside syncbook, say so in the runbook (writesStoppedExternally: true)`,
          ],
          [`  ${REHEARSE_FROM_THE_START}`],
        ))
          next(line);
      else if (result.writesKeptOff?.committed) {
        // the cutover happened outside this run: the hint above is the way on, not a resume
      } else if (result.refused === "stopped-in-commit" && how.mode !== "rehearse") {
        // --resume alone would be refused again (the window folds the earlier runs' reads): the
        // hint above says what to do; the forced resume is the way on only for one who knows. The
        // new cutover checks no value against this one's: every --var kept, a secret one masked
        // (left out, it is read at the runbook's default, another fleet: an outside review)
        // (the note below still said: the forced --resume leaves a secret out)
        const kept = wayOnVarsKept(loaded, how.resume);
        next(
          `  ${STOPPED_IN_COMMIT_RESTART_WORDS}, then: syncbook run ${runTarget(loaded, kept.vars)} ${STOPPED_IN_COMMIT_RESTART.args}${kept.masked ? MASKED_VAR_NOTE : ""} (${STOPPED_IN_COMMIT_AGAIN}); ${STOPPED_IN_COMMIT_ONLY_IF}: syncbook run ${target} ${STOPPED_IN_COMMIT_RESUME.args}`,
        );
      } else if (result.refused === "fleet-identity" && how.mode !== "rehearse" && !acted && !result.hintBeforeResume) {
        // refused before this run sent anything (the step's hint says so: `identityWayOn`): a
        // --resume refuses a corrected list, and one after a run that sent nothing passes it over
        // for the last run that acted (a --from's place lost); this run's command again, as its
        // failure journaled it for status and the page (`ownCommandArgs`), every --var kept (a
        // review: "resume with … --resume" here, and the hint's plain run after a --new-cutover,
        // refused by the unfinished cutover)
        const kept = wayOnVarsKept(loaded, how.resume);
        const again = result.againArgs ?? againArgs ?? [];
        // its one command names the secret masked: the note below ("leave out") would contradict it
        if (kept.masked) maskedShown = true;
        next(
          `  once the hint above is done, give this run's command again: syncbook run ${runTarget(loaded, kept.vars)}${again.length ? ` ${shellCommand(again)}` : ""}${kept.masked ? MASKED_VAR_NOTE : ""}`,
        );
      } else if (result.refused === "fleet-idle") {
        // --resume would send the same start to the same fleet: what the fleet and the journal show
        // is the way on; a rehearsal's is its step's hint (the simulator's, `notIdleHint`)
        for (const line of realRunOr(
          how,
          [`  see the fleet and what this runbook's journal did: syncbook status ${runbookArg(loaded)}`],
          [],
        ))
          next(line);
      }
      // after the commit too (a verify refused, a wait that timed out): --resume runs the failed step
      // again, as status offers it
      else if (how.mode !== "rehearse") {
        // the same check as at a --to (the failed step is where the resume goes on). Not asked where
        // the resume decides by the fleet what it sends: after a commit of this run's own (a split
        // one is completed only where it did not arrive), or at a failed step that sends a command
        // (one that took effect is adopted, and the resume goes on past it: a review)
        const { planSteps } = await import("../run/plan.js");
        // a commit step is known by commitSent, set before its first request: one that failed with
        // none sent (refused before it, or at its prompt) is sent again, and the check asked (a
        // review: its end offered a --resume that an earlier cutover's held commit refused)
        const failedSends =
          loaded.runbook !== undefined &&
          planSteps(loaded.runbook).some(
            (st) => st.id === result.failedStep && st.bound.command !== undefined && st.bound.command !== "commit",
          );
        const refused =
          acted && how.journalFile && result.failedStep !== undefined && !result.commitSent && !failedSends
            ? await (await import("../run/earlier.js")).resumeRefused(loaded, how.journalFile, result.failedStep)
            : undefined;
        next(
          refused
            ? `  a --resume would be refused (${refused.message}). ${sentence(refused.hint) ?? `See the fleet: syncbook status ${runbookArg(loaded)}`}`
            : result.resumeFlags || (acted && result.hintBeforeResume)
              ? // the way on its hint names edits the runbook: a plain --resume is refused again. Its
                // --allow-changed-runbook checks no value against the cutover's: every one named, a
                // secret one masked (a review: left out, it was read at the runbook's default). A
                // hint to be done first (restart the verifier): said before the --resume, as status
                // and the page say it (a review: "resume with" alone, under it)
                keptResume(result.resumeFlags ?? [])
              : `  resume with: ${acted ? `syncbook run ${target} --resume` : await passedOverResume()}`,
        );
      }
    }
    // this run's forces are in none of them unless named there (`ownCommandArgs`, a --resume, a
    // rerun): what a force overrode is checked again first, and a command read later from status may
    // meet another fleet. Said, so that the pasted command meeting that interlock again is no
    // surprise (outside reviews: dropped silently, after a fleet-identity refusal and then any end)
    const forceLeft = [...new Set(force)].filter((f) => !forcesOffered.has(f));
    if (offered && forceLeft.length > 0 && how.mode !== "rehearse")
      next(
        `  note: this run's --force=${forceLeft.join(",")} is left out of the commands above${forcesOffered.size > 0 ? ` (they carry only the --force=${[...forcesOffered].join(",")} they name)` : ""}: check again what it overrode, then add it by hand if it still holds`,
      );
    // a --var holding a secret cannot be offered: without it the commands above are refused
    const secret = secretVarsLeftOut(loaded, how.resume);
    if (offered && secret.length && !maskedShown)
      next(
        `  note: these commands leave out ${secret.map((n) => `--var ${n}`).join(", ")}, ${secret.length === 1 ? "which holds a secret" : "which hold secrets"} (shown as ***): add ${secret.length === 1 ? "it" : "them"} as this run was given ${secret.length === 1 ? "it" : "them"}, or refer to ${secret.length === 1 ? "it" : "them"} in the runbook as \${env.NAME} so that ${secret.length === 1 ? "it is" : "they are"} read from the environment`,
      );
    return result.exitCode;
  } finally {
    off();
    if (!closed) await ui.close().catch(() => undefined);
    await report.finish().catch((err: unknown) => say(`report: ${errorMessage(err)}`));
    const lost = await tracing?.finish();
    if (lost) say(`warning: ${lost}`);
  }
}

/**
 * What the `--resume` offered will continue, when the journal it picks (a run that sent nothing and
 * ran no hook is passed over for the one before it) is not this run's (asked only of a run that did
 * not act: the journal of one that did is the one picked, of this text, and reading a long journal
 * whole at a failed run's end delays its last lines by seconds): of another cutover (this
 * run a new cutover that sent nothing: an adversarial run saw its `--resume` go on with the earlier
 * cutover, on to its commit), said with that journal; of another text of the runbook
 * (`RUNBOOK_CHANGED_NOTE`: refused unless `--allow-changed-runbook`, as status and the watch page
 * say). "" else.
 */
async function resumeNote(
  loaded: LoadedRunbook,
  journalDir: string | undefined,
  own: string | undefined,
): Promise<{ note: string; first?: { number: number; id: string; hint: string; flags?: string[] } }> {
  if (!loaded.runbook) return { note: "" };
  const [
    { runbookJournal, journalDirFor, journalCutover },
    { traitsOf },
    { CutoverFold },
    { resumedRun, resumeFirst },
  ] = await Promise.all([
    import("../journal/index.js"),
    import("../steps/index.js"),
    import("../model/fold.js"),
    import("../model/again.js"),
  ]);
  // that journal folded as status folds it: the failure its --resume goes on from (`resumeFirst`)
  const fold = new CutoverFold({ traits: traitsOf });
  const found = await runbookJournal(journalDirFor(loaded.file, loaded.runbook.name, journalDir), traitsOf, {
    onEvent: (e) => fold.apply(e),
  });
  const notes: string[] = [];
  if (found.file !== undefined && own !== undefined && resolve(found.file) !== resolve(own)) {
    const [theirs, ours] = await Promise.all([journalCutover(found.file), journalCutover(own)]);
    if (theirs.cutover !== ours.cutover)
      notes.push(
        `it goes on with cutover ${theirs.cutover ?? "?"} (journal ${found.file}), not this run's: this run sent nothing and ran no hook, so --resume passes its journal over; see both first: syncbook status ${runbookArg(loaded)}`,
      );
  }
  if (found.state && found.state.hash !== loaded.hash) notes.push(RUNBOOK_CHANGED_NOTE);
  // (a journal --resume refuses: no failure of it to go by; status says the refusal)
  const model = found.state && found.refused === undefined ? fold.view() : undefined;
  const first = model ? resumeFirst(model.steps, resumedRun(model.runs)) : undefined;
  return { note: notes.length ? `   (${notes.join("; ")})` : "", ...(first ? { first } : {}) };
}

/** The id of the stopWrites step a refused step needs run again: the last one before it, else the first. */
async function stopWritesBefore(loaded: LoadedRunbook, failedStep: string | undefined): Promise<string | undefined> {
  if (!loaded.runbook) return undefined;
  return (await import("../run/plan.js")).stopWritesBefore(loaded.runbook, failedStep);
}

/**
 * A run that is neither `--resume` nor `--abort`, when the runbook's last cutover did not finish
 * (src/journal/cutover.ts, by the one answer `--resume` asks): a `--from` run continues it (its
 * id, so its pager incident and its trace), a plain run is refused, and `--new-cutover` starts a
 * new one, said. Refused rather than asked: a `--yes` (CI) would answer a question silently, and
 * a second cutover of a fleet whose first one is split or has writes stopped is not a default.
 */
async function newOrContinued(
  loaded: LoadedRunbook,
  dir: string,
  flags: ExecuteFlags,
  /** The instances `--only` names (indexes), when given. */
  only: readonly number[] | undefined,
  /** Ctrl-C before the run begins: the fleet read below ends at once. */
  signal: AbortSignal,
): Promise<
  | { cutover: string; journal: string; committed?: true }
  | { notContinued: string }
  | { distrusted: UnjudgedJournal }
  | undefined
> {
  const say = (s: string): void => stderr(loaded.redact(s));
  const [
    { unfinishedCutover, readJournalState },
    { traitsOf },
    {
      committedCutover,
      commitNoLongerHolds,
      cutoverTargetFrom,
      cutoverVars,
      fromText,
      newCutoverFromStart,
      readFolderJournals,
      refuseSentAgain,
      refuseSentByEarlierCutover,
    },
    { planSteps, startlessFrom },
  ] = await Promise.all([
    import("../journal/index.js"),
    import("../steps/index.js"),
    import("../run/earlier.js"),
    import("../run/plan.js"),
  ]);
  // the runbook as the commands offered name it (src/next-run.ts `runbookArgs`): with its --journal-dir
  const named = runbookArg(loaded);
  const cutoverTarget = async (l: LoadedRunbook, journal: string, traits: typeof traitsOf) =>
    runTarget(l, cutoverVars(await readJournalState(journal, traits), l));
  // a way on that nothing checks against the cutover's values names them all, a secret one masked:
  // going on with a committed cutover under --allow-changed-runbook (`cutoverTargetFrom`), and a new
  // cutover with the values this run was given (`wayOnVarsKept`); left out, a value is read at the
  // runbook's default, another fleet (an outside review)
  const goOnFrom = async (journal: string) =>
    cutoverTargetFrom(await readJournalState(journal, traitsOf), loaded, flags.from ?? "");
  const typedVars = wayOnVarsKept(loaded);
  const newCutoverTarget = runTarget(loaded, typedVars.vars);
  const newCutoverNote = typedVars.masked ? MASKED_VAR_NOTE : "";
  const last = await unfinishedCutover(dir, traitsOf);
  const range = { ...(flags.to !== undefined ? { to: flags.to } : {}), ...(only ? { only } : {}) };
  // a run without --from of a runbook that sends no start first (a cutover-only one) has no
  // fleet-idle interlock: what may still be on the fleet is judged as for a --from its first step
  const implicit = !flags.from && loaded.runbook ? startlessFrom(planSteps(loaded.runbook)) : undefined;
  const from = flags.from ?? implicit;
  const kind = implicit !== undefined ? "first step" : flags.newCutover ? "new cutover" : "from";
  // a new cutover from its start, where the runbook has one: its interlock checks the fleet is IDLE
  const fresh = newCutoverFromStart(loaded);
  const freshWay = fresh ? ` A new cutover from its start checks the fleet is IDLE: ${fresh} (without --from).` : "";
  // a --from run never sends a start, commit or reverse again that an earlier cutover's journal
  // shows may be on the fleet: a newer cutover that acted and sent none is the journal the one
  // answer reads, and it knows nothing of it (the last cutover's own journal: refuseSentAgain)
  // `refused`: the last cutover's journal is refused as --resume refuses it; `told`: it is judged
  // with that why (a --new-cutover's), named once, first
  const earlierCutovers = async (of: { refused?: UserError; told?: UnjudgedJournal } = {}): Promise<void> => {
    if (!from) return;
    const read = await readFolderJournals(dir);
    const { told } = of;
    const journals = told
      ? { journals: read.journals, unjudged: [told, ...read.unjudged.filter((u) => u.file !== told.file)] }
      : read;
    refuseSentByEarlierCutover(
      journals,
      { cutover: last?.cutover, file: last?.file, ...(of.refused !== undefined ? { refused: of.refused } : {}) },
      loaded,
      dir,
      from,
      range,
      kind,
      say,
    );
  };
  if (!last) {
    await earlierCutovers();
    // a step after the commit of the cutover that committed (a verify run again) is still its own
    const done = flags.from
      ? await committedCutover(loaded, dir, flags.from, flags.allowChangedRunbook === true)
      : undefined;
    // each way on with its --var values (runbookArg alone dropped the ones typed, and a way on
    // with --allow-changed-runbook then ran at the runbook's default fleet: an outside review):
    // going on with that cutover, its values; a new cutover, the ones this run was given
    const typed = newCutoverTarget;
    if (done && "changedText" in done) {
      const goOn = await goOnFrom(done.changedText);
      const way = `syncbook run ${goOn.target} --from ${flags.from} --allow-changed-runbook${flags.newCutover ? " (without --new-cutover)" : ""}${goOn.note ? ` (${goOn.note})` : ""}`;
      // not a new cutover unasked: counting nothing, it ended "not committed" (and its notification
      // said so) on a fleet that is COMMITTED, which the bridge reads as writes may go back on the
      // source (a terminal trial, 2026-12-01); the operator says which it is
      if (!flags.newCutover)
        throw new UserError(
          `cannot go on from ${flags.from}: the runbook's last cutover committed (journal ${done.changedText}), and the runbook changed since that run: without --allow-changed-runbook this run would be a new cutover that counts nothing from it, not even its commit; nothing was sent`,
          {
            hint: `Go on with that cutover from ${flags.from} (its commit counts): ${way}. To start a new cutover on purpose instead (it counts nothing from the one that committed): syncbook run ${typed} --from ${flags.from} --new-cutover${newCutoverNote}`,
            exitCode: ExitCode.usage,
          },
        );
      say(
        `cutover: the runbook's last cutover committed (journal ${done.changedText}), but the runbook changed since that run: this run is a new cutover and counts nothing from it; to go on with that cutover from ${flags.from} (its commit counts): ${way}`,
      );
      return { notContinued: `to go on with the cutover that committed: ${way}` };
    }
    if (!done) return undefined;
    if (flags.newCutover) {
      const goOn = await goOnFrom(done.journal);
      const way = `syncbook run ${goOn.target} --from ${flags.from}${goOn.note ? ` (${goOn.note})` : ""}`;
      say(
        `cutover: starting a new cutover (--new-cutover); cutover ${done.cutover} (journal ${done.journal}) committed, and this run counts nothing from it; to go on with it from ${flags.from} (its commit counts): ${way}`,
      );
      return {
        notContinued: `this run was a new cutover (--new-cutover); to go on with the one that committed: ${way}`,
      };
    }
    // the fleet must still show that commit: reversed or restarted since, it no longer holds
    const off = await commitNoLongerHolds(loaded, signal);
    if (off)
      throw new UserError(
        `refused (fleet-state): cutover ${done.cutover} committed (journal ${done.journal}), but the fleet no longer shows its commit: ${off}; nothing was sent`,
        {
          hint: `A reverse or a restart since leaves nothing for --from ${flags.from} to go on with: see the fleet: syncbook status ${named}. An instance that did not answer: run again when it does.`,
          exitCode: ExitCode.interlock,
        },
      );
    say(
      `cutover: this run continues cutover ${done.cutover} (journal ${done.journal}): it committed, and --from ${flags.from} comes after its commit (every instance still shows it COMMITTED)`,
    );
    return { ...done, committed: true };
  }
  const name = `${last.cutover ? `cutover ${last.cutover}` : "the last cutover"}${last.file ? ` (journal ${last.file})` : ""}`;
  const distrusted = (file: string): UnjudgedJournal => ({
    file,
    why: `${last.cutover ? `its cutover ${last.cutover}` : "its cutover"} did not finish, and ${last.why}`,
  });
  if (flags.newCutover) {
    // a new cutover counts nothing from the last, but a command on its way there may be on the
    // fleet still: a --from run is refused as a run continuing it would be, by its journal as the
    // one answer read it; one that cannot be read cannot tell, and is refused too
    if (from) {
      // no journal to name (journals that do not order, a folder that cannot be read)
      if (!last.file)
        throw new UserError(
          `cannot start a new cutover ${fromText(from, kind)}: ${name} did not finish and ${last.why}: whether a start, commit or reverse of it is still on the fleet, which this run would send again, cannot be told; nothing was sent`,
          {
            hint: `See the fleet: syncbook status ${runTarget(loaded, [])}.${freshWay}`,
            exitCode: ExitCode.interlock,
          },
        );
      if (!last.state)
        // judged as a journal of the folder that cannot be judged: refused, with the set-aside way
        // on, only when this run's range sends a start, commit or reverse; else said, and it goes on
        await earlierCutovers({ told: distrusted(last.file) });
      else {
        refuseSentAgain(last.state, loaded, last.file, from, range, false, implicit ? "first step" : "new cutover");
        await earlierCutovers();
      }
    }
    say(`cutover: starting a new cutover (--new-cutover); ${name} did not finish and is left as it is: ${last.why}`);
    // a journal it must not act on (cut short, edited): no undo of this run's write stop takes
    // what is left of it as whole (an outside review: a commit in its lost lines went unseen)
    return last.file && !last.state ? { distrusted: distrusted(last.file) } : undefined;
  }

  // why --resume and --abort refuse the last cutover's journal (cut short, edited, marked
  // untrusted), with the commands that help next (src/run/earlier.ts `wayOnFromRefused`)
  const lastRefused = async (): Promise<unknown> => {
    const [{ runbookJournal }, { wayOnFromRefused }] = await Promise.all([
      import("../journal/index.js"),
      import("../run/earlier.js"),
    ]);
    return wayOnFromRefused(await runbookJournal(dir, traitsOf), loaded);
  };
  if (flags.from && last.cutover && last.file) {
    // one cut short or edited refuses a range that sends a start, commit or reverse as --resume
    // refuses it (what it lost may be one on its way); one its own run marked untrusted is read as
    // it is, and its way on is this run (`readFolderJournals`)
    const refused = last.state ? undefined : await lastRefused();
    await earlierCutovers(refused instanceof UserError ? { refused } : {});
    say(`cutover: this run continues ${name}: ${last.why}`);
    return { cutover: last.cutover, journal: last.file };
  }
  if (!last.state && last.file) {
    // a journal --resume and --abort refuse (edited, cut short, marked untrusted): not offered,
    // their refusal's way on is
    const refused = await lastRefused();
    if (refused instanceof UserError && refused.hint)
      throw new UserError(`the runbook's last cutover did not finish: ${name}: ${last.why}`, {
        hint: `--resume and --abort refuse its journal: ${refused.hint}`,
        exitCode: ExitCode.usage,
      });
  }
  // the ways on with the --var values that cutover ran with (a resume or abort with others is refused)
  const target = last.file ? await cutoverTarget(loaded, last.file, traitsOf).catch(() => named) : named;
  throw new UserError(`the runbook's last cutover did not finish: ${name}: ${last.why}`, {
    hint: `Go on with it: syncbook run ${target} --resume (or --from <step> to continue it from a step); call it off: syncbook run ${target} --abort; or start a second cutover anyway: syncbook run ${newCutoverTarget} --new-cutover${newCutoverNote}`,
    exitCode: ExitCode.usage,
  });
}

/**
 * Every run of the cutover before this one, in the order they started (`joinJournals`, as the report
 * joins them): those in other journals (the runs a `--from` run continued) and `history`, the runs of
 * the journal it appends to (`except`), which a later journal's run may have come between. Empty
 * when no other journal holds one: `history` is then the whole story.
 */
async function cutoverRunsBefore(
  dir: string,
  history: readonly RunEvent[] | undefined,
  continued: string | undefined,
  except: string | undefined,
  say: (s: string) => void,
): Promise<RunEvent[]> {
  const { cutoverOfRun, cutoverJournalsRead } = await import("../journal/index.js");
  const first = history?.find((e) => e.type === "run.started");
  const id = first?.type === "run.started" ? cutoverOfRun(first) : continued;
  if (!id) return [];
  const others = await cutoverJournalsRead(dir, id, {
    ...(except !== undefined ? { except } : {}),
    unreadable: (f, why) => say(`journal: ${f} cannot be read (${why}): the cutover's time and window leave it out`),
  });
  if (!others.length) return [];
  const { joinJournals } = await import("../model/fold.js");
  const own = history && except !== undefined ? [{ file: except, events: history }] : [];
  return joinJournals([...others, ...own]).events;
}

/** A hint as a sentence after another: the reconciliation's begin in lower case ("see the fleet: …"). */
function sentence(hint: string | undefined): string | undefined {
  return hint && `${hint.charAt(0).toUpperCase()}${hint.slice(1)}`;
}
