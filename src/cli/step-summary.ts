/**
 * GitHub Actions job summaries: when `GITHUB_STEP_SUMMARY` names a file, `lint`, `run` and
 * `rehearse` append a Markdown summary to it (the verdict, a table of steps with outcome and
 * duration, writes lost, the verifier's result; lint: its findings).
 *
 * - Appended, never overwritten: other steps of the job write to the same file.
 * - Built only from what is already redacted: run events (the emitter redacts them once) and
 *   lint diagnostics (lint loads runbooks without `${env.*}` values). No secret can reach it.
 * - Every table cell is escaped (`cell`): a message with `|`, a newline, `<`, or Markdown
 *   emphasis cannot break the table or inject HTML.
 * - A summary that cannot be written is a warning on stderr, never a failure of the command.
 *
 * Imported lazily, only when the variable is set: lint's start-up stays as it was.
 */
import {
  abortWords,
  commitWords,
  reverseInDoubtWords,
  windowLengthWords,
  writesLeftSentence,
} from "../writes-words.js";
import { appendFileSync } from "node:fs";
import { countBySeverity, type Diagnostic } from "../diagnostics.js";
import type { RunEvent } from "../events.js";
import { verifierText, type Verdict } from "../rehearse/verdict.js";
import { verificationShown, verificationText } from "../steps/kit/earned.js";
import { WindowTracker, describeWindow } from "../fleet/window.js";
import { CUT_OFF_WORDS, CutoverFold, cutOff } from "../model/fold.js";
import { formatDuration } from "../ui/format.js";
import { escapeXml, plural } from "../text.js";
import { traitsOf } from "../steps/index.js";

/** Rows of findings shown in a lint summary; the rest is counted (a summary is capped at 1 MiB). */
const MAX_ROWS = 200;

/** The summary file, when there is one (an empty variable means none). */
export function summaryFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const f = env.GITHUB_STEP_SUMMARY;
  return f && f.trim() !== "" ? f : undefined;
}

/** Appends `markdown` to the summary file; says why on stderr when it cannot. */
export function appendSummary(markdown: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = summaryFile(env);
  if (!file) return;
  try {
    appendFileSync(file, `${markdown.trimEnd()}\n\n`);
  } catch (err) {
    process.stderr.write(
      `syncbook: warning: cannot append the job summary to ${file} (GITHUB_STEP_SUMMARY): ${(err as Error).message}\n`,
    );
  }
}

/** One Markdown table cell: HTML-escaped, Markdown punctuation and `|` backslash-escaped, newlines as <br>. */
export function cell(text: string): string {
  return escapeXml(text)
    .replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`)
    .replace(/\r\n|\r|\n/g, "<br>")
    .trim();
}

// --- lint ------------------------------------------------------------------------------------

export interface LintSummaryInput {
  diagnostics: readonly Diagnostic[];
  files: readonly string[];
  exitCode: number;
  maxWarnings?: number | undefined;
}

export function lintSummary({ diagnostics, files, exitCode, maxWarnings }: LintSummaryInput): string {
  const n = countBySeverity(diagnostics);
  const shown = diagnostics.filter((d) => d.severity !== "info");
  const withProblems = new Set(shown.map((d) => d.file)).size;
  const tooMany = maxWarnings !== undefined && maxWarnings >= 0 && n.warning > maxWarnings;
  const head =
    shown.length === 0
      ? `✅ ${plural(files.length, "runbook")} linted: no problems`
      : `${exitCode === 0 ? "⚠️" : "❌"} ${plural(n.error, "error")}, ${plural(n.warning, "warning")} in ${withProblems} of ${plural(files.length, "runbook")}${tooMany ? ` (more warnings than --max-warnings ${maxWarnings})` : ""}`;
  const out = [`### syncbook lint: ${head}`, ""];
  if (shown.length) {
    out.push("| where | severity | rule | finding |", "|---|---|---|---|");
    for (const d of shown.slice(0, MAX_ROWS))
      out.push(
        `| ${cell(`${d.file}:${d.line}:${d.column}`)} | ${d.severity === "error" ? "❌ error" : "⚠️ warning"} | ${cell(d.rule)} | ${cell(d.message)}${d.hint ? `<br>hint: ${cell(d.hint)}` : ""} |`,
      );
    if (shown.length > MAX_ROWS) out.push("", `… and ${shown.length - MAX_ROWS} more (see the job log).`);
    out.push("");
  }
  out.push(`Exit code ${exitCode}.`);
  return out.join("\n");
}

