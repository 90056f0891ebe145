/**
 * `syncbook status <runbook>`: what the fleet, the verifier and the journal say now, read-only
 * (src/run/status.ts gathers it). `--json` prints the data (one JSON object; with `--watch`, one
 * per refresh, a line each), `--watch [seconds]` refreshes until Ctrl-C. Exit codes: 0 the fleet
 * answered as one fleet, 1 an instance did not answer or the instances are not one fleet, 2 usage
 * or a runbook that does not load.
 */
import { existsSync, statSync } from "node:fs";
import { ExitCode, UserError } from "../errors.js";
import { formatDuration } from "../runbook/duration.js";
import { stoppedInCommitWords } from "../fleet/index.js";
import { formatBytes, terminalText } from "../text.js";
import type { JournalStatus, Status } from "../run/status.js";
import { writesStillStopped } from "../ui/format.js";
import { nextLines, runbookArg } from "../next-run.js";
import { readinessLine, readinessSummary } from "../model/readiness.js";
import { fleetStatesLine, highestLagLine, SUMMARY_ABOVE } from "../model/fleet-summary.js";
import { CUT_OFF_WORDS } from "../model/fold.js";
import {
  COMMIT_IN_DOUBT_WORDS,
  reverseInDoubtWords,
  runEndWords,
  windowEndWords,
  writesOnInDoubtWords,
} from "../writes-words.js";
import { verificationText, WRITES_OFF_FORCED } from "../steps/kit/earned.js";
import { stderr, stdout } from "./execute.js";
import { lintCommand } from "../next-run.js";
import { shellCommand } from "../text.js";

export interface StatusCliOptions {
  json?: boolean;
  /** `--watch` (true: every 2 s) or `--watch <seconds>`. */
  watch?: boolean | string;
  journalDir?: string;
}

