/**
 * `syncbook watch`'s page: one self-contained document (its style and script inline, under the
 * response's nonce; no external resource, so it works offline and on an air-gapped bridge), that
 * reads `/events` (server-sent events; each a whole `/state.json`) and draws the state with
 * `textContent` only (nothing the state holds is ever parsed as HTML). Every colour has its word
 * beside it (a status is never only a colour), and it reflows to a phone's width. Its durations
 * are written by `formatDuration` itself (its source inlined), the one format of every output, and
 * the verifier's document counters by `verifierDocsText` (src/text.ts, inlined the same way).
 */
import { COMMITTED_OFF_RECORD_WORDS, CUT_OFF_WORDS, cutOff } from "../model/fold.js";
import { formatDuration } from "../runbook/duration.js";
import { verifierDocsText } from "../text.js";
import { COMMIT_IN_DOUBT_WORDS, windowBoundOf, windowEndWords, windowLength } from "../writes-words.js";

const CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1d2329;background:#f5f6f8}
main{max-width:1100px;margin:0 auto;padding:8px 12px 40px}
header.top{display:flex;flex-wrap:wrap;gap:4px 16px;align-items:baseline;margin:4px 0 10px}
header.top h1{font-size:20px;margin:0}
.muted{color:#4a5560}
.conn{font-weight:600}
.alarm{background:#b71c1c;color:#fff;padding:12px 16px;border-radius:6px;margin:0 0 12px}
.alarm h2{margin:0 0 6px;font-size:19px;color:#fff}
.alarm ul{margin:4px 0 6px 18px;padding:0}
.alarm code{background:#fff;color:#1d2329;padding:2px 6px;border-radius:3px;word-break:break-all}
.note{background:#fff3e0;border:1px solid #f57c00;padding:8px 12px;border-radius:6px;margin:0 0 12px}
.ok{color:#1b5e20}.bad{color:#b71c1c}.warn{color:#8a4b00}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 14px;margin:0 0 12px}
section h2{font-size:16px;margin:0 0 8px}
.clock{font-size:28px;font-weight:700;font-variant-numeric:tabular-nums}
.clock.open{color:#b71c1c}
ol.steps{margin:0;padding-left:28px}ol.steps li{margin:2px 0}
ol.steps li.now{font-weight:700;background:#e3f2fd}
.why{margin:2px 0 4px 8px;font-weight:400;font-size:14px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceff1;vertical-align:top}
th{font-weight:600;background:#f0f2f4}
ul.plain{margin:0;padding-left:18px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
@media (max-width:640px){body{font-size:14px}.clock{font-size:22px}th,td{padding:3px 4px}main{padding:4px 6px 30px}}
`;

const SCRIPT = `
"use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
const utc = (t) => (typeof t === "number" ? new Date(t).toISOString().slice(11, 19) + " UTC" : "?");
const dur = ${formatDuration.toString()};
const docsText = ${verifierDocsText.toString()};
const cutOff = ${cutOff.toString()};
const CUT_OFF_WORDS = ${JSON.stringify(CUT_OFF_WORDS)};
const COMMITTED_OFF_RECORD_WORDS = ${JSON.stringify(COMMITTED_OFF_RECORD_WORDS)};
const COMMIT_IN_DOUBT_WORDS = ${JSON.stringify(COMMIT_IN_DOUBT_WORDS)};
const windowEndWords = ${windowEndWords.toString()};
const windowLength = ${windowLength.toString()};
const windowBoundOf = ${windowBoundOf.toString()};
let state = null;
let skew = 0;
const OUTCOME = { ok: ["done", "ok"], failed: ["FAILED", "bad"], running: ["running", "warn"], pending: ["not reached", "muted"], skipped: ["skipped", "muted"], interrupted: ["interrupted", "bad"] };
function fill(id, nodes) { const p = $(id); p.replaceChildren(...nodes); }
function row(cells, head) { const tr = el("tr"); for (const c of cells) { const td = el(head ? "th" : "td"); if (c instanceof Node) td.append(c); else td.textContent = c === undefined || c === null ? "–" : String(c); tr.append(td); } return tr; }
function table(headers, rows) { const t = el("table"); const th = el("thead"); th.append(row(headers, true)); const tb = el("tbody"); tb.append(...rows); t.append(th, tb); const d = el("div", undefined, "scroll"); d.append(t); return d; }
function word(text, cls) { return el("span", text, cls); }

function render() {
  const s = state; if (!s) return;
  const m = s.model; const now = Date.now() - skew;
  $("title").textContent = "syncbook watch · " + (m.cutover.runbook || s.source.runbook || s.source.folder);
  $("updated").textContent = "state of " + utc(s.at);
  // the runner: alive, or gone with what it left
  const r = s.runner;
  const alarm = $("alarm");
  if (r.alarm) {
    alarm.hidden = false;
    const items = el("ul"); for (const l of r.left) items.append(el("li", l));
    const nodes = [el("h2", "ALARM: " + r.headline), el("p", "State left:"), items];
    if (r.next) { const p = el("p", "Next: "); p.append(el("code", r.next)); nodes.push(p); }
    alarm.replaceChildren(...nodes);
  } else { alarm.hidden = true; alarm.replaceChildren(); }
  const runner = [el("p", r.headline, r.state === "running" ? "ok" : "muted")];
  if (!r.alarm && r.left.length) runner.push(el("p", "State: " + r.left.join(" · ")));
  if (r.next && !r.alarm) { const p = el("p", "Next: "); p.append(el("code", r.next)); runner.push(p); }
  // where every output says the verdict (the state's headline: the destination may take writes, or
  // the last run ended ok), whether the cutover is verified, beside how its run ended, in its words;
  // the verifier's section alone said it, and not at all without a verifier read
  const said = s.verification && s.verification.headline !== undefined;
  if (said) runner.push(el("p", "verification: " + s.verification.text, s.verification.verified ? "ok" : "bad"));
  fill("runner", runner);
  // the write-stop window: the application's downtime
  const w = m.window;
  if (!w) fill("window", [el("p", "Writes not stopped by this cutover (no write-stop window yet).")]);
  else {
    const from = w.openedAt ?? w.measuredFrom;
    const open = w.open && w.closedBy === undefined;
    const ms = open ? now - from : (w.durationMs ?? w.measuredMs);
    const words = open ? "WRITES STOPPED for " : w.closedBy === "undone" ? "Writes were stopped, then turned back on by the undo: " : w.closedBy === "by-hand" ? "Writes stopped, then handed to a person to turn back on by hand (no cutover): " : "Write-stop window closed after ";
    // its end seen only after a span no runner read the fleet in: the most it lasted
    // a bound said as one, rounded outwards: "at most" (its end seen late), "at least" (opened before what the events show, or handed over)
    const bound = windowBoundOf(w);
    const clock = el("p", words + windowLength(ms, { atLeast: bound.atLeast, unseenMs: open ? undefined : bound.unseenMs }, dur), "clock" + (open ? " open" : ""));
    clock.id = "clock";
    const nodes = [clock, el("p", (open ? "since " : "from ") + utc(from) + (w.closedAt ? " to " + utc(w.closedAt) + " (" + windowEndWords(w.closedBy) + ")" : "") + (w.writesOnAt ? "; application writes on again at " + utc(w.writesOnAt) : "") + (!open && w.unseenMs ? "; its end was seen after " + dur(w.unseenMs) + " in which no runner read the fleet: it may have come then" : ""))];
    const shares = Object.entries(w.shares).filter(([, v]) => v > 0).map(([k, v]) => (k === "none" ? "no runner alive" : k) + " " + dur(v));
    // the shares run to the write-on hook once it ran: said of that length, not the window's
    if (shares.length) nodes.push(el("p", (w.toWritesOnMs !== undefined ? "Shares of the " + dur(w.toWritesOnMs) + " to application writes on again: " : "Shares: ") + shares.join(" · "), "muted"));
    fill("window", nodes);
  }
  // the cutover and its runs
  const runs = m.runs.map((x) => el("li", "run " + x.n + " (" + (x.abort ? "--abort" : x.mode) + ")" + (x.by ? " by " + x.by.user + "@" + x.by.host : "") + ", started " + utc(x.startedAt) + ": " + (x.ended === "open" ? "no end yet" : x.ended === "no-word" ? "ended without a word (killed or crashed) after " + utc(x.lastAt) : "ended " + x.ended + (x.finishedAt ? " at " + utc(x.finishedAt) : "")) + (x.committed ? ", committed" : x.commitInDoubt ? ", " + COMMIT_IN_DOUBT_WORDS : "") + (x.message ? " — " + x.message : "")));
  const cut = [el("p", "cutover " + (m.cutover.id || "(no run yet)") + (m.cutover.committed ? (m.cutover.committedOffRecord ? " · " + COMMITTED_OFF_RECORD_WORDS : " · COMMITTED") : r.commitInDoubt ? " · " + COMMIT_IN_DOUBT_WORDS.replace("commit in doubt", "COMMIT IN DOUBT") : m.cutover.reversed ? " · not committed since the reverse (step " + m.cutover.reversed.id + ")" : " · not committed") + (said ? " · " + s.verification.headline : ""))];
  if (runs.length) { const ul = el("ul", undefined, "plain"); ul.append(...runs); cut.push(ul); }
  for (const g of m.gaps) cut.push(el("p", "no runner alive for " + dur(g.ms) + " after run " + g.after + " (" + (g.how === "killed" ? "it was killed" : "it ended") + ")", "warn"));
  fill("cutover", cut);
  // the steps, the current one, and why a wait is not over
  const ol = el("ol", undefined, "steps");
  for (const st of m.steps) {
    const cut = cutOff(m, st, r.state === "dead" || r.state === "finished");
    const o = cut ? [CUT_OFF_WORDS, "bad"] : OUTCOME[st.outcome] || [st.outcome, "muted"];
    const li = el("li"); if (m.current === st.index && !cut) li.className = "now";
    li.append(el("span", st.id + " (" + st.kind + "): "), word(o[0], o[1]));
    if (m.current === st.index && !cut) li.append(el("span", " ← now" + (st.startedAt ? ", for " + dur(now - st.startedAt) : "") + (st.timeoutMs ? " of its " + dur(st.timeoutMs) + " limit" : "")));
    if (st.error) li.append(el("div", "error: " + st.error, "why bad"));
    // why a step did not run: "skipped" alone read, after a resume adopted a commit that took
    // effect, as a commit never made (the report shows the same two notes)
    if (st.reason) li.append(el("div", st.reason, "why muted"));
    if (st.resumeNote) li.append(el("div", st.resumeNote, "why muted"));
    if (st.wait && !st.wait.met && st.wait.failing.length) {
      const why = el("ul", undefined, "why");
      for (const f of st.wait.failing) why.append(el("li", "not over on " + f.instance + ": " + f.condition + " (is " + JSON.stringify(f.value) + ", for " + dur(f.sinceMs) + ")"));
      li.append(why);
    }
    ol.append(li);
  }
  fill("steps", m.steps.length ? [ol] : [el("p", "No steps known yet (no run started).", "muted")]);
  // why not ready, per instance
  fill("ready", s.readiness.length ? [table(["instance", "ready to commit", "ETA", "why not"], s.readiness.map((x) => row([x.instance, x.past ? word("past it: " + x.past, "muted") : word(x.ready ? "yes" : "NO", x.ready ? "ok" : "bad"), x.ready || x.past ? "–" : x.eta, x.reasons.join("; ") || "–"])))] : [el("p", "No instance known yet.", "muted")]);
  // the fleet
  const fl = (s.live.instances.length ? s.live.instances : m.fleet.instances).map((i) => row([
    i.label,
    i.down ? word("NOT ANSWERING: " + i.down.error, "bad") : (i.state || "?"),
    typeof i.lagSeconds === "number" ? dur(i.lagSeconds * 1000) + (i.lagTrend ? " (" + i.lagTrend + ")" : "") : "–",
    i.canCommit === undefined ? "?" : String(i.canCommit),
    i.canWrite === undefined || i.canWrite === null ? "?" : String(i.canWrite),
    i.embedded ? ["source", "destination"].filter((k) => i.embedded[k]).map((k) => k + ": " + (i.embedded[k].phase || "?")).join(", ") : "–",
    (i.warnings || []).join("; ") || "–",
    i.answeredAt ? utc(i.answeredAt) : "–",
  ]));
  const copy = s.live.instances.length ? s.live.copy : m.fleet.copy;
  const fleetNodes = [table(["instance", "state", "lag (trend)", "canCommit", "canWrite", "embedded verifier", "warnings", "answered"], fl)];
  fleetNodes.push(el("p", copy.started ? "Copy (fleet): " + (copy.fraction !== undefined ? Math.floor(copy.fraction * 1000) / 10 + "%" : "?") + ", ETA " + copy.eta : "Copy: not started", "muted"));
  fleetNodes.push(el("p", s.live.at ? "Read by this page's server at " + utc(s.live.at) + " (GET progress, once a second)." : "This page's server reads no instance itself (none known yet).", "muted"));
  fill("fleet", fleetNodes);
  // the migration verifier
  const v = s.live.verifier || m.verifier;
  if (!v && !s.live.verifierError) fill("verifier", [el("p", "No migration verifier in this cutover (or none read yet).", "muted")]);
  else {
    const nodes = [];
    if (s.live.verifierError) nodes.push(el("p", "verifier not answering: " + s.live.verifierError, "bad"));
    if (v) {
      nodes.push(el("p", "phase " + (v.phase || "?") + (v.generation !== undefined ? ", generation " + v.generation : "") + (v.docs ? ", " + docsText(v.generation, v.docs, v.gen0) : "")));
      const c = Object.entries(v.counters || {}).map(([k, n]) => k + " " + n).join(", ");
      if (c) nodes.push(el("p", "counters: " + c));
      const wo = m.verifier && m.verifier.writesOffGeneration;
      // the generations, as facts; whether they are this cutover's verified result is the verify
      // step's to judge (earned.ts): the verdict below is the one the server asked it
      nodes.push(el("p", wo === undefined ? "writesOff not sent yet (a result only counts from a generation after writes stopped)" : v.generation !== undefined && v.generation > wo ? "generation " + v.generation + " is after writesOff (generation " + wo + ")" : "waiting for a generation after writesOff (generation " + wo + ")", "muted"));
    }
    if (s.verification) nodes.push(el("p", "verification: " + s.verification.text, s.verification.verified ? "ok" : "warn"));
    fill("verifier", nodes);
  }
  // decisions, prompts, notifications, warnings
  const dec = m.decisions.slice(-30).map((d) => el("li", utc(d.at) + " " + (d.ok ? "allowed" : "REFUSED") + (d.id ? " (" + d.id + ")" : "") + ": " + d.reason, d.ok ? "" : "bad"));
  const pr = m.prompts.map((p) => el("li", utc(p.at) + " " + (p.id || "") + ": " + (p.question ? p.question + " → " : "") + p.answer + " by " + p.by));
  const nodes = [el("h3", "Interlock decisions"), dec.length ? (() => { const u = el("ul", undefined, "plain"); u.append(...dec); return u; })() : el("p", "none yet", "muted"), el("h3", "Prompts answered"), pr.length ? (() => { const u = el("ul", undefined, "plain"); u.append(...pr); return u; })() : el("p", "none yet", "muted"), el("h3", "Notifications")];
  nodes.push(m.notifications ? el("p", m.notifications.delivered + " delivered" + (m.notifications.notDelivered.length ? "; NOT delivered: " + m.notifications.notDelivered.join("; ") : ""), m.notifications.notDelivered.length ? "bad" : "") : el("p", "none sent", "muted"));
  const logs = m.logs.slice(-10).map((l) => el("li", utc(l.at) + " " + l.level + ": " + l.message, l.level === "error" ? "bad" : "warn"));
  if (logs.length) { nodes.push(el("h3", "Warnings and errors")); const u = el("ul", undefined, "plain"); u.append(...logs); nodes.push(u); }
  fill("events", nodes);
}
function tick() {
  // the clock of an open window runs between states
  if (!state || !state.model.window) return;
  const w = state.model.window; if (!(w.open && w.closedBy === undefined)) return;
  const c = $("clock"); if (c) c.textContent = "WRITES STOPPED for " + windowLength(Date.now() - skew - (w.openedAt ?? w.measuredFrom), { atLeast: w.openedAt === undefined }, dur);
}
function take(text) { try { state = JSON.parse(text); skew = Date.now() - state.at; render(); } catch (e) { $("conn").textContent = "bad state: " + e.message; } }
function connect() {
  const es = new EventSource("events");
  es.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn ok"; };
  es.onmessage = (e) => take(e.data);
  es.onerror = () => { $("conn").textContent = "connection to watch lost: retrying (what is shown may be old)"; $("conn").className = "conn bad"; };
}
setInterval(tick, 1000);
connect();
`;

/** The page, its inline style and script allowed by `nonce` (the response's Content-Security-Policy). */
export function watchPage(nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>syncbook watch</title><style nonce="${nonce}">${CSS}</style></head>
<body><main>
<header class="top"><h1 id="title">syncbook watch</h1><span id="conn" class="conn muted" role="status" aria-live="polite">connecting…</span><span id="updated" class="muted"></span></header>
<div id="alarm" class="alarm" role="alert" hidden></div>
<section aria-labelledby="h-runner"><h2 id="h-runner">Runner</h2><div id="runner"><p class="muted">waiting for the first state…</p></div></section>
<section aria-labelledby="h-window"><h2 id="h-window">Write-stop window (the application's downtime)</h2><div id="window"></div></section>
<section aria-labelledby="h-steps"><h2 id="h-steps">Steps</h2><div id="steps"></div></section>
<section aria-labelledby="h-ready"><h2 id="h-ready">Ready to commit?</h2><div id="ready"></div></section>
<section aria-labelledby="h-fleet"><h2 id="h-fleet">Fleet</h2><div id="fleet"></div></section>
<section aria-labelledby="h-verifier"><h2 id="h-verifier">Migration verifier</h2><div id="verifier"></div></section>
<section aria-labelledby="h-cutover"><h2 id="h-cutover">Cutover and runs</h2><div id="cutover"></div></section>
<section aria-labelledby="h-events"><h2 id="h-events">Decisions, prompts, notifications</h2><div id="events"></div></section>
<noscript><p>This page draws the state with a script; without it, read <a href="state.json">state.json</a>.</p></noscript>
</main><script nonce="${nonce}">${SCRIPT}</script></body></html>
`;
}
