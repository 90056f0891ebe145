/**
 * report.html: one self-contained page for the people who ran (or will review) the cutover.
 * Inline CSS, inline SVG drawn by ./svg.ts, no script, no font, no image, no link: it renders the
 * same from a mail attachment, a CI artifact or a laptop with no network.
 *
 * Order: the outcome banner, the facts, the step timeline (chart and table), the curves (copy,
 * lag, events applied, verifier counters), decisions, hooks and commits, commands sent, polls,
 * warnings. Every request and answer is in report.json; the page lists commands in full and
 * summarises polls.
 */
import { codeFrame, escapeXml as esc, formatBytes, verifierDocsText } from "../text.js";
import { formatDuration } from "./model.js";
import type { ProgressSample, Report, ReportPrompt, ReportRequest, ReportRun, ReportStep } from "./contract.js";
import { describeVersionSeen } from "./service-version.js";
import { ganttChart, lineChart, seriesColor, type ChartMarker, type ChartSeries } from "./svg.js";
import { SHARE_WORDS, WINDOW_SHARES, describeWindow, type WindowShare } from "../fleet/window.js";
import { filteredWords, opensWriteStop, verificationText } from "../steps/index.js";
import { nextAfterFailedUndo, undoLeftStopped, writesStillStopped, type UndoLeftStopped } from "../ui/format.js";
import { runbookArg } from "../next-run.js";
import { commandOfPath } from "../api/commands.js";
import { classifyAnswer, type Answer } from "../journal/index.js";
import { instanceLabel } from "../events.js";
import { COMMIT_IN_DOUBT_WORDS, abortWords, reverseInDoubtWords, runEndWords } from "../writes-words.js";

const MAX_REQUEST_ROWS = 1000;

const compact = (n: number): string =>
  Math.abs(n) >= 1e6
    ? `${(n / 1e6).toFixed(1)}M`
    : Math.abs(n) >= 1e4
      ? `${(n / 1e3).toFixed(0)}k`
      : String(Math.round(n * 100) / 100);

function clock(report: Report, t: number): string {
  return report.startedAt > 1e12
    ? new Date(report.startedAt + t)
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, "Z")
    : `+${formatDuration(t)}`;
}

/** `01:52:11 UTC`: a wall time beside the relative one (a journal of epoch times only). */
function utc(at: number): string {
  return at > 1e12 ? `${new Date(at).toISOString().slice(11, 19)} UTC` : "";
}

/** `+1m 12s · 01:52:11 UTC`: a time on the report's axis, with its UTC time. */
function when(report: Report, t: number): string {
  const wall = utc(report.startedAt + t);
  return `+${formatDuration(t)}${wall ? ` · ${wall}` : ""}`;
}

const MODE_WORDS: Record<string, string> = {
  run: "run",
  resume: "--resume",
  rehearse: "rehearsal",
  "dry-run": "--dry-run",
};
/** A run's mode in words: an `--abort` run says so (its mode is `resume`). */
const modeWords = (r: ReportRun): string => (r.abort ? "--abort" : (MODE_WORDS[r.mode] ?? r.mode));

/** How each run ended, one line each: the banner names every run of the cutover. */
function runLines(report: Report): string[] {
  return report.runs.map((r) => {
    const endAt = utc(report.startedAt + r.end);
    const start = utc(r.startedAt);
    const what =
      r.ended === "no-word"
        ? `ended without a word at ${endAt || `+${formatDuration(r.end)}`} (killed, crashed or its machine lost)`
        : r.outcome === "unfinished"
          ? `has no end in the journal (still running, or killed and not resumed yet) after ${endAt || `+${formatDuration(r.end)}`}`
          : `ended ${runEndWords(r)}${endAt ? ` at ${endAt}` : ""}${r.committed ? ", committed" : r.commitInDoubt ? `, ${COMMIT_IN_DOUBT_WORDS}` : ""}`;
    const why = r.split ?? (r.outcome !== "ok" ? r.message : undefined);
    const journal = r.journal ? ` · journal ${r.journal.split(/[\\/]/).pop()}` : "";
    return `run ${r.n} (${modeWords(r)}) started${start ? ` at ${start}` : ` at +${formatDuration(r.start)}`}, ${what}${why ? `: ${why}` : ""}${journal}`;
  });
}

/** The time no runner was alive, in words: `no runner: the run ended without a word at …; resumed at …`. */
function gapLine(report: Report, g: NonNullable<Report["gaps"]>[number]): string {
  const from = utc(g.from) || `+${formatDuration(g.t)}`;
  const to = utc(g.to) || `+${formatDuration(g.t + g.ms)}`;
  return g.how === "killed"
    ? `no runner: the run ended without a word at ${from}; resumed at ${to} (${formatDuration(g.ms)})`
    : `no runner: run ${g.after} ended at ${from}; run ${g.after + 1} started at ${to} (${formatDuration(g.ms)})`;
}

/**
 * The commits section without a fan-out that ended: a commit sent whose runner was killed before
 * its answers said "No commit was sent." under a banner of a commit in doubt (a review).
 */
function noCommitEnded(report: Report): string {
  const inDoubt = commitDoubtWords(report);
  if (inDoubt !== undefined)
    return `<p class="warn">${esc(`No commit fan-out ended (its requests are under Commands sent): ${inDoubt}`)}</p>`;
  const sent = commitAnswers(report);
  if (!sent.size) return "<p>No commit was sent.</p>";
  // sent and refused: "No commit was sent." of it told the post-mortem the run never got that far
  const by = (a: Answer): string[] => [...sent].flatMap(([label, b]) => (b === a ? [label] : []));
  const [ok, no, lost] = [by("ok"), by("error"), by("unknown")];
  const parts = [
    ...(ok.length ? [`accepted by ${ok.join(", ")}`] : []),
    ...(no.length ? [`refused by ${no.join(", ")}`] : []),
    ...(lost.length ? [`no usable answer from ${lost.join(", ")}`] : []),
  ];
  const effect =
    !ok.length && !lost.length ? ": it took no effect" : "; commit applies only once every instance has it";
  return `<p>${esc(`A commit was sent and no fan-out of it ended (${parts.join("; ")})${effect}. Its requests are under Commands sent.`)}</p>`;
}

/** Each instance's best answer over every commit request it was sent (ok over unknown over refused), by its label. */
function commitAnswers(report: Report): Map<string, Answer> {
  const rank: readonly Answer[] = ["error", "unknown", "ok"];
  const best = new Map<string, Answer>();
  for (const r of report.requests) {
    if (r.target !== "service" || commandOfPath(r.path) !== "commit") continue;
    // no answer journaled: it may have reached the instance
    const a = r.answer
      ? classifyAnswer({ ok: r.answer.ok, body: r.answer.body, error: r.answer.error }).answered
      : "unknown";
    const label = r.instance ? instanceLabel(r.instance) : r.path;
    const was = best.get(label);
    if (was === undefined || rank.indexOf(a) > rank.indexOf(was)) best.set(label, a);
  }
  return best;
}