export async function main(file: string, opts: StatusCliOptions): Promise<number> {
  const everyMs =
    opts.watch === undefined || opts.watch === false
      ? undefined
      : opts.watch === true
        ? 2000
        : Number(opts.watch) * 1000;
  if (everyMs !== undefined && !(Number.isFinite(everyMs) && everyMs >= 200))
    throw new UserError(`--watch ${String(opts.watch)}: expected a number of seconds (0.2 or more)`, {
      hint: "For example --watch 5",
      exitCode: ExitCode.usage,
    });
  if (!existsSync(file))
    throw new UserError(`${file}: no such file`, {
      hint: "Pass the path of a runbook (YAML).",
      exitCode: ExitCode.usage,
    });
  // a journal folder is `watch`'s to read (an adversarial run: "internal error: EISDIR")
  if (statSync(file).isDirectory())
    throw new UserError(`${file} is a folder: status takes one runbook file`, {
      hint: `Pass the runbook's path (its fleet is read too); \`syncbook watch ${shellCommand([file])}\` reads a journal folder without the runbook.`,
      exitCode: ExitCode.usage,
    });
  const { loadRunbook } = await import("../runbook/index.js");
  // the hooks, checks and notifications are not read here: a secret they use need not be set (a
  // person on the bridge call has none; "environment variable is not set" kept status from running)
  // nor the clusters' connection strings (preflight's: status connects to no cluster; a review: the
  // documented preflight shape, `uri: "${env.…}"`, still stopped it)
  const { callStandIns } = await import("../rehearse/index.js");
  const standIn = (raw: unknown): ((path: (string | number)[]) => boolean) => {
    const calls = callStandIns(false)(raw);
    return (path) => calls(path) || (path[0] === "clusters" && path[2] === "uri" && path.length === 3);
  };
  const first = await loadRunbook(file, { env: process.env, standIn });
  const blocking = first.diagnostics.filter((d) => d.severity === "error");
  if (!first.runbook || blocking.length) {
    const { formatPretty } = await import("../lint/format/pretty.js");
    stderr(
      formatPretty({ diagnostics: blocking, files: [file], sources: new Map([[file, first.text]]), color: false }),
    );
    throw new UserError(`${file} does not load, so its fleet is not known`, {
      hint: `Fix it (${lintCommand(file)}).`,
      exitCode: ExitCode.usage,
    });
  }
  const { journalDirFor } = await import("../journal/index.js");
  const { loadAtCutoverFleet, readStatus } = await import("../run/status.js");
  // read-only: status creates no folder and takes no lock
  const journalDir = journalDirFor(file, first.runbook.name, opts.journalDir, { create: false });
  // the fleet the cutover runs on: its URLs made of the cutover's values, not the runbook's defaults
  const { loaded, fleetVars } = await loadAtCutoverFleet(first, journalDir, (vars) =>
    loadRunbook(file, { env: process.env, vars, standIn }),
  );
  const unset = [...new Set(loaded.stoodIn ?? [])];
  if (unset.length)
    stderr(
      `note: ${unset.map((n) => `\${env.${n}}`).join(", ")} ${unset.length === 1 ? "is" : "are"} not set here; status reads no hook, check, notification or cluster connection string that uses ${unset.length === 1 ? "it" : "them"} (a run needs ${unset.length === 1 ? "it" : "them"})\n`,
    );
  // as typed: the ways on status offers repeat it (src/next-run.ts `runbookArgs`)
  if (opts.journalDir !== undefined) loaded.journalDir = opts.journalDir;
  // one fold across refreshes: the lag's trend and the copy's rate give why-not-ready its ETA
  const { CutoverFold } = await import("../model/fold.js");
  const { traitsOf } = await import("../steps/index.js");
  const fold = new CutoverFold({ traits: traitsOf });
  const once = async (signal?: AbortSignal): Promise<Status> => ({
    ...(await readStatus(loaded, { journalDir, fold, ...(signal ? { signal } : {}) })),
    ...(fleetVars ? { fleetVars } : {}),
  });
  if (everyMs === undefined) {
    const st = await once();
    print(st, opts.json === true, false);
    return verdict(st);
  }
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // the one polling loop (src/steps/kit/poll.ts): a refresh every `everyMs` from the start of the
  // previous read, never done, until Ctrl-C aborts it
  const { poll } = await import("../steps/kit/poll.js");
  try {
    await poll({
      read: (signal) => once(signal),
      judge: (st) => void print(st, opts.json === true, process.stdout.isTTY === true),
      every: everyMs,
      signal: stop.signal,
    });
  } catch (err) {
    if (!stop.signal.aborted) throw err;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  return ExitCode.ok;
}

/** 1 when the fleet cannot be trusted as it stands: an instance that does not answer, or not one fleet. */
function verdict(st: Status): number {
  return st.instances.some((i) => !i.reachable) || st.identityProblems.length ? ExitCode.failed : ExitCode.ok;
}

function print(st: Status, json: boolean, redraw: boolean): void {
  if (json) {
    stdout(JSON.stringify(st));
    return;
  }
  // a terminal that is watched is redrawn in place
  // the services' and the runbook's words: shown, never obeyed (src/text.ts); the redraw is ours
  const out = terminalText(formatStatus(st).join("\n"), { lines: true });
  process.stdout.write(redraw ? `\x1b[H\x1b[2J${out}\n` : `${out}\n`);
}

const bytes = (n: number | null): string => (n === null ? "?" : formatBytes(n));

/** The fleet's copy (src/run/status.ts folds it as the live view does): one percentage for both. */
function fleetCopy(st: Status): string | undefined {
  const c = st.copy;
  return c ? `copy (fleet): ${c.percent}% (${bytes(c.copiedBytes)} of ${bytes(c.totalBytes)})` : undefined;
}

/**
 * What each instance answered the last command: a line each, or, in a large fleet, a line per
 * answer with the instances that gave it (`accepted: every instance (64)`; `refused …: 1 of 64:
 * shard-3`). Only those that accepted it (or show its effect) are shortened: the others are the
 * instances to complete it on (`--from … --only`), named every one.
 */
function answerLines(
  answers: Readonly<Record<string, string>>,
  said: Readonly<Record<string, string>> | undefined,
  fleetSize: number,
): string[] {
  const each = Object.entries(answers).map(([k, a]) => [k, said?.[k] ?? a] as const);
  if (each.length <= SUMMARY_ABOVE) return each.map(([k, a]) => `    ${k}: ${a}`);
  const by = new Map<string, string[]>();
  for (const [k, a] of each) by.set(a, [...(by.get(a) ?? []), k]);
  const took = (a: string): boolean => a === "accepted" || a.startsWith("no answer, and it took effect");
  return [...by].map(([a, who]) => {
    if (who.length === each.length)
      return `    ${a}: ${each.length === fleetSize ? "every instance" : `all ${each.length} it was sent to`} (${each.length})`;
    const names =
      took(a) && who.length > 8 ? `${who.slice(0, 8).join(", ")} and ${who.length - 8} more` : who.join(", ");
    return `    ${a}: ${who.length} of ${each.length}: ${names}`;
  });
}

/**
 * The destination may take writes: the run ended committed or with a commit in doubt, or a commit
 * of the sync that runs now may have reached the fleet (a run that did not record its end).
 */
const mayTakeWrites = (j: JournalStatus): boolean =>
  j.finished ? j.finished.committed || j.finished.commitInDoubt === true : j.commitSent === true;

/**
 * The run's end line's verdict: the journal's one, in `verificationText`'s words without the why
 * (the "verification:" line below says it); where the destination may take writes, or verified.
 */
function endVerdict(j: JournalStatus): string {
  const v = j.verification;
  if (v === undefined || !(v.verified || mayTakeWrites(j))) return "";
  return ` · ${verificationText(v.verified ? v : { verified: false })}`;
}

/** The status for people: one line per instance, then identity, the verifier and the journal. */
export function formatStatus(st: Status): string[] {
  const lines: string[] = [`status of ${st.runbook} (${st.file}) at ${st.at}`];
  if (st.fleetVars?.read.length)
    lines.push(
      `fleet: read with the cutover's ${st.fleetVars.read.join(", ")}, as its journal has them (not the runbook's own)`,
    );
  if (st.fleetVars?.secret.length)
    lines.push(
      `fleet: read with the runbook's ${st.fleetVars.secret.join(", ")}: the cutover ran with other values, secrets its journal does not hold, so this may be another fleet than the cutover's`,
    );
  // a large fleet first in a few lines, in the live view's words (src/model/fleet-summary.ts)
  const many = st.instances.length > SUMMARY_ABOVE;
  // the first instance not ready, said in the summary: the same words under another say nothing new
  let said: string | undefined;
  if (many) {
    const all = st.instances.map((i) => ({
      label: i.name,
      state: i.state,
      down: !i.reachable,
      lagSeconds: i.lagSeconds,
    }));
    const highest = highestLagLine(all);
    lines.push(
      `fleet: ${fleetStatesLine(all)}`,
      ...(highest ? [`  ${highest}`] : []),
      ...(st.readiness?.length ? [`  ${readinessSummary(st.readiness)}`] : []),
    );
    const first = st.readiness?.find((r) => !r.ready && r.past === undefined);
    if (first) {
      said = readinessLine(first);
      // the others held back in the very same words are named here, not under each
      const same = (st.readiness ?? []).filter(
        (r) => r !== first && r.past === undefined && !r.ready && readinessLine(r) === said,
      );
      if (same.length)
        lines.push(
          `    the same for ${same.length} more: ${same
            .slice(0, 8)
            .map((r) => r.instance)
            .join(", ")}${same.length > 8 ? ` and ${same.length - 8} more` : ""}`,
        );
    }
  }
  const width = Math.max(...st.instances.map((i) => i.name.length));
  // what to check, once per different hint, after the instances (a newcomer met "unreachable" alone)
  const hints = [...new Set(st.instances.flatMap((i) => (!i.reachable && i.hint ? [i.hint] : [])))];
  for (const i of st.instances) {
    const head = `  #${i.place} ${i.name.padEnd(width)}`;
    if (!i.reachable) {
      lines.push(`${head}  unreachable: ${i.error ?? "no answer"}`);
      continue;
    }
    const parts = [
      i.state ?? "?",
      `canCommit ${String(i.canCommit ?? "?")}`,
      i.lagSeconds === null || i.lagSeconds === undefined ? "lag –" : `lag ${formatDuration(i.lagSeconds * 1000)}`,
      // an instance copies its share of an estimate that is the fleet's: its share, not a percentage
      // (the fleet's copy, as the live view sums it, is the line below the instances)
      i.copy ? (!i.copy.started ? "copy not started" : `copied ${bytes(i.copy.copiedBytes)} (its share)`) : "",
      i.coordinator ? "coordinator" : "",
      i.direction ? `${i.direction.source} → ${i.direction.destination}` : "",
      i.canWrite === true ? "canWrite" : "",
      i.info ? `info: ${i.info}` : "",
    ].filter(Boolean);
    lines.push(`${head}  ${parts.join(" · ")}`);
    // the one wording of why not ready (src/model/readiness.ts), as `syncbook watch` says it
    const r = st.readiness?.[i.place - 1];
    // in a large fleet only what holds an instance back, in words the summary above has not said
    const why = r ? readinessLine(r) : undefined;
    if (r && i.state !== "COMMITTED" && !(many && (r.ready || r.past !== undefined || why === said)))
      lines.push(`      ${why}`);
  }
  for (const h of hints) lines.push(`  hint: ${h}`);
  const copy = fleetCopy(st);
  if (copy) lines.push(copy);
  const answered = st.instances.filter((i) => i.reachable).length;
  lines.push(
    st.identityProblems.length
      ? `identity: NOT one fleet: ${st.identityProblems.join("; ")}`
      : answered === 0
        ? "identity: not known (no instance answered)"
        : `identity: one fleet (distinct ids, one coordinator, one direction, as far as the ${answered === st.instances.length ? "instances" : `${answered} of ${st.instances.length} instances that answered`} tell)`,
  );
  const v = st.verifier;
  if (v) {
    if (!v.reachable) lines.push(`verifier ${v.url}: unreachable: ${v.error ?? "no answer"}`);
    else {
      const c = Object.entries(v.counters ?? {})
        .map(([k, n]) => `${k} ${n}`)
        .join(", ");
      lines.push(
        `verifier ${v.url}: ${v.phase !== undefined ? `phase ${v.phase}` : "no phase in its answer"}${v.generation != null ? `, generation ${v.generation}` : ""}${c ? ` · ${c}` : ""}${v.verifierError != null ? ` · error: ${JSON.stringify(v.verifierError)}` : ""}`,
      );
      for (const n of v.notes ?? []) lines.push(`  ${n}`);
      // whether what it shows is this cutover's (src/steps/kit/earned.ts), against the journal
      if (v.cutover)
        lines.push(
          v.cutover.result
            ? "  this cutover's verification result (its check, its writesOff, a generation past it)"
            : v.cutover.refused
              ? // finished, and refused: no wait makes it one (a trial said "yet" after the refusal)
                `  this cutover's verification finished, and its result is refused: ${v.cutover.why ?? "?"}`
              : // a forced writesOff's result never becomes this cutover's: no "yet"
                `  not this cutover's verification result${v.cutover.check && v.cutover.why !== WRITES_OFF_FORCED ? " yet (this cutover's own check runs)" : ""}: ${v.cutover.why ?? "?"}`,
        );
    }
  } else lines.push("verifier: none in the runbook");
  const j = st.journal;
  if (!j.resumeWith && j.refused) {
    // --resume would continue none: journals that do not order, or a folder that cannot be read
    lines.push(`journal: in ${j.folder}, --resume would refuse: ${j.refused}`);
    if (j.refusedHint) lines.push(`  hint: ${j.refusedHint}`);
  } else if (!j.resumeWith) lines.push(`journal: none in ${j.folder} (no run yet): --resume has nothing to continue`);
  else {
    // a live runner holds the lock: its journal is being written, its last step is running
    const live = !j.finished && j.lock?.alive === true ? j.lock : undefined;
    lines.push(
      `journal: ${j.resumeWith} (${live ? `being written by the run now running, pid ${live.pid}` : "the one --resume would continue"})`,
    );
    for (const p of j.passedOver) lines.push(`  passed over (its run sent nothing): ${p}`);
    if (j.refused) lines.push(`  --resume would refuse it: ${j.refused}`);
    if (j.refusedHint) lines.push(`    hint: ${j.refusedHint}`);
    for (const w of j.warnings) lines.push(`  warning: ${w}`);
    if (j.lastStep) {
      const l = j.lastStep;
      const since = `since ${l.startedAt} (${formatDuration(Math.max(0, Date.parse(st.at) - Date.parse(l.startedAt)))})`;
      const unended = live
        ? l.asksPerson
          ? `waiting for an operator's answer ${since}: answer it in the run's terminal (pid ${live.pid})`
          : `running ${since}`
        : j.lock?.alive === null
          ? "started, never ended (cut off, or still running on the lock's other host)"
          : CUT_OFF_WORDS;
      lines.push(`  last step: ${l.number}. ${l.id} (${l.kind}): ${l.outcome ?? unended}`);
    }
    if (j.lastCommand) {
      const c = j.lastCommand;
      // a carried one is an earlier run's: read as this run's, it says this run sent what it never did
      const by = c.carried
        ? `, sent by an earlier run of this cutover${c.carried.from !== undefined ? `, in ${c.carried.from}` : ""} (carried by the --from run that wrote this journal; no run of this journal sent one)`
        : "";
      lines.push(
        `  last command: ${c.op} (step ${c.step})${by}:`,
        ...answerLines(c.answers, c.said, st.instances.length),
      );
    }
    if (j.finished)
      lines.push(
        `  run ended ${runEndWords({ ...(j.finished.calledOff ? { ended: "called-off" } : {}), outcome: j.finished.outcome, ...(j.finished.aborted ? { abort: true as const } : {}), ...(j.finished.exitCode !== undefined ? { exitCode: j.finished.exitCode } : {}), ...(j.finished.undoKeptOff ? { undoKeptOff: true as const } : {}) })}${j.finished.to !== undefined ? ` at --to ${j.finished.to}, before the runbook's end (its cutover goes on)` : ""}${j.finished.committed ? " (committed)" : j.finished.commitInDoubt ? ` (${COMMIT_IN_DOUBT_WORDS})` : ""}${endVerdict(j)} at ${j.finished.at}${j.finished.message ? `: ${j.finished.message}` : ""}`,
      );
    else if (live) lines.push(`  the run is still running (pid ${live.pid}): this is its journal so far`);
    else if (j.lastStep)
      lines.push(
        j.lock?.alive === null
          ? "  the run did not record its end (interrupted, crashed, or still running on the lock's other host)"
          : "  the run did not record its end: it was interrupted or crashed",
      );
    if (j.writesUndoFailed) {
      const u = j.writesUndoFailed;
      const stuck = {
        number: u.step,
        id: u.id,
        ...(u.stopFailed ? { stopFailed: true } : {}),
        ...(u.use !== undefined ? { use: u.use } : {}),
        ...(u.command !== undefined ? { command: u.command } : {}),
      };
      const w = writesStillStopped(stuck);
      // not "retry the undo with --abort (below), or by hand" while an earlier cutover's commit may
      // hold: --abort refuses it, and writes turned on by hand then are lost (a review)
      const held = j.earlierCommit !== undefined && j.next?.notes?.includes(j.earlierCommit.why) === true;
      lines.push(
        `  ${w.headline}`,
        ...(held
          ? [
              "    keep them stopped: an earlier cutover's commit may still take effect (below), and writes turned back on under it are lost once its round closes",
            ]
          : [...w.undo.map((l) => `    ${l}`), `    ${w.advice}`]),
      );
      if (j.next) for (const l of nextLines(runbookArg({ file: st.file }), j.next)) lines.push(`  ${l}`);
    } else if (j.writesOnSince)
      lines.push(
        `  writes: the application writes again since ${j.writesOnSince} (its writesOn hook)${j.destinationWrites ? `; the destination took writes at ${j.destinationWrites.since} (${windowEndWords(j.destinationWrites.by)})` : ""}`,
      );
    else if (j.writesOnInDoubt)
      lines.push(
        `  writes: ${writesOnInDoubtWords(j.writesOnInDoubt)}${j.destinationWrites ? `; the destination took writes at ${j.destinationWrites.since} (${windowEndWords(j.destinationWrites.by)})` : ""}`,
      );
    else if (j.reverseInDoubt !== undefined && !j.destinationWrites)
      // no window of this journal closed before it (a runbook that only reverses); a write stop of
      // its own still said (a review: the reverse's words alone hid writes stopped since …)
      lines.push(
        `  writes: ${reverseInDoubtWords(j.reverseInDoubt)} (the fleet above shows which; --resume reads it and adopts the reverse it shows)${j.writesStopInDoubt || j.writesStopCut || j.writesStopped ? `; and ${writeStopWords(j, st.at)}` : ""}`,
      );
    else if (j.destinationWrites?.reverseInDoubt)
      lines.push(
        `  writes: the destination took writes from ${j.destinationWrites.since} (${windowEndWords(j.destinationWrites.by)}); ${reverseInDoubtWords(j.destinationWrites.reversedBy ?? "?")} (the fleet above shows which; --resume reads it and adopts the reverse it shows)`,
      );
    else if (j.destinationWrites?.reversedBy !== undefined)
      lines.push(
        `  writes: the destination took writes from ${j.destinationWrites.since} (${windowEndWords(j.destinationWrites.by)}) until the reverse (step ${j.destinationWrites.reversedBy}): the sync now runs the other way, from that cluster, and its destination takes writes only after its own commit`,
      );
    else if (j.destinationWrites)
      lines.push(
        `  writes: the destination takes writes since ${j.destinationWrites.since}${unseenWords(j.destinationWrites)}; no writesOn hook has said the application writes again`,
      );
    else if (j.writesStopInDoubt || j.writesStopCut || j.writesStopAbortCut || j.writesStopped !== undefined)
      lines.push(`  writes: ${writeStopWords(j, st.at)}`);
    // an instance stopped during the commit: the verification is lost whatever comes next
    // (src/fleet/window.ts `StoppedInCommit`), said before the ways on
    if (j.stoppedInCommit) {
      const { at, since, ...stopped } = j.stoppedInCommit;
      const words = stoppedInCommitWords({
        ...stopped,
        at: Date.parse(at),
        ...(since !== undefined ? { since: Date.parse(since) } : {}),
      });
      lines.push(`  commit: ${words}${j.writesOnSince ? "; its writesOn hook ran all the same" : ""}`);
    }
    // the ways on (src/run/status.ts `nextOffer`); after a failed undo they were said above
    if (j.next && !j.writesUndoFailed)
      for (const l of nextLines(runbookArg({ file: st.file }), j.next)) lines.push(`  ${l}`);
    if (j.verifier?.restarts)
      lines.push(
        `  verifier: restarted ${j.verifier.restarts} time(s) during the run's verification (--resume sends the new process a check, then writesOff)`,
      );
    if (j.verifier?.oldRelease)
      lines.push(
        "  verifier: its progress answered an empty HTTP 500 before the check (releases v0.1.6 to v0.2.0; use v0.2.1)",
      );
    if (j.verifier?.refused)
      lines.push(`  verifier: the run refused the verification its check resumed: ${j.verifier.refused}`);
    // "not verified" matters once a commit may have happened (or a reverse undid what was verified,
    // or an instance stopped during the commit); an aborted or failed run before it says nothing.
    // The verdict and its words are the journal's one (src/run/status.ts), as the report and the
    // watch page say them
    if (
      j.verification &&
      (j.verification.verified ||
        j.stoppedInCommit !== undefined ||
        mayTakeWrites(j) ||
        (j.verifier !== undefined && (j.finished?.committed !== false || j.verifier.reversed !== undefined)))
    )
      lines.push(`  verification: ${j.verification.text}`);
    if (j.notifications) {
      const n = j.notifications;
      lines.push(
        `  notifications: ${n.delivered} delivered${n.notDelivered.length ? `, ${n.notDelivered.length} not` : ""}`,
      );
      for (const d of n.notDelivered) lines.push(`    not delivered: ${d}`);
    }
  }
  if (j.lock)
    lines.push(
      `lock: held by pid ${j.lock.pid} on ${j.lock.host} since ${j.lock.startedAt}${j.lock.alive === true ? " (running)" : j.lock.alive === false ? " (no such process: stale, the next run takes it over)" : " (another host: cannot check)"}`,
    );
  return lines;
}

/** The journal's write stop in words: may be stopped (its hook cut off), stopped since when, or not stopped. */
function writeStopWords(j: JournalStatus, at: string): string {
  if (j.writesStopInDoubt)
    return `may be stopped: the stopWrites hook of step ${j.writesStopInDoubt.step} ${j.writesStopInDoubt.id} started and its run ended before it did (what it did is not known: --resume runs it again; --abort runs its undo)`;
  if (j.writesStopCut)
    return `stopped: the stopWrites hook of step ${j.writesStopCut.step} ${j.writesStopCut.id} succeeded${j.writesStopCut.since ? ` at ${j.writesStopCut.since} (${formatDuration(Math.max(0, Date.parse(at) - Date.parse(j.writesStopCut.since)))} ago)` : ""}, ${j.writesStopCut.failed ? "its step failed after it (its `check:`, or what followed the hook), and its run ended before the undo ran" : "and its run ended before the step did (its end, and any `check:` of it, not journaled)"}: --resume runs the step again; --abort runs its undo`;
  if (j.writesStopAbortCut)
    return `may be stopped, or back on: step ${j.writesStopAbortCut.step} ${j.writesStopAbortCut.id} stopped them, then an --abort began and the journal does not show what became of them (undone, or handed to a person to turn back on by hand; the abort was cut off or its journal failed): check the application's writers; --resume runs the stop again before its commit, --abort again undoes it or hands it over`;
  // handed to a person by an --abort (no `undo:`): whether they turned writes back on, no event shows
  // (it said "stopped by an earlier run" after the abort, "not stopped by the run (or undone)" after
  // a resume cut off before its stop)
  if (j.writesStopUndoless)
    return `may be stopped, or back on: an --abort handed step ${j.writesStopUndoless.step} ${j.writesStopUndoless.id} to a person to turn writes back on by hand (the runbook gives it no \`undo:\`), and the journal cannot show whether they did: check the application's writers; --resume runs the stop again before its commit`;
  return j.writesStopped
    ? `${j.writesStoppedBefore ? "stopped by an earlier run of this cutover, and still at this run's end" : "stopped by the run (a stopWrites held, not undone)"}${j.writesStoppedSince ? ` since ${j.writesStoppedSince} (${formatDuration(Math.max(0, Date.parse(at) - Date.parse(j.writesStoppedSince)))} ago)` : ""}`
    : "not stopped by the run (or undone)";
}

/**
 * How the destination was seen taking writes: by which sign, and, when no runner read the fleet
 * between the commit and that read (killed after it), that the read is only the latest it began.
 */
function unseenWords(d: NonNullable<JournalStatus["destinationWrites"]>): string {
  return d.unseen
    ? ` at the latest (${windowEndWords(d.by)}, first seen then: no runner read the fleet from ${d.unseen.from}, after the commit, to ${d.unseen.to})`
    : ` (${windowEndWords(d.by)})`;
}
