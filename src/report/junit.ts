/**
 * junit.xml: a cutover rehearsal shown by CI like a test run. One <testcase> per step: a failed
 * step (an assert that did not hold, a wait that timed out, a refused interlock) is a <failure>,
 * an interrupted step an <error>, a skipped or never-reached step <skipped/>. An interlock
 * refusal is a failure of its step even if the step was later forced through.
 */
import { traitsOf, verificationText } from "../steps/index.js";
import { codeFrame, escapeXml as esc } from "../text.js";
import { formatDuration } from "./model.js";
import type { Report, ReportStep } from "./contract.js";

const secs = (ms: number | undefined): string => ((ms ?? 0) / 1000).toFixed(3);

function caseFor(report: Report, s: ReportStep): { xml: string; failure: boolean; error: boolean; skipped: boolean } {
  const classname = esc(report.runbook);
  const name = esc(`${String(s.index + 1).padStart(2, "0")} ${s.id}${s.kind ? ` (${s.kind})` : ""}`);
  const refusals = s.decisions
    .map((i) => report.decisions[i])
    .filter((d) => d !== undefined && d.kind === "interlock" && !d.ok);
  const open = `    <testcase classname="${classname}" name="${name}" time="${secs(s.durationMs)}"`;
  const out: string[] = [];
  let failure = false;
  let error = false;
  let skipped = false;
  if (s.outcome === "failed" || refusals.length > 0) {
    failure = true;
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
    out.push(`      <failure type="${esc(type)}" message="${esc(message)}">${esc(lines.join("\n"))}</failure>`);
  } else if (s.outcome === "interrupted" || s.outcome === "running") {
    error = true;
    const message =
      s.outcome === "running"
        ? "the step never finished (the run ended or crashed while it ran)"
        : (s.error ?? "interrupted");
    out.push(`      <error type="${s.outcome}" message="${esc(message)}">${esc(message)}</error>`);
  } else if (s.outcome === "skipped" || s.outcome === "pending") {
    skipped = true;
    const message = s.outcome === "pending" ? "not reached" : (s.reason ?? "skipped");
    out.push(`      <skipped message="${esc(message)}"/>`);
  }
  const sysout: string[] = [];
  for (const i of s.decisions) {
    const d = report.decisions[i];
    if (d) sysout.push(`decision ${d.kind}${d.check ? ` ${d.check}` : ""} ${d.ok ? "ok" : "refused"}: ${d.reason}`);
  }
  for (const w of s.slow) sysout.push(`wait.slow after ${formatDuration(w.stalledForMs)}: ${w.detail}`);
  if (s.requests.length > 0) sysout.push(`${s.requests.length} request(s) sent`);
  if (sysout.length > 0) out.push(`      <system-out>${esc(sysout.join("\n"))}</system-out>`);
  const xml = out.length === 0 ? `${open}/>` : `${open}>\n${out.join("\n")}\n    </testcase>`;
  return { xml, failure, error, skipped };
}

export function renderJunit(report: Report): string {
  const cases = report.steps.map((s) => caseFor(report, s));
  // a failure the steps do not show (an interlock outside any step, a run that failed before
  // its first step, a journal that ends mid-run) gets a testcase of its own
  const loose = report.decisions.filter(
    (d) => d.kind === "interlock" && !d.ok && (d.index === undefined || !report.steps.some((s) => s.index === d.index)),
  );
  const stepsFailed = cases.some((c) => c.failure || c.error);
  const runFailed = report.outcome === "failed" || report.outcome === "interrupted" || report.outcome === "unfinished";
  if (loose.length > 0 || (runFailed && !stepsFailed)) {
    const lines = loose.map((d) => `interlock${d.check ? ` ${d.check}` : ""} refused: ${d.reason}`);
    if (runFailed)
      lines.unshift(
        report.message ??
          (report.outcome === "unfinished" ? "the events end before the run finished" : `run ${report.outcome}`),
      );
    const tag = report.outcome === "interrupted" || report.outcome === "unfinished" ? "error" : "failure";
    const message = lines[0] ?? "run failed";
    cases.push({
      xml: `    <testcase classname="${esc(report.runbook)}" name="run" time="${secs(report.durationMs)}">\n      <${tag} type="${tag === "error" ? report.outcome : "run"}" message="${esc(message)}">${esc(lines.join("\n"))}</${tag}>\n    </testcase>`,
      failure: tag === "failure",
      error: tag === "error",
      skipped: false,
    });
  }
  // not verified (src/steps/kit/earned.ts): a case of its own, skipped with why, where the cutover
  // committed or meant to verify; the property says it in every report
  const v = report.verification;
  if (!v.verified && (report.committed || report.steps.some((s) => traitsOf(s.kind).waitsFor === "verifier")))
    cases.push({
      xml: `    <testcase classname="${esc(report.runbook)}" name="verification" time="0.000">\n      <skipped message="${esc(`not verified: ${v.why ?? "no verification was earned"}`)}"/>\n    </testcase>`,
      failure: false,
      error: false,
      skipped: true,
    });
  const count = (k: "failure" | "error" | "skipped"): number => cases.filter((c) => c[k]).length;
  const at =
    report.startedAt > 1e12 ? ` timestamp="${new Date(report.startedAt).toISOString().replace(/\.\d+Z$/, "")}"` : "";
  const attrs = `tests="${cases.length}" failures="${count("failure")}" errors="${count("error")}" skipped="${count("skipped")}" time="${secs(report.durationMs)}"`;
  const props = [
    ["outcome", report.outcome],
    ["committed", String(report.committed)],
    ["verification", verificationText(report.verification)],
    ["mode", report.mode],
    ["file", report.file],
    ["hash", report.hash],
    ["instances", String(report.instances.length)],
  ]
    .map(([k, v]) => `      <property name="${esc(k)}" value="${esc(v)}"/>`)
    .join("\n");
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="syncbook ${esc(report.mode)}" ${attrs}>`,
    `  <testsuite name="${esc(report.runbook)}" ${attrs}${at}>`,
    `    <properties>\n${props}\n    </properties>`,
    ...cases.map((c) => c.xml),
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}