/** `lint`, `run` or `rehearse` stopped before doing its work (usage, unreadable file, lint errors). */
export function failedSummary(command: string, subject: string, message: string, exitCode: number): string {
  return `### syncbook ${command}${subject ? ` ${cell(subject)}` : ""}: ❌ did not run\n\n${cell(message)}\n\nExit code ${exitCode}.`;
}

// --- run and rehearse ------------------------------------------------------------------------

const OUTCOME: Record<string, string> = {
  ok: "✅ ok",
  failed: "❌ failed",
  interrupted: "⏹️ interrupted",
  skipped: "⏭️ skipped",
  running: "❔ running (no end)",
  pending: "▫️ not reached",
};

/**
 * A listener that folds the run's events into what the summary shows (the events are already
 * redacted). Its steps are the cutover's read model's (src/model/fold.ts), seeded with the earlier
 * runs of the cutover (`seed`): an `--abort` or `--resume` run's table said "not reached" of the
 * steps an earlier run did, where the report and `status` said they were done.
 */
export function createRunSummary() {
  let runbook = "";
  const fold = new CutoverFold({ traits: traitsOf });
  let finished: Extract<RunEvent, { type: "run.finished" }> | undefined;
  let verifier: Extract<RunEvent, { type: "verifier.sampled" }>["progress"] | undefined;
  let hint: string | undefined;
  const writeStop = new WindowTracker(traitsOf);
  let polls: { count: number; failed: number } | undefined;
  const listener = (e: RunEvent): void => {
    writeStop.apply(e);
    fold.apply(e);
    switch (e.type) {
      case "polls.summary":
        polls = {
          count: e.polls.reduce((n, p) => n + p.count, 0),
          failed: e.polls.reduce((n, p) => n + p.failed, 0),
        };
        break;
      case "run.started":
        runbook = e.runbook;
        break;
      case "step.finished":
        if (e.outcome === "failed" && e.hint) hint = e.hint;
        break;
      case "verifier.sampled":
        verifier = e.progress;
        break;
      case "run.finished":
        finished = e;
        break;
    }
  };

  /** The summary, once the run is over (`verdict`: the rehearsal's). */
  const markdown = (
    command: "run" | "rehearse",
    verdict?: Verdict,
    commandExitCode?: number,
    wayOn: readonly string[] = [],
  ): string => {
    // the command's own code when known (an unsafe rehearsal verdict turns a finished run's 0 into 1)
    const exitCode = commandExitCode ?? finished?.exitCode;
    let headline: string;
    if (!finished) headline = "❔ UNFINISHED";
    else if (finished.outcome === "ok")
      headline = finished.committed ? "✅ COMMITTED" : `✅ SUCCEEDED (${commitWords(finished)})`;
    else if (finished.outcome === "interrupted") headline = "⏹️ INTERRUPTED";
    // an --abort is the operator's call, as the terminal, status and the report's banner say it
    // (an adversarial run: "FAILED" over exit code 0); one whose undo failed says that too
    else if (finished.aborted)
      headline = `${finished.exitCode === 0 ? "⏹️" : finished.undoKeptOff ? "⛔" : "❌"} ${abortWords(finished)}`;
    else if (finished.exitCode === 3) headline = "⛔ STOPPED BY AN INTERLOCK (nothing was sent)";
    else headline = finished.committed ? "❌ FAILED AFTER COMMIT" : "❌ FAILED";
    // a commit that may hold: "FAILED" alone reads as nothing committed (writes back on the source)
    if (finished?.commitInDoubt && finished.outcome !== "ok") headline += " · ❔ COMMIT IN DOUBT";
    // "FAILED AFTER COMMIT" alone reads as the destination taking writes, which a reverse that
    // reached the fleet has ended
    if (finished?.reverseInDoubt !== undefined) headline += " · ❔ REVERSE IN DOUBT";
    if (verdict && !verdict.safe) headline += " · ❌ UNSAFE verdict";
    const m = fold.view();
    // the verdict where report.html's banner says it, in its words (src/steps/kit/earned.ts
    // `verificationShown`): never a bare success, and never "NOT VERIFIED" over a run that failed
    // before any commit, where the report said none
    const shown = verificationShown(m);
    if (shown !== undefined) headline += ` · ${shown.verified ? "✅" : "⚠️"} ${shown.headline}`;
    const verified = verdict ? verdict.verified : finished?.verified;
    const why = verdict ? verdict.unverified : finished?.unverified;
    const facts: [string, string][] = [];
    if (verdict)
      facts.push([
        "verdict",
        verdict.committed === verdict.instances
          ? `committed on all ${verdict.instances} instance(s)`
          : `${verdict.committed} of ${verdict.instances} instance(s) committed (${verdict.states.join(", ")})`,
      ]);
    facts.push(["exit code", exitCode === undefined ? "–" : String(exitCode)]);
    if (finished) facts.push(["duration", formatDuration(finished.durationMs)]);
    // the cutover, not only this run (issue 37): its time across runs, and writes left stopped in words
    if (finished?.cutover)
      facts.push([
        "cutover",
        `${formatDuration(finished.cutover.durationMs)} over ${finished.cutover.runs} runs${finished.window ? `; ${windowLengthWords(finished.window)}` : ""}`,
      ]);
    if (finished?.reverseInDoubt !== undefined)
      facts.push(["sync direction", reverseInDoubtWords(finished.reverseInDoubt)]);
    if (finished?.writes)
      facts.push([
        "application writes",
        writesLeftSentence(
          finished.writes,
          finished.committed,
          finished.commitInDoubt === true,
          finished.undoByHand,
          command === "rehearse",
        ),
      ]);
    facts.push([
      "writes lost",
      verdict
        ? `${verdict.writesLost}${verdict.writesLost > 0 ? " (writes reached the source after commit was sent)" : ""}`
        : "not measured in a real run (the verifier compares the data)",
    ]);
    const w = writeStop.current();
    // a resumed run's window opened in an earlier run: the cutover's, as the cutover row says it
    // ("writes were not stopped in this run" stood beside a cutover row saying they were)
    facts.push([
      "write-stop window",
      w
        ? describeWindow(w)
        : finished?.window
          ? `${windowLengthWords(finished.window)} (the window opened in an earlier run of the cutover)`
          : "writes were not stopped in this run",
    ]);
    if (verified !== undefined)
      facts.push(["verified", verificationText({ verified, why, filter: finished?.verifiedFilter })]);
    facts.push(["verifier", verifierResult(verdict, verifier)]);
    if (polls)
      facts.push(["progress reads", `${polls.count}${polls.failed ? ` (${polls.failed} failed)` : ", none failed"}`]);
    if (verdict?.fleetErrors.length) facts.push(["fleet errors", verdict.fleetErrors.join("; ")]);
    if (finished?.message) facts.push(["stopped", finished.message]);
    if (hint && finished?.outcome !== "ok") facts.push(["hint", hint]);
    // the commands the run's end named, as it named them (src/cli/run.ts): the page read on the
    // bridge says what to run next, not only what went wrong
    if (wayOn.length) facts.push(["next", wayOn.join("\n")]);
    const out = [`### syncbook ${command} ${cell(runbook || "?")}: ${headline}`, "", "| | |", "|---|---|"];
    for (const [k, v] of facts) out.push(`| ${k} | ${cell(v)} |`);
    out.push("", "| # | step | kind | outcome | duration |", "|--:|---|---|---|--:|");
    const thisRun = m.runs.at(-1)?.n;
    for (const s of m.steps) {
      // the command has ended: a step with no end is cut off, in this run or an earlier one
      const outcome = cutOff(m, s, true) ? `❔ ${CUT_OFF_WORDS}` : (OUTCOME[s.outcome] ?? cell(s.outcome));
      // a step an earlier run did (and this one did not run again) says which run did it
      const run = s.attempts.at(-1)?.run;
      const where = run !== undefined && run !== thisRun && s.outcome !== "pending" ? ` (run ${run})` : "";
      const why = s.outcome === "skipped" ? s.reason : s.outcome !== "ok" ? s.error : undefined;
      out.push(
        `| ${s.index + 1} | ${cell(s.id)}${s.title && s.title !== s.id ? `: ${cell(s.title)}` : ""} | ${cell(s.kind)} | ${outcome}${where}${why ? `<br>${cell(why)}` : ""} | ${s.durationMs === undefined ? "–" : formatDuration(s.durationMs)} |`,
      );
    }
    return out.join("\n");
  };
  /** The earlier runs of the cutover (a resumed journal's, those a `--from` run continued), oldest first, before this run's events. */
  const seed = (earlier: readonly RunEvent[]): void => {
    for (const e of earlier) fold.apply(e);
  };
  return { listener, markdown, seed };
}

