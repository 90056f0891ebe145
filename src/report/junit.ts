/**
 * junit.xml: a cutover rehearsal shown by CI like a test run. One <testcase> per step: a failed
 * step (an assert that did not hold, a wait that timed out, a refused interlock) is a <failure>,
 * an interrupted step an <error>, a skipped or never-reached step <skipped/>. An interlock
 * refusal is a failure of its step even if the step was later forced through.
 */
import { traitsOf, verificationText } from "../steps/index.js";
import { codeFrame } from "../text.js";
import { renderJunitXml, type JunitCase } from "../junit.js";
import { formatDuration } from "./model.js";
import type { Report, ReportStep } from "./contract.js";

function caseFor(report: Report, s: ReportStep): JunitCase {
  const name = `${String(s.index + 1).padStart(2, "0")} ${s.id}${s.kind ? ` (${s.kind})` : ""}`;
  const refusals = s.decisions
    .map((i) => report.decisions[i])
    .filter((d) => d !== undefined && d.kind === "interlock" && !d.ok);
  const c: JunitCase = { classname: report.runbook, name, timeMs: s.durationMs ?? 0 };
  if (s.outcome === "failed" || refusals.length > 0) {
    const lines = [s.error ?? (refusals.length ? "interlock refused" : "step failed")];
    if (s.place) lines.push(...codeFrame(s.place));
    if (s.hint) lines.push(`hint: ${s.hint}`);
    for (const d of refusals) lines.push(`interlock${d?.check ? ` ${d.check}` : ""} refused: ${d?.reason ?? ""}`);
    if (s.lastWait && !s.lastWait.met)
      for (const f of s.lastWait.failing)
        lines.push(
          `waiting on ${f.instance}: ${f.condition} = ${JSON.stringify(f.value)} for ${formatDuration(f.sinceMs)}`,
        );
    const type = refusals.length > 0 ? "interlock" : s.kind || "step";
    const at = s.place ? ` (${s.place.file}:${s.place.line}:${s.place.column})` : "";
    const message = `${s.error ?? lines[lines.length - 1] ?? "failed"}${at}`;
    c.failure = { tag: "failure", type, message, text: lines.join("\n") };
  } else if (s.outcome === "interrupted" || s.outcome === "running") {
    const message =
      s.outcome === "running"
        ? "the step never finished (the run ended or crashed while it ran)"
        : (s.error ?? "interrupted");
    c.failure = { tag: "error", type: s.outcome, message, text: message };
  } else if (s.outcome === "skipped" || s.outcome === "pending") {
    c.skipped = s.outcome === "pending" ? "not reached" : (s.reason ?? "skipped");
  }
  const sysout: string[] = [];
  for (const i of s.decisions) {
    const d = report.decisions[i];
    if (d) sysout.push(`decision ${d.kind}${d.check ? ` ${d.check}` : ""} ${d.ok ? "ok" : "refused"}: ${d.reason}`);
  }
  for (const w of s.slow) sysout.push(`wait.slow after ${formatDuration(w.stalledForMs)}: ${w.detail}`);
  if (s.requests.length > 0) sysout.push(`${s.requests.length} request(s) sent`);
  if (sysout.length > 0) c.systemOut = sysout.join("\n");
  return c;
}

/** junit.xml of a report, written by the one JUnit writer (src/junit.ts). */
export function renderJunit(report: Report): string {
  const cases = report.steps.map((s) => caseFor(report, s));
  // a failure the steps do not show (an interlock outside any step, a run that failed before
  // its first step, a journal that ends mid-run) gets a testcase of its own
  const loose = report.decisions.filter(
    (d) => d.kind === "interlock" && !d.ok && (d.index === undefined || !report.steps.some((s) => s.index === d.index)),
  );
  const stepsFailed = cases.some((c) => c.failure !== undefined);
  // an `--abort` that ran every owed undo (exit 0) is the operator calling the cutover off, not a
  // run that went wrong: a CI reading a failure there disagreed with the exit code, the terminal,
  // the job summary and the page (ABORTED, `abortWords`); one that did not end so (exit 1) stays a failure
  // (and writes not left stopped: the read model's rule, `calledOff` in src/writes-words.ts)
  const calledOff = report.runs.at(-1)?.ended === "called-off";
  const runFailed =
    !calledOff && (report.outcome === "failed" || report.outcome === "interrupted" || report.outcome === "unfinished");
  if (calledOff && !stepsFailed && loose.length === 0)
    cases.push({
      classname: report.runbook,
      name: "run",
      timeMs: report.durationMs,
      skipped: `called off (--abort)${report.message ? `: ${report.message}` : ""}`,
    });
  if (loose.length > 0 || (runFailed && !stepsFailed)) {
    const lines = loose.map((d) => `interlock${d.check ? ` ${d.check}` : ""} refused: ${d.reason}`);
    if (runFailed)
      lines.unshift(
        report.message ??
          (report.outcome === "unfinished" ? "the events end before the run finished" : `run ${report.outcome}`),
      );
    const tag = report.outcome === "interrupted" || report.outcome === "unfinished" ? "error" : "failure";
    cases.push({
      classname: report.runbook,
      name: "run",
      timeMs: report.durationMs,
      failure: {
        tag,
        type: tag === "error" ? report.outcome : "run",
        message: lines[0] ?? "run failed",
        text: lines.join("\n"),
      },
    });
  }
  // not verified (src/steps/kit/earned.ts): a case of its own, skipped with why, where the cutover
  // committed or meant to verify; the property says it in every report
  const v = report.verification;
  if (!v.verified && (report.committed || report.steps.some((s) => traitsOf(s.kind).waitsFor === "verifier")))
    cases.push({
      classname: report.runbook,
      name: "verification",
      timeMs: 0,
      skipped: `not verified: ${v.why ?? "no verification was earned"}`,
    });
  const timestamp =
    report.startedAt > 1e12 ? new Date(report.startedAt).toISOString().replace(/\.\d+Z$/, "") : undefined;
  return renderJunitXml(
    `syncbook ${report.mode}`,
    [
      {
        name: report.runbook,
        cases,
        timeMs: report.durationMs,
        ...(timestamp ? { timestamp } : {}),
        properties: [
          ["outcome", report.outcome],
          ["committed", String(report.committed)],
          ...(report.commitInDoubt ? [["commitInDoubt", "true"] as [string, string]] : []),
          // the operator's call (`--abort`), as report.json's `aborted` says: "failed" alone read as a
          // run that went wrong where the terminal, the job summary and the page say ABORTED
          ...(report.aborted ? [["aborted", "true"] as [string, string]] : []),
          ["verification", verificationText(report.verification)],
          ["mode", report.mode],
          ["file", report.file],
          ["hash", report.hash],
          ["instances", String(report.instances.length)],
        ],
      },
    ],
    report.durationMs,
  );
}