function snippet(v: unknown, max = 160): string {
  if (v === undefined) return "";
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

const VERIFIER_COLORS: Record<string, string> = {
  totalTasks: "#455a64",
  completedTasks: "#2e7d32",
  processingTasks: "#1565c0",
  addedTasks: "#64b5f6",
  failedTasks: "#c62828",
  metadataMismatchTasks: "#ef6c00",
  recheckTasks: "#8e24aa",
};

/** The chart series of a report, by chart. Exported for tests: the counts must match the events. */
export function chartSeries(report: Report): {
  copy: ChartSeries[];
  lag: ChartSeries[];
  events: ChartSeries[];
  verifier: ChartSeries[];
} {
  const copy: ChartSeries[] = [];
  const lag: ChartSeries[] = [];
  const events: ChartSeries[] = [];
  report.progress.forEach((s, i) => {
    const color = seriesColor(i);
    copy.push({
      key: `copy:${s.label}`,
      label: s.label,
      color,
      points: s.samples.map(
        (x) =>
          [x.t, x.copiedBytes !== undefined && x.totalBytes ? (100 * x.copiedBytes) / x.totalBytes : null] as const,
      ),
    });
    lag.push({
      key: `lag:${s.label}`,
      label: s.label,
      color,
      points: s.samples.map((x) => [x.t, x.lagSeconds ?? null] as const),
    });
    events.push({
      key: `events:${s.label}`,
      label: s.label,
      color,
      points: s.samples.map((x) => [x.t, x.eventsApplied ?? null] as const),
    });
  });
  // estimatedTotalBytes is global and estimatedCopiedBytes per instance: the fleet's progress is
  // the sum of the instances' latest copied bytes over the largest latest total.
  if (report.progress.length > 1) {
    const all = report.progress.flatMap((s, i) => s.samples.map((x) => ({ i, x }))).sort((a, b) => a.x.t - b.x.t);
    const copied = new Map<number, number>();
    const total = new Map<number, number>();
    const fleet: [number, number | null][] = [];
    let sum = 0;
    let tot = 0;
    let lastT = 0;
    // one point per polling round (a round ends when an instance answers a second time), so the
    // line does not zigzag between the instances' answers of one round
    const seen = new Set<number>();
    const flush = (): void => {
      if (seen.size > 0 && tot > 0) fleet.push([lastT, Math.min(100, (100 * sum) / tot)]);
      seen.clear();
    };
    for (const { i, x } of all) {
      if (x.copiedBytes === undefined || !x.totalBytes) continue;
      if (seen.has(i)) flush();
      seen.add(i);
      sum += x.copiedBytes - (copied.get(i) ?? 0);
      copied.set(i, x.copiedBytes);
      if (total.get(i) !== x.totalBytes) {
        total.set(i, x.totalBytes);
        tot = 0;
        for (const v of total.values()) tot = Math.max(tot, v);
      }
      lastT = x.t;
    }
    flush();
    copy.unshift({ key: "copy:fleet", label: "fleet (sum)", color: "#212121", points: fleet, width: 2.4, dash: true });
  }
  const counters = [...new Set(report.verifierSamples.flatMap((s) => Object.keys(s.counters)))];
  const known = Object.keys(VERIFIER_COLORS);
  counters.sort((a, b) => (known.indexOf(a) + 1 || 99) - (known.indexOf(b) + 1 || 99) || a.localeCompare(b));
  const verifier = counters.map((c, i) => ({
    key: `verifier:${c}`,
    label: c,
    color: VERIFIER_COLORS[c] ?? seriesColor(i + 3),
    points: report.verifierSamples.map((s) => [s.t, s.counters[c] ?? null] as const),
    width: c === "failedTasks" ? 2.4 : 1.6,
  }));
  return { copy, lag, events, verifier };
}

/** The chart markers: writes off, commit, canWrite, COMMITTED, writes on, undo, runs, interruptions, failures. */
function markers(report: Report): ChartMarker[] {
  const out: ChartMarker[] = report.markers.map((m) => ({ t: m.t, label: MARKER_LABEL[m.kind] ?? m.label }));
  // reports of older journals (no window.opened): the stopWrites step's end
  if (!report.markers.some((m) => m.kind === "writes-stopped"))
    for (const s of report.steps)
      if (opensWriteStop(s.kind) && s.outcome === "ok" && s.end !== undefined)
        out.push({ t: s.end, label: "writes off" });
  return out.sort((a, b) => a.t - b.t);
}

const MARKER_LABEL: Partial<Record<Report["markers"][number]["kind"], string>> = {
  "writes-stopped": "writes off",
  "commit-sent": "commit",
};

/** A commit that may hold, and the way to settle it (the fleet): the banner's words, and the commits section's. */
function commitDoubtWords(report: Report): string | undefined {
  const d = report.commitInDoubt;
  if (!d) return undefined;
  return `${COMMIT_IN_DOUBT_WORDS}${d.instances.length ? `: ${d.instances.join(", ")} may hold it` : ""}. Writes must not go back on the source while it may hold. ${seeFleet(report)}`;
}

/**
 * Where to see what a command in doubt did: the fleet, through status. A rehearsal's fleet is its
 * simulator, stopped with it: `syncbook status` there reads the real one (an adversarial run).
 */
function seeFleet(report: Report): string {
  return report.mode === "rehearse"
    ? "Its simulator stopped with the rehearsal: the rehearsal's verdict, at its end, says whether it took effect."
    : `See the fleet: syncbook status ${runbookOf(report)}`;
}

function banner(report: Report): string {
  const failed = report.steps.find((s) => s.index === report.failedStep);
  let headline: string;
  let detail = "";
  switch (report.outcome) {
    case "ok": {
      // a run stopped at --to left its cutover open, its later steps not run: no "succeeded" (status
      // and the watch page say "ended ok at --to …, before the runbook's end")
      const to = stoppedAt(report);
      if (to !== undefined) {
        headline = `STOPPED AT --to ${to}${report.commitInDoubt ? "" : " · NOT COMMITTED"}`;
        // a rehearsal journals nothing: its --resume and status would act on the real fleet
        detail =
          report.mode === "rehearse"
            ? `The rehearsal ended ok at --to ${to}, before the runbook's end: the steps after it have not run. Its simulator stopped with it: rehearse again to go further.`
            : `The last run ended ok at --to ${to}, before the runbook's end: the steps after it have not run, and the cutover goes on (--resume): syncbook status ${runbookOf(report)} shows where, and the command that continues it.`;
        break;
      }
      headline = report.committed ? "COMMITTED" : "SUCCEEDED";
      const trouble = troubleOnTheWay(report);
      detail = trouble.length
        ? `${report.committed ? "The sync was committed" : "The last run finished"}, though not every step succeeded on the way: ${trouble.join("; ")}.`
        : report.committed
          ? "Every step succeeded and the sync was committed."
          : "Every step succeeded.";
      // never "every step succeeded" alone where nothing verified the cutover (src/steps/kit/earned.ts)
      detail += report.verification.verified
        ? ` A verify step passed on this cutover's verification result${report.verification.filter !== undefined ? `, which covers ${filteredWords(report.verification.filter)}` : ""}.`
        : ` It is not verified: ${report.verification.why ?? "no verification was earned"}; the documentation says to always verify a successful sync before moving the application.`;
      break;
    }
    case "failed":
      if (report.aborted) {
        headline = abortWords({ exitCode: report.exitCode ?? 1, ...(report.undoKeptOff ? { undoKeptOff: true } : {}) });
        detail = report.message ?? "";
        break;
      }
      headline = report.committed ? "FAILED AFTER COMMIT" : "FAILED";
      detail = failed
        ? `at step ${failed.index + 1} ${failed.id} (${failed.kind}): ${failed.error ?? "failed"}`
        : (report.message ?? "");
      break;
    case "interrupted":
      headline = "INTERRUPTED";
      detail = failed ? `during step ${failed.index + 1} ${failed.id} (${failed.kind})` : (report.message ?? "");
      break;
    case "skipped":
      headline = "SKIPPED";
      break;
    default:
      headline = "UNFINISHED";
      detail = `The events end before the run finished${failed ? `, during step ${failed.index + 1} ${failed.id}` : ""}: the process crashed, was killed, or the journal was cut short. Next: what the fleet and the journal show now, and the way on (syncbook status ${runbookOf(report)}); a journal read later may already hold more (syncbook report again).`;
  }
  // a commit that may hold: "FAILED" or "SUCCEEDED" alone reads as nothing committed, and writes
  // back on the source then would be lost to the destination
  if (report.commitInDoubt) headline += " · COMMIT IN DOUBT";
  // "FAILED AFTER COMMIT" alone reads as the destination taking writes, which a reverse that
  // reached the fleet has ended (the paragraph below says how; the run's job summary says so too)
  if (report.reverseInDoubt) headline += " · REVERSE IN DOUBT";
  // the verdict where every output says it (src/steps/kit/earned.ts `verificationShown`)
  const verdict = report.verification.headline;
  if (verdict !== undefined) headline += ` · ${verdict}`;
  const hint = failed?.hint && !report.aborted ? `<p class="hint">hint: ${esc(failed.hint)}</p>` : "";
  const stuck = writesLeftStopped(report);
  // the run's message is the failed step's error again (`step <id> failed: <error>`, src/run/runner.ts)
  // where it says nothing more: the banner said it twice, one above the other
  const sameAsStep = failed?.error !== undefined && report.message === `step ${failed.id} failed: ${failed.error}`;
  const msg = report.message && !detail.includes(report.message) && !sameAsStep ? `<p>${esc(report.message)}</p>` : "";
  const cls =
    report.outcome === "ok"
      ? report.verification.verified
        ? "ok"
        : "warn"
      : report.outcome === "failed"
        ? "failed"
        : "warn";
  // which sync runs after a reverse on its way only the fleet can say: never "committed" alone
  const inDoubt = commitDoubtWords(report);
  const commitDoubt = inDoubt !== undefined ? `<p class="warn">${esc(inDoubt)}</p>` : "";
  const doubt = report.reverseInDoubt
    ? `<p class="warn">${esc(`${reverseInDoubtWords(report.reverseInDoubt.step)} (sent to ${report.reverseInDoubt.instances.join(", ")}). ${seeFleet(report)}`)}</p>`
    : "";
  // a cutover of several runs: each named, with how it ended (issue 37)
  const runs =
    report.runs.length > 1 || (report.cutover?.journals.length ?? 0) > 1
      ? `<ul class="runs">${runLines(report)
          .map((l) => `<li>${esc(l)}</li>`)
          .join("")}</ul>`
      : "";
  const cutover = report.cutover?.id
    ? `<p class="cutover">cutover ${esc(report.cutover.id)}${report.cutover.report ? ` · the cutover's report, every run of it: <code>${esc(report.cutover.report)}</code>` : ""}</p>`
    : "";
  return `<header id="outcome" class="banner ${cls}" data-outcome="${esc(report.outcome)}" data-committed="${report.committed}"${report.commitInDoubt ? ' data-commit-in-doubt="true"' : ""} data-verified="${report.verification.verified}">
<h1>${esc(headline)} <span class="runbook">${esc(report.runbook)}</span></h1>
${detail ? `<p>${esc(detail)}</p>` : ""}${msg}${hint}${stuck ? stuckWrites(report, stuck) : ""}${commitDoubt}${doubt}${runs}${cutover}
</header>`;
}

/** The --to step a run that ended ok stopped at, its cutover not committed: open, its later steps not run. */
const stoppedAt = (report: Report): string | undefined =>
  report.outcome === "ok" && !report.committed ? report.runs.at(-1)?.to : undefined;

/** The last stopWrites whose last undo failed: the application is still down (the run's summary and `status` say the same). */
function writesLeftStopped(report: Report): UndoLeftStopped | undefined {
  return undoLeftStopped(report.steps, (i) => report.hooks.filter((h) => h.index === i), {
    rehearsal: report.mode === "rehearse",
    committed: report.committed,
    writesOnSeen: report.window?.writesOnAt !== undefined,
  });
}

/**
 * The runbook as the commands the report offers name it: its file, with the `--journal-dir` its
 * run was given (src/next-run.ts `runbookArgs`); a placeholder when the journal named none.
 */
const runbookOf = (report: Report): string =>
  report.file ? runbookArg({ file: report.file, journalDir: report.journalDir }) : "<runbook>";

function stuckWrites(report: Report, stuck: UndoLeftStopped): string {
  const w = writesStillStopped(stuck);
  const failed = report.steps.find((s) => s.index === report.failedStep);
  // a rehearsal's offers none: its --abort and --resume would act on the runbook's real fleet
  const next = stuck.rehearsal
    ? []
    : nextAfterFailedUndo(runbookOf(report), stuck, failed ? { number: failed.index + 1, id: failed.id } : undefined);
  return `<div id="writes-still-stopped" class="alarm"><p><strong>${esc(w.headline)}</strong></p>
<pre>${esc(w.undo.join("\n"))}</pre><p>${esc(w.advice)}</p>${next.length ? `<pre>${esc(next.join("\n"))}</pre>` : ""}</div>`;
}

/**
 * What went wrong before a run that ended well: earlier runs that failed, were interrupted or
 * killed (then resumed), step attempts that failed (a later run did them again, or
 * continueOnError let the run go on), hooks and undos that failed. A header that says "every
 * step succeeded" over those would be the report lying about the night.
 */
function troubleOnTheWay(report: Report): string[] {
  const out: string[] = [];
  for (const r of report.runs.slice(0, -1))
    if (r.outcome !== "ok")
      out.push(
        `run ${r.n} (${modeWords(r)}) ${r.outcome === "unfinished" ? "ended without finishing (killed or crashed)" : runEndWords(r)}`,
      );
  for (const s of report.steps)
    for (const a of s.attempts)
      if (a.outcome === "failed" || a.outcome === "interrupted")
        out.push(`step ${s.index + 1} ${s.id} ${a.outcome} in run ${a.run}${a.error ? ` (${a.error})` : ""}`);
  for (const h of report.hooks)
    if (h.ok === false)
      out.push(`${h.undo ? "the undo of" : "the hook of"} step ${h.index + 1} ${h.id} (${h.use}) failed`);
  if (out.length && report.runs.length > 1) out.push(`${report.runs.length} runs in all`);
  return out;
}

function facts(report: Report): string {
  const runs = report.runs;
  const w = report.window;
  const rows: [string, string][] = [
    ["file", report.file || "–"],
    ["mode", report.mode],
    ["started", clock(report, 0)],
    [runs.length > 1 ? "span (first start → last event)" : "duration", formatDuration(report.durationMs)],
  ];
  if (runs.length > 1)
    rows.push([
      "runs",
      `${runs.length}: ${runs.map((r) => `run ${r.n} (${modeWords(r)}) ${runEndWords(r)}, ${formatDuration(r.durationMs)}`).join("; ")}`,
    ]);
  rows.push(
    ["exit code", report.exitCode === undefined ? "–" : String(report.exitCode)],
    [
      "instances",
      `${report.instances.length}: ${report.instances.map((i) => (i.name ? `${i.name} (${i.url})` : i.url)).join(", ")}`,
    ],
    ["verifier", report.verifier ?? "–"],
    // verified or why not in the words every output uses: a FAILED AFTER COMMIT banner says neither
    ["verification", verificationText(report.verification)],
    ["verifier's last sample", verifierSample(report)],
    ["write-stop window", w ? windowLine(w) : "writes were not stopped by this runbook's steps"],
    [
      "requests",
      `${report.counts.requests} (${report.counts.commands} commands, ${report.counts.polls} progress reads; ${report.counts.failedRequests} failed, ${report.counts.unanswered} unanswered)`,
    ],
    ["decisions", String(report.decisions.length)],
    ["runbook hash", report.hash || "–"],
  );
  return `<dl class="facts">${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")}</dl>`;
}

/** The verifier's last sample: its phase, generation, documents compared of the total and the counters that judge it. */
function verifierSample(report: Report): string {
  const last = report.verifierSamples.at(-1);
  if (!last) return "–";
  const parts = [`phase ${last.phase ?? "?"}`];
  if (last.generation !== undefined) parts.push(`generation ${last.generation}`);
  if (last.docsCompared !== undefined && last.totalDocs !== undefined) {
    const gen0 =
      last.gen0DocsCompared !== undefined && last.gen0TotalDocs !== undefined
        ? { compared: last.gen0DocsCompared, total: last.gen0TotalDocs }
        : undefined;
    parts.push(verifierDocsText(last.generation, { compared: last.docsCompared, total: last.totalDocs }, gen0));
  }
  for (const k of ["failedTasks", "metadataMismatchTasks"])
    if (last.counters[k] !== undefined) parts.push(`${k} ${last.counters[k]}`);
  if (last.error) parts.push(`error ${last.error}`);
  return parts.join(", ");
}

const SHARE_COLOR: Record<WindowShare, string> = {
  service: "#1565c0",
  runner: "#c62828",
  operator: "#6a1b9a",
  steps: "#546e7a",
  none: "#9e9e9e",
};

/** The window in one line (one wording for every output: src/fleet/window.ts). */
const windowLine = describeWindow;

function windowSection(report: Report): string {
  const w = report.window;
  if (!w)
    return `<p>No stopWrites step succeeded in these events: the application's downtime is not measured here${report.steps.some((s) => opensWriteStop(s.kind)) ? "" : " (writes stopped outside the runbook, if at all)"}.</p>`;
  const total = Math.max(1, w.measuredMs);
  const bar = WINDOW_SHARES.filter((k) => w.shares[k] > 0)
    .map(
      (k) =>
        `<span class="share" data-share="${k}" data-ms="${Math.round(w.shares[k])}" style="width:${((100 * w.shares[k]) / total).toFixed(2)}%;background:${SHARE_COLOR[k]}" title="${esc(`${SHARE_WORDS[k]} ${formatDuration(w.shares[k])}`)}"></span>`,
    )
    .join("");
  // "no runner" only when some runner was not alive in the window
  const legend = WINDOW_SHARES.filter((k) => k !== "none" || w.shares.none > 0)
    .map(
      (k) =>
        `<li><span class="swatch" style="background:${SHARE_COLOR[k]}"></span>${esc(SHARE_WORDS[k])} <strong>${esc(formatDuration(w.shares[k]))}</strong></li>`,
    )
    .join("");
  const rows = w.parts.map(
    (p) =>
      `<tr data-share="${p.share}"><td class="num">${esc(when(report, p.from - report.startedAt))}</td><td>${esc(SHARE_WORDS[p.share])}</td><td>${esc(p.what)}</td><td class="num">${esc(formatDuration(p.ms))}</td></tr>`,
  );
  const more =
    report.windows.length > 1
      ? `<p class="note">Writes were stopped ${report.windows.length} times; this is the last window. Earlier: ${report.windows
          .slice(0, -1)
          .map((x) => esc(windowLine(x)))
          .join("; ")}.</p>`
      : "";
  const bounds =
    w.unmetAt !== undefined && w.closedAt !== undefined
      ? `<p class="note">canWrite turned true between +${esc(formatDuration(w.unmetAt - report.startedAt))} (the last answer with canWrite false) and +${esc(formatDuration(w.closedAt - report.startedAt))} (the read that showed it): the runner's share counts that interval, as far as polls can tell.</p>`
      : "";
  const end = w.writesOnAt ?? w.closedAt ?? Infinity;
  const dead = (report.gaps ?? []).filter((g) => g.to > w.measuredFrom && g.from < end);
  const gaps = dead.length
    ? `<ul class="gaps">${dead.map((g) => `<li data-how="${g.how}">${esc(gapLine(report, g))}</li>`).join("")}</ul>`
    : "";
  // a prompt counts in the window when the person's time (asked, then answered) overlaps it; the
  // others are listed apart, so that a confirm answered before the stop never reads as downtime
  const during = (p: ReportPrompt): boolean => p.at >= w.measuredFrom && p.at - (p.waitedMs ?? 0) < end;
  const promptLine = (p: ReportPrompt): string =>
    `${when(report, p.t)}: ${p.kind === "--step" ? `--step prompt before ${p.id ?? "a step"}` : `confirm${p.id ? ` (${p.id})` : ""}: ${p.question ?? ""}`}: ${p.answer}, answered by ${p.by}${p.waitedMs !== undefined ? ` after ${formatDuration(p.waitedMs)}` : ""}`;
  const inside = (report.prompts ?? []).filter(during);
  const outside = (report.prompts ?? []).filter((p) => !during(p));
  const prompts =
    (inside.length
      ? `<ul class="prompts" data-in-window="true">${inside.map((p) => `<li>${esc(`${promptLine(p)} (in the window: the operator's time, never the runner's)`)}</li>`).join("")}</ul>`
      : "") +
    (outside.length
      ? `<p class="note">Prompts outside this window (not part of its downtime):</p><ul class="prompts" data-in-window="false">${outside.map((p) => `<li>${esc(promptLine(p))}</li>`).join("")}</ul>`
      : "");
  return `<p class="window-total" data-ms="${Math.round(w.durationMs ?? w.measuredMs)}" data-open="${w.open}"><strong>${esc(windowLine(w))}</strong></p>
<div class="sharebar" role="img" aria-label="write-stop window by share">${bar}</div>
<ul class="legend">${legend}</ul>${gaps}${prompts}${bounds}${more}
<table id="window-parts"><thead><tr><th>from</th><th>share</th><th>what</th><th>took</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function recordSection(report: Report): string {
  const r = report.record;
  const seen = describeVersionSeen(r.serviceVersionSeen);
  const rows: [string, string][] = [
    [
      "ran by",
      r.by.length
        ? r.by
            .map((b) => `${b.user} on ${b.host}${report.runs.length > 1 ? ` (run ${b.runs.join(", ")})` : ""}`)
            .join("; ")
        : "not recorded (a journal of an older syncbook)",
    ],
    ["syncbook", r.syncbook.length ? r.syncbook.join(", ") : "not recorded"],
    [
      "runbook",
      `${r.runbook.name}${r.runbook.file ? ` (${r.runbook.file})` : ""}${r.runbook.format !== undefined ? `, format ${r.runbook.format}` : ""}`,
    ],
    ["runbook sha256", r.runbook.hash || "–"],
    ["service version declared", r.runbook.serviceVersion ?? "not declared"],
    ["service version seen", seen ?? "no progress answer was read"],
  ];
  const decisions = r.interlocks.map((i) => {
    const d = report.decisions[i];
    if (!d) return "";
    const step = report.steps.find((s) => s.index === d.index);
    return `<tr class="${d.ok ? "" : "bad"}" data-check="${esc(d.check ?? d.kind)}" data-ok="${d.ok}"><td class="num">+${esc(formatDuration(d.t))}</td><td>${esc(step?.id ?? d.id ?? "")}</td><td>${esc(d.check ?? d.kind)}</td><td>${d.kind === "force" ? "forced" : d.ok ? "passed" : "<strong>refused</strong>"}</td><td>${esc(d.reason)}</td></tr>`;
  });
  const v = r.verifier;
  const counters = v
    ? Object.entries(v.counters)
        .map(
          ([k, n]) =>
            `<tr${(k === "failedTasks" || k === "metadataMismatchTasks") && n > 0 ? ' class="bad"' : ""}><td>${esc(k)}</td><td class="num">${n}</td></tr>`,
        )
        .join("")
    : "";
  return `<dl class="facts">${rows.map(([k, val]) => `<dt>${esc(k)}</dt><dd>${esc(val)}</dd>`).join("")}</dl>
${r.serviceVersionMismatch ? `<p class="err">${esc(r.serviceVersionMismatch)}</p>` : ""}
<h3>Interlock decisions (${decisions.length})</h3>
${decisions.length ? `<table id="interlocks"><thead><tr><th>at</th><th>step</th><th>check</th><th>result</th><th>reason</th></tr></thead><tbody>${decisions.join("")}</tbody></table>` : "<p>No interlock was consulted.</p>"}
<h3>Verifier, final counters</h3>
${v ? `<p>phase <strong>${esc(v.phase ?? "?")}</strong> at +${esc(formatDuration(v.t))}${v.error ? ` <span class="err">error: ${esc(v.error)}</span>` : ""}</p><table id="verifier-final"><tbody>${counters}</tbody></table>` : "<p>The verifier was not read.</p>"}
${r.verifierSeen ? `<ul id="verifier-seen">${r.verifierSeen.map((x) => `<li>+${esc(formatDuration(x.t))}: ${esc(x.text)}</li>`).join("")}</ul>` : ""}`;
}

function runsTable(report: Report): string {
  if (report.runs.length < 2) return "";
  const rows = report.runs.map(
    (r) =>
      `<tr data-run="${r.n}" data-outcome="${esc(r.outcome)}"><td class="num">${r.n}</td><td>${esc(modeWords(r))}</td><td class="num">${esc(when(report, r.start))}</td><td class="num">${esc(formatDuration(r.durationMs))}</td><td><span class="badge ${esc(r.outcome === "unfinished" ? "running" : r.ended === "called-off" ? "skipped" : r.outcome)}">${esc(r.outcome === "unfinished" ? "crashed" : runEndWords(r))}</span></td><td>${esc(r.by ? `${r.by.user}@${r.by.host} (pid ${r.by.pid})` : "")}</td><td>${esc(r.message ?? "")}</td></tr>`,
  );
  return `<table id="runs"><thead><tr><th>run</th><th>mode</th><th>start</th><th>took</th><th>outcome</th><th>by</th><th>message</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function stepRow(report: Report, s: ReportStep): string {
  const notes: string[] = [];
  if (s.error) notes.push(`<div class="err">${esc(s.error)}</div>`);
  if (s.place) notes.push(`<pre class="place">${esc(codeFrame(s.place).join("\n"))}</pre>`);
  if (s.hint) notes.push(`<div class="hint">hint: ${esc(s.hint)}</div>`);
  if (s.reason) notes.push(`<div>${esc(s.reason)}</div>`);
  if (s.resumeNote) notes.push(`<div>${esc(s.resumeNote)}</div>`);
  if (s.attempts.length > 1 || (report.runs.length > 1 && s.attempts.length === 1))
    notes.push(
      `<div class="attempts">${s.attempts.map((a) => esc(`run ${a.run}: ${a.outcome === "running" ? "no end (crash)" : a.outcome}${a.durationMs !== undefined ? ` after ${formatDuration(a.durationMs)}` : ""}`)).join("; ")}</div>`,
    );
  if (s.lastWait && !s.lastWait.met && s.outcome !== "ok") {
    for (const f of s.lastWait.failing)
      notes.push(
        `<div>waiting on ${esc(f.instance)}: ${esc(f.condition)} = ${esc(snippet(f.value, 60))} for ${esc(formatDuration(f.sinceMs))}</div>`,
      );
  }
  for (const w of s.slow)
    notes.push(`<div class="warn">stalled ${esc(formatDuration(w.stalledForMs))}: ${esc(w.detail)}</div>`);
  for (const i of s.decisions) {
    const d = report.decisions[i];
    if (d && !d.ok)
      notes.push(`<div class="err">${esc(d.kind)}${d.check ? ` ${esc(d.check)}` : ""} refused: ${esc(d.reason)}</div>`);
  }
  return `<tr data-step="${esc(s.id)}" data-outcome="${esc(s.outcome)}"><td class="num">${s.index + 1}</td><td><code>${esc(s.id)}</code></td><td>${esc(s.kind)}</td><td>${esc(s.title)}</td><td class="num">${s.start === undefined ? "–" : esc(`+${formatDuration(s.start)}`)}</td><td class="num">${s.durationMs === undefined ? "–" : esc(formatDuration(s.durationMs))}</td><td><span class="badge ${esc(s.outcome)}">${esc(stepOutcomeWords(report, s))}</span></td><td class="num">${s.requests.length}</td><td>${notes.join("")}</td></tr>`;
}

/**
 * A step's outcome in its badge. One that started and has no end is "cut off" once its run ended
 * or a later run began (as `status` says it); only in the last run, with no end, may it still run.
 * "running" of a step whose runner was killed hours before told the post-mortem it still ran.
 */
function stepOutcomeWords(report: Report, s: ReportStep): string {
  if (s.outcome !== "running") return s.outcome;
  const run = report.runs.find((r) => r.n === s.attempts.at(-1)?.run);
  return run && (run.outcome !== "unfinished" || run.n < report.runs.length)
    ? "cut off"
    : "no end (running, or cut off)";
}

/**
 * What later service versions report besides the charted fields (src/api/versions.ts): each
 * instance's latest ping latency, CEA catch-up estimate and index builds, and every distinct
 * warning the service raised, when first seen. Nothing when the answers had none of them.
 */
function serviceNotes(report: Report): string {
  const rows: string[] = [];
  const warnings = new Map<string, { t: number; who: Set<string> }>();
  for (const s of report.progress) {
    const last = <K extends keyof ProgressSample>(k: K): ProgressSample[K] | undefined =>
      [...s.samples].reverse().find((x) => x[k] !== undefined)?.[k];
    const ping = last("pingLatencyMs");
    const catchup = last("ceaCatchupSeconds");
    const building = last("indexBuilding");
    if (ping !== undefined || catchup !== undefined || building !== undefined)
      rows.push(
        `<tr><td>${esc(s.label)}</td><td class="num">${ping === undefined ? "–" : esc(formatDuration(ping))}</td><td class="num">${catchup === undefined ? "–" : esc(formatDuration(catchup * 1000))}</td><td><code>${building === undefined ? "–" : esc(snippet(building, 120))}</code></td></tr>`,
      );
    for (const x of s.samples)
      for (const w of x.warnings ?? []) {
        const seen = warnings.get(w) ?? { t: x.t, who: new Set<string>() };
        seen.who.add(s.label);
        warnings.set(w, seen);
      }
  }
  if (rows.length === 0 && warnings.size === 0) return "";
  const table = rows.length
    ? `<table><thead><tr><th>instance</th><th>ping latency</th><th>CEA catch-up (estimate)</th><th>index builds</th></tr></thead><tbody>${rows.join("")}</tbody></table>`
    : "";
  const list = warnings.size
    ? `<h3>Warnings the service raised (${warnings.size})</h3><ul>${[...warnings].map(([w, v]) => `<li>+${esc(formatDuration(v.t))} ${esc([...v.who].join(", "))}: ${esc(w)}</li>`).join("")}</ul>`
    : "";
  return `<section id="service-notes"><h2>Service</h2>${table}${list}</section>`;
}

function where(r: ReportRequest): string {
  return r.instance ? (r.instance.name ?? r.instance.url) : r.target;
}

function requestRow(report: Report, r: ReportRequest): string {
  const a = r.answer;
  const status = a ? (a.status === undefined ? (a.error ? "error" : "–") : String(a.status)) : "no answer";
  const step = report.steps.find((s) => s.index === r.step);
  return `<tr class="${a?.ok ? "" : "bad"}"><td class="num">${r.id}</td><td class="num">+${esc(formatDuration(r.t))}</td><td>${esc(step?.id ?? "")}</td><td>${esc(where(r))}</td><td><code>${esc(r.method)} ${esc(r.path)}</code></td><td class="num">${esc(status)}</td><td class="num">${a ? esc(formatDuration(a.durationMs)) : "–"}</td><td><code>${esc(snippet(r.body))}</code></td><td><code>${esc(a?.error ?? snippet(a?.body))}</code></td></tr>`;
}

const MAX_FAILURE_ROWS = 1000;

function pollSummary(report: Report): string {
  if (report.polls.length === 0) return "<p>No progress was read.</p>";
  const ms = (v: number | undefined): string => (v === undefined ? "–" : formatDuration(v));
  const rows = report.polls.map(
    (g) =>
      `<tr class="${g.failed ? "bad" : ""}" data-target="${esc(g.label)}" data-count="${g.count}" data-failed="${g.failed}"><td>${esc(g.label)}</td><td><code>GET ${esc(g.path)}</code></td><td class="num">${g.count}</td><td class="num">${g.failed}</td><td class="num">${esc(ms(g.p50Ms))}</td><td class="num">${esc(ms(g.p95Ms))}</td><td class="num">${esc(ms(g.maxMs))}</td></tr>`,
  );
  const failures = report.pollFailures
    .slice(0, MAX_FAILURE_ROWS)
    .map(
      (f) =>
        `<tr class="bad"><td class="num">+${esc(formatDuration(f.t))}</td><td>${esc(f.label)}</td><td><code>GET ${esc(f.path)}</code></td><td class="num">${f.status ?? "–"}</td><td class="num">${esc(formatDuration(f.durationMs))}</td><td>${esc(f.error)}</td></tr>`,
    );
  const cut =
    report.pollFailures.length > MAX_FAILURE_ROWS
      ? `<p class="note">The first ${MAX_FAILURE_ROWS} of ${report.pollFailures.length} failures; report.json has them all.</p>`
      : "";
  return `<p class="note">Every progress read, counted (p50/p95 from a latency histogram, within ≈19 %); each failure below with its error.</p>
<table id="polls"><thead><tr><th>where</th><th>request</th><th>count</th><th>failed</th><th>p50</th><th>p95</th><th>max</th></tr></thead><tbody>${rows.join("")}</tbody></table>
${failures.length ? `<h3>Failed reads (${report.pollFailures.length})</h3><table id="poll-failures"><thead><tr><th>at</th><th>where</th><th>request</th><th>status</th><th>took</th><th>error</th></tr></thead><tbody>${failures.join("")}</tbody></table>${cut}` : "<p>No read failed.</p>"}`;
}

// Banners set the text colour of every descendant at a higher specificity than page classes
// (the INTERRUPTED banner was once `.warn` text, orange, on orange), and never dim text with
// opacity: each banner's text is at least WCAG AA (4.5:1) on its background, which
// scripts/browser-check.mjs measures in Chromium for every banner kind. White on orange is
// 3:1 at best, so the orange (INTERRUPTED, SKIPPED, UNFINISHED) banner has dark text.
const CSS = `
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1d2329;background:#f5f6f8}
main{max-width:1160px;margin:0 auto;padding:0 16px 40px}
.banner{padding:18px 24px;margin:0 0 16px}.banner ul.runs{margin:8px 0 0;padding-left:20px;font-size:14px}.banner h1{margin:0;font-size:26px;letter-spacing:.02em}.banner p{margin:6px 0 0;font-size:15px}
.banner .runbook{font-weight:400;font-size:18px;margin-left:10px}.banner .hint{font-style:italic}.banner .alarm pre{white-space:pre-wrap;background:#fff;color:#1d2329;padding:6px}
.banner.ok{background:#2e7d32}.banner.failed{background:#c62828}.banner.warn{background:#f57c00}
.banner.ok,.banner.ok *,.banner.failed,.banner.failed *{color:#fff}.banner.warn,.banner.warn *{color:#1d2329}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:12px 16px;margin:0 0 16px}h2{font-size:17px;margin:0 0 10px}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}.facts dt{color:#5f6b76}.facts dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 6px;border-bottom:1px solid #eceff1;vertical-align:top}th{background:#f0f2f4;font-weight:600}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}tr.bad td{background:#fff1f0}code{font:12px ui-monospace,"DejaVu Sans Mono",monospace;overflow-wrap:anywhere}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;color:#fff;background:#546e7a}.badge.ok{background:#2e7d32}.badge.failed{background:#c62828}
.badge.interrupted,.badge.running{color:#1d2329;background:#f57c00}.badge.skipped,.badge.pending{background:#6b6b6b}
.err{color:#b71c1c}.place{margin:4px 0;font-size:12px;color:#37474f;background:#f5f5f5;padding:4px 6px;overflow-x:auto}.warn{color:#b34700}.hint{color:#455a64}
.chart{margin:0 0 18px}.chart figcaption{margin:0 0 4px}.chart .note{color:#5f6b76;font-size:12px}
svg{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif}svg .frame{fill:#fff;stroke:#cfd8dc}svg .grid{stroke:#eceff1}svg .tick{fill:#5f6b76}
svg .series polyline{fill:none;stroke-linejoin:round;stroke-linecap:round}svg .marker line{stroke:#37474f;stroke-dasharray:3 3}svg .marker text{fill:#37474f;font-size:10px}
svg .label{fill:#1d2329;font-size:12px}
.legend{list-style:none;margin:4px 0 0 64px;padding:0;display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12px}.swatch{display:inline-block;width:14px;height:3px;margin:0 5px 3px 0;vertical-align:middle}
.swatch.dash{height:3px;background-image:linear-gradient(90deg,transparent 60%,#fff 60%)!important;background-size:6px 3px}
.nodata{color:#5f6b76;font-style:italic}details summary{cursor:pointer;margin:4px 0}h3{font-size:14px;margin:12px 0 6px}
.sharebar{display:flex;height:18px;border-radius:3px;overflow:hidden;background:#eceff1;margin:6px 0}.sharebar .share{display:block;min-width:2px;height:100%}
.attempts{color:#455a64}.note{color:#5f6b76;font-size:12px}svg .run-band text{fill:#5f6b76}
@media print{body{background:#fff}section{border:0;padding:0}}
`;

/** The page. Pure: same report, same bytes. */
export function renderHtml(report: Report): string {
  const xMax = Math.max(report.durationMs, 1);
  const series = chartSeries(report);
  const mk = markers(report);
  const pct = (v: number): string => `${Math.round(v)}%`;
  const charts = [
    lineChart({
      id: "chart-copy",
      title: "Collection copy",
      note: "each instance's copied bytes as a share of the global estimated total; the dashed line is the fleet's sum",
      xMaxMs: xMax,
      series: series.copy,
      markers: mk,
      yMin: 0,
      yMax: 100,
      yFormat: pct,
      emptyText: "No copy progress samples in this run.",
    }),
    lineChart({
      id: "chart-lag",
      title: "Lag per instance (s)",
      note: "lagTimeSeconds; gaps where the service reports none (PAUSED, IDLE)",
      xMaxMs: xMax,
      series: series.lag,
      markers: mk,
      yMin: 0,
      yFormat: compact,
      emptyText: "No lag samples in this run.",
    }),
    lineChart({
      id: "chart-events",
      title: "Change events applied per instance",
      note: "totalEventsApplied (approximate, not persisted)",
      xMaxMs: xMax,
      series: series.events,
      markers: mk,
      yMin: 0,
      yFormat: compact,
      emptyText: "No applied-events samples in this run.",
    }),
    lineChart({
      id: "chart-verifier",
      title: "Verifier counters",
      note: "verificationStatus of the current generation (the counters start over at each one); at the end, failedTasks or metadataMismatchTasks above 0 means the clusters differ",
      xMaxMs: xMax,
      series: series.verifier,
      markers: mk,
      yMin: 0,
      yFormat: compact,
      emptyText: "No verifier samples in this run.",
    }),
  ];
  const lastCopy = report.progress.map((s) => [...s.samples].reverse().find((x) => x.totalBytes !== undefined));
  const totalBytes = Math.max(0, ...lastCopy.map((x) => x?.totalBytes ?? 0));
  const dataNote =
    totalBytes > 1 ? `<p class="note">Estimated total to copy: ${esc(formatBytes(totalBytes))}.</p>` : "";

  const commands = report.requests.filter((r) => r.method !== "GET");
  const decisions = report.decisions.map((d) => {
    const step = report.steps.find((s) => s.index === d.index);
    return `<tr class="${d.ok ? "" : "bad"}" data-kind="${esc(d.kind)}" data-ok="${d.ok}"><td class="num">+${esc(formatDuration(d.t))}</td><td>${esc(step?.id ?? d.id ?? "")}</td><td>${esc(d.kind)}</td><td>${esc(d.check ?? "")}</td><td>${d.ok ? "ok" : "<strong>refused</strong>"}</td><td>${esc(d.reason)}</td></tr>`;
  });
  const hooks = report.hooks.map(
    (h) =>
      `<tr class="${h.ok === false ? "bad" : ""}"><td class="num">+${esc(formatDuration(h.start))}</td><td>${esc(h.id)}</td><td>${esc(h.use)}${h.undo ? " (undo)" : ""}</td><td>${h.ok === undefined ? "no end" : h.ok ? "ok" : "failed"}</td><td class="num">${h.durationMs === undefined ? "–" : esc(formatDuration(h.durationMs))}</td><td>${esc(h.error ?? "")}</td></tr>`,
  );
  const commits = report.commits.map(
    (c) =>
      `<tr><td class="num">+${esc(formatDuration(c.t))}</td><td>${esc(c.id)}</td><td>${c.instances.length}</td><td class="num">${esc(formatDuration(c.skewMs))}</td></tr>`,
  );
  const shown = report.requests.slice(0, MAX_REQUEST_ROWS);
  const logs = [
    ...report.warnings.map((w) => ({ level: "report", message: w, t: undefined as number | undefined })),
    ...report.logs,
  ];

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="syncbook report v${report.version}">
<title>${esc(`${report.outcome === "ok" ? (stoppedAt(report) !== undefined ? `STOPPED AT --to ${stoppedAt(report)}` : report.committed ? "COMMITTED" : "OK") : report.aborted ? abortWords({ exitCode: report.exitCode ?? 1, ...(report.undoKeptOff ? { undoKeptOff: true } : {}) }) : report.outcome.toUpperCase()}${report.commitInDoubt ? " · COMMIT IN DOUBT" : ""}${report.reverseInDoubt ? " · REVERSE IN DOUBT" : ""}${report.verification.headline === undefined ? "" : ` · ${report.verification.headline}`} · ${report.runbook} · syncbook report`)}</title>
<style>${CSS}</style>
</head>
<body>
${banner(report)}
<main>
<section id="summary"><h2>Run</h2>${facts(report)}</section>
<section id="write-stop-window"><h2>Write-stop window (the application's downtime)</h2>${windowSection(report)}</section>
<section id="timeline"><h2>Timeline</h2>
${runsTable(report)}
${ganttChart(
  "chart-timeline",
  report.steps.map((s) => ({
    key: s.id,
    label: `${s.index + 1}. ${s.id}`,
    start: s.start,
    end: s.end ?? (s.outcome === "running" ? report.durationMs : s.start),
    outcome: s.outcome,
    title: `${s.id} (${s.kind}): ${s.outcome}${s.durationMs === undefined ? "" : `, ${formatDuration(s.durationMs)}`}${s.error ? ` — ${s.error}` : ""}`,
    ...(s.attempts.length > 0
      ? {
          bars: s.attempts.map((a) => ({
            start: a.start,
            end: a.end ?? report.durationMs,
            outcome: a.outcome,
            title: `${s.id}, run ${a.run}: ${a.outcome}${a.durationMs === undefined ? "" : `, ${formatDuration(a.durationMs)}`}${a.error ? ` — ${a.error}` : ""}`,
          })),
        }
      : {}),
  })),
  xMax,
  {
    ...(report.runs.length > 1
      ? { bands: report.runs.map((r) => ({ from: r.start, to: r.end, label: `run ${r.n}` })) }
      : {}),
    markers: mk,
    ...(report.window
      ? {
          highlight: {
            from: report.window.measuredFrom - report.startedAt,
            to: report.window.measuredFrom - report.startedAt + report.window.measuredMs,
            label: `write-stop window: ${windowLine(report.window)}`,
          },
        }
      : {}),
  },
)}
<table id="steps"><thead><tr><th>#</th><th>step</th><th>kind</th><th>title</th><th>start</th><th>took</th><th>outcome</th><th>requests</th><th>notes</th></tr></thead>
<tbody>${report.steps.map((s) => stepRow(report, s)).join("\n")}</tbody></table>
</section>
<section id="charts"><h2>Progress</h2>${dataNote}
${charts.join("\n")}
</section>
${serviceNotes(report)}
<section id="record"><h2>For the record</h2>${recordSection(report)}</section>
<section id="decisions"><h2>Decisions (${report.decisions.length})</h2>
${decisions.length ? `<table><thead><tr><th>at</th><th>step</th><th>kind</th><th>check</th><th>result</th><th>reason</th></tr></thead><tbody>${decisions.join("")}</tbody></table>` : "<p>None.</p>"}
</section>
<section id="hooks"><h2>Hooks and commits</h2>
${hooks.length ? `<table><thead><tr><th>at</th><th>step</th><th>hook</th><th>result</th><th>took</th><th>error</th></tr></thead><tbody>${hooks.join("")}</tbody></table>` : "<p>No hooks ran.</p>"}
${commits.length ? `<table id="commits"><thead><tr><th>at</th><th>step</th><th>instances</th><th>fan-out skew</th></tr></thead><tbody>${commits.join("")}</tbody></table>` : noCommitEnded(report)}
</section>
<section id="commands"><h2>Commands sent (${commands.length})</h2>
${commands.length ? `<table><thead><tr><th>id</th><th>at</th><th>step</th><th>to</th><th>request</th><th>status</th><th>took</th><th>body</th><th>answer</th></tr></thead><tbody>${commands.map((r) => requestRow(report, r)).join("")}</tbody></table>` : "<p>None.</p>"}
</section>
<section id="polls-summary"><h2>Progress reads (${report.counts.polls}, ${report.counts.failedPolls} failed)</h2>${pollSummary(report)}</section>
<section id="requests"><h2>Every request (${report.requests.length})</h2>
<details><summary>show ${shown.length}${shown.length < report.requests.length ? ` of ${report.requests.length} (all are in report.json)` : ""}</summary>
<table><thead><tr><th>id</th><th>at</th><th>step</th><th>to</th><th>request</th><th>status</th><th>took</th><th>body</th><th>answer</th></tr></thead><tbody>${shown.map((r) => requestRow(report, r)).join("")}</tbody></table>
</details></section>
${logs.length ? `<section id="warnings"><h2>Warnings (${logs.length})</h2><ul>${logs.map((l) => `<li><strong>${esc(l.level)}</strong>${l.t === undefined ? "" : ` +${esc(formatDuration(l.t))}`}: ${esc(l.message)}</li>`).join("")}</ul></section>` : ""}
<footer><p class="note">Written by syncbook from ${report.counts.events} events. report.json holds every request and answer; junit.xml the steps as test cases.</p></footer>
</main>
</body>
</html>
`;
}