function verifierResult(verdict: Verdict | undefined, last: { phase?: string } | undefined): string {
  if (verdict) return verifierText(verdict);
  if (!last) return "not used in this run";
  const p = last as { phase?: string; error?: unknown; verificationStatus?: Record<string, unknown> };
  const st = p.verificationStatus ?? {};
  const counters = ["failedTasks", "metadataMismatchTasks", "completedTasks", "totalTasks"]
    .filter((k) => typeof st[k] === "number")
    .map((k) => `${k} ${String(st[k])}`);
  return `last seen: phase ${p.phase ?? "?"}${counters.length ? `, ${counters.join(", ")}` : ""}${p.error ? `, error ${JSON.stringify(p.error)}` : ""}`;
}

/** `run --dry-run`: the plan, nothing sent. */
export function planSummary(
  runbook: string,
  steps: readonly { index: number; id: string; kind: string; title: string; requests: number; skipped?: boolean }[],
): string {
  const out = [
    `### syncbook run --dry-run ${cell(runbook)}: 📝 plan of ${plural(steps.length, "step")}, nothing sent`,
    "",
    "| # | step | kind | requests |",
    "|--:|---|---|--:|",
  ];
  for (const s of steps)
    out.push(
      `| ${s.index + 1} | ${cell(s.id)}${s.title && s.title !== s.id ? `: ${cell(s.title)}` : ""} | ${cell(s.kind)}${s.skipped ? " (when: false)" : ""} | ${s.requests} |`,
    );
  return out.join("\n");
}

/** What `run` and `rehearse` hold while they work: a listener, then exactly one summary appended. */
export function commandSummary(command: "run" | "rehearse", file: string, env: NodeJS.ProcessEnv = process.env) {
  const run = createRunSummary();
  let written = false;
  const write = (md: string): void => {
    if (written) return;
    written = true;
    appendSummary(md, env);
  };
  return {
    listener: run.listener,
    seed: run.seed,
    finish: (exitCode: number, verdict?: Verdict, wayOn?: readonly string[]): void =>
      write(run.markdown(command, verdict, exitCode, wayOn)),
    failed: (message: string, exitCode: number): void => write(failedSummary(command, file, message, exitCode)),
    plan: (runbook: string, steps: Parameters<typeof planSummary>[1]): void => write(planSummary(runbook, steps)),
  };
}
export type CommandSummary = ReturnType<typeof commandSummary>;
