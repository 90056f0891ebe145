#!/usr/bin/env node
// The report page, checked in a real browser (issue #7): `npm run test:browser`.
//
//   node --import tsx scripts/browser-check.mjs [--journal FILE] [--out DIR]
//
// 1. Builds a report: from a journal when given, else from a real in-process rehearsal when the
//    runner and simulator can do one (test/support/rehearsal.ts decides), else from the
//    synthesized 2-instance run the unit tests use.
// 2. Opens report.html in headless Chromium (Debian's `chromium`; CHROMIUM=path overrides) and
//    takes a screenshot: out/browser-check/report.png (look at it).
// 3. Opens a probe copy of the page (the same HTML plus one inline script that measures and
//    writes its findings into the DOM) with --dump-dom, and asserts: every chart series is
//    drawn with the run's number of points (SVGPolylineElement.points), has a non-zero rendered
//    size, charts are laid out at a readable size, the banner shows the outcome colour, and the
//    page fetched nothing (no resource entries: self-contained), and every text on the banner
//    and every step badge has a WCAG AA contrast (4.5:1) as rendered.
// 4. Decodes the screenshot (PNG, node:zlib) and asserts the banner's colour and the series'
//    colours are really on screen.
// 5. Renders a report for every banner kind (COMMITTED, SUCCEEDED, FAILED, FAILED AFTER COMMIT,
//    INTERRUPTED, SKIPPED, UNFINISHED) and checks each one's colour, headline and contrast in the
//    browser, with a screenshot of each in out/browser-check/banners/.
// Exit 0 when every check holds, 1 otherwise (2: Chromium missing or failing to start).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { inflateSync } from "node:zlib";
import { CHROMIUM_FLAGS, findChromium } from "../test/support/chromium.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const outDir = resolve(opt("--out") ?? join(root, "out", "browser-check"));
const journalArg = opt("--journal");
const WIDTH = 1280;
const HEIGHT = 2000;

const failures = [];
const check = (ok, what) => {
  if (ok) process.stdout.write(`  ok   ${what}\n`);
  else {
    process.stdout.write(`  FAIL ${what}\n`);
    failures.push(what);
  }
};

// --- the browser ----------------------------------------------------------------------------
const chromium = findChromium();
if (!chromium) {
  process.stderr.write(
    "browser-check: Chromium not found (/usr/bin/chromium)\n  hint: apt-get update && apt-get install -y chromium   (or set CHROMIUM=/path/to/chrome)\n",
  );
  process.exit(2);
}

function runChromium(extra, url, height) {
  const profile = mkdtempSync(join(tmpdir(), "syncbook-chromium-"));
  try {
    const r = spawnSync(
      chromium,
      [
        "--headless",
        ...CHROMIUM_FLAGS,
        `--user-data-dir=${profile}`,
        `--window-size=${WIDTH},${height}`,
        ...extra,
        url,
      ],
      { encoding: "utf8", timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
    );
    if (r.error || r.status !== 0) {
      process.stderr.write(
        `browser-check: ${chromium} failed (${r.error?.message ?? `exit ${r.status}`})\n${(r.stderr ?? "").slice(-3000)}\n`,
      );
      process.exit(2);
    }
    return r.stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

// --- the report -----------------------------------------------------------------------------
const report = await import(pathToFileURL(join(root, "src/report/index.ts")).href);
let events;
let source;
let expected; // Map series key → expected points, from the events themselves
const warnings = [];
if (journalArg) {
  const read = await report.readJournal(journalArg);
  events = read.events;
  warnings.push(...read.warnings);
  source = `journal ${journalArg}`;
} else {
  const real = await import(pathToFileURL(join(root, "test/support/rehearsal.ts")).href)
    .then((m) => m.rehearsalEvents())
    .catch((err) => ({ error: err }));
  if (real && Array.isArray(real.events)) {
    events = real.events;
    source = `a real rehearsal (${real.description})`;
  } else {
    const { synthRun } = await import(pathToFileURL(join(root, "test/support/report-fixture.ts")).href);
    events = synthRun().events;
    source = `synthesized 2-instance run${real?.reason ? ` (no real rehearsal: ${real.reason})` : real?.error ? ` (real rehearsal failed: ${real.error.message ?? real.error})` : ""}`;
  }
}
mkdirSync(outDir, { recursive: true });
const { files, report: built } = await report.writeReport(events, outDir, { warnings });
process.stdout.write(
  `browser-check: report of ${source}: ${events.length} events, outcome ${built.outcome}\n  ${files.html}\n`,
);

// What the charts must show, counted from the report model (itself tested against events).
expected = new Map();
for (const s of built.progress) {
  expected.set(`copy:${s.label}`, s.samples.filter((x) => x.copiedBytes !== undefined && x.totalBytes).length);
  expected.set(`lag:${s.label}`, s.samples.filter((x) => x.lagSeconds !== undefined).length);
  expected.set(`events:${s.label}`, s.samples.filter((x) => x.eventsApplied !== undefined).length);
}
const counters = new Set(built.verifierSamples.flatMap((s) => Object.keys(s.counters)));
for (const c of counters)
  expected.set(`verifier:${c}`, built.verifierSamples.filter((s) => s.counters[c] !== undefined).length);

// --- 1. the probe: measure in the browser, write results into the DOM, --dump-dom ----------
const PROBE = `
<script>
(() => {
  const out = { series: [], charts: [], resources: 0, banner: null, badges: [], gantt: null, errors: [] };
  // WCAG 2 contrast of text as rendered: its colour, faded by its own and its ancestors' opacity
  // over the first opaque background behind it, against that background.
  const rgba = (c) => { const v = (c.match(/[0-9.]+/g) ?? []).map(Number); return [v[0] ?? 0, v[1] ?? 0, v[2] ?? 0, v[3] ?? 1]; };
  const lum = (c) => { const f = (x) => { x /= 255; return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x); return (hi + 0.05) / (lo + 0.05); };
  const backdrop = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgba(getComputedStyle(e).backgroundColor); if (c[3] >= 1) return c; } return [255, 255, 255, 1]; };
  const fade = (el) => { let a = 1; for (let e = el; e; e = e.parentElement) a *= Number(getComputedStyle(e).opacity); return a; };
  const contrasts = (root) => [root, ...root.querySelectorAll("*")].filter((el) => [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())).map((el) => {
    const fg = rgba(getComputedStyle(el).color);
    const bg = backdrop(el);
    const a = fg[3] * fade(el);
    const seen = [0, 1, 2].map((i) => fg[i] * a + bg[i] * (1 - a));
    return { el: el.tagName.toLowerCase() + (el.className ? "." + String(el.className).split(" ").join(".") : ""), text: el.textContent.trim().slice(0, 40), fg: seen.map(Math.round), bg: bg.slice(0, 3), ratio: Math.round(ratio(seen, bg) * 100) / 100 };
  });
  try {
    for (const g of document.querySelectorAll("g.series")) {
      const lines = [...g.querySelectorAll("polyline")];
      const drawn = lines.reduce((n, p) => n + p.points.numberOfItems, 0);
      const box = g.getBBox();
      const rect = g.getBoundingClientRect();
      out.series.push({ chart: g.closest("figure")?.id, geometry: lines.map((p) => p.getAttribute("points")).join("|"), key: g.dataset.series, points: Number(g.dataset.points), samples: Number(g.dataset.samples), drawn, bboxW: box.width, bboxH: box.height, screenW: rect.width, stroke: getComputedStyle(lines[0] ?? g).stroke });
    }
    for (const f of document.querySelectorAll("figure.chart")) {
      const svg = f.querySelector("svg");
      const r = (svg ?? f).getBoundingClientRect();
      // each marker's label as rendered: two that intersect are overprinted (unreadable)
      const labels = [...f.querySelectorAll("g.marker text")].map((t) => { const b = t.getBoundingClientRect(); return { text: t.textContent, l: b.left, r: b.right, t: b.top, b: b.bottom }; });
      const clash = [];
      for (let i = 0; i < labels.length; i++)
        for (let j = i + 1; j < labels.length; j++) {
          const a = labels[i], c = labels[j];
          if (a.l < c.r && c.l < a.r && a.t < c.b && c.t < a.b) clash.push(a.text + " × " + c.text);
        }
      const inside = labels.every((x) => x.l >= r.left - 0.5 && x.r <= r.right + 0.5 && x.t >= r.top - 0.5 && x.b <= r.bottom + 0.5);
      out.charts.push({ id: f.id, svg: !!svg, x: r.left, y: r.top + scrollY, w: r.width, h: r.height, markers: labels.length, clash, inside });
    }
    const gantt = document.getElementById("chart-timeline");
    if (gantt) out.gantt = { rows: Number(gantt.dataset.rows), bars: gantt.querySelectorAll("rect.bar").length, w: gantt.getBoundingClientRect().width };
    const banner = document.getElementById("outcome");
    if (banner) out.banner = { outcome: banner.dataset.outcome, bg: getComputedStyle(banner).backgroundColor, top: banner.getBoundingClientRect().top, text: banner.textContent.trim().slice(0, 200), headline: banner.querySelector("h1")?.firstChild?.textContent.trim() ?? "", texts: banner ? contrasts(banner) : [] };
    out.badges = [...document.querySelectorAll(".badge")].flatMap(contrasts);
    const bar = document.querySelector("#write-stop-window .sharebar");
    if (bar) out.window = { w: bar.getBoundingClientRect().width, shares: [...bar.querySelectorAll(".share")].map((s) => ({ share: s.dataset.share, ms: Number(s.dataset.ms), w: s.getBoundingClientRect().width })), parts: document.querySelectorAll("#window-parts tbody tr").length };
    const hl = document.querySelector("#chart-timeline g.window rect");
    if (hl) out.windowBand = hl.getBoundingClientRect().width;
    out.record = !!document.getElementById("record") && document.querySelectorAll("#record dd").length;
    out.resources = performance.getEntriesByType("resource").length;
  } catch (e) { out.errors.push(String(e && e.stack || e)); }
  const pre = document.createElement("pre");
  pre.id = "browser-check-result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
`;
const html = readFileSync(files.html, "utf8");
check(!/<script/i.test(html), "report.html has no script (it renders without one)");
const probeFile = join(outDir, "probe.html");
writeFileSync(probeFile, html.replace("</body>", `${PROBE}</body>`));
const dom = runChromium(["--dump-dom", "--virtual-time-budget=3000"], pathToFileURL(probeFile).href, HEIGHT);
const m = /<pre id="browser-check-result">([\s\S]*?)<\/pre>/.exec(dom);
if (!m) {
  check(false, "the probe wrote its result into the DOM");
  process.exit(1);
}
const unescape = (s) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
const probe = JSON.parse(unescape(m[1]));
rmSync(probeFile, { force: true });

check(probe.errors.length === 0, `probe ran without errors ${probe.errors.join("; ")}`);
check(probe.resources === 0, `self-contained: the page fetched nothing (resource entries: ${probe.resources})`);
const BANNER_COLORS = { ok: "rgb(46, 125, 50)", failed: "rgb(198, 40, 40)", warn: "rgb(245, 124, 0)" };
const bannerColor = (outcome) => BANNER_COLORS[outcome === "ok" ? "ok" : outcome === "failed" ? "failed" : "warn"];
const expectedColor = bannerColor(built.outcome);
/** WCAG AA for normal text (4.5:1), for every text of the banner and every badge: banner text is not "large" throughout. */
function checkContrast(p, what) {
  const texts = p.banner?.texts ?? [];
  const worst = texts.reduce((w, t) => (w && w.ratio <= t.ratio ? w : t), undefined);
  check(
    texts.length > 0 && worst.ratio >= 4.5,
    `${what}: every text readable, lowest contrast ${worst?.ratio}:1 (${worst?.el} "${worst?.text}", rgb(${worst?.fg}) on rgb(${worst?.bg})) ≥ 4.5:1`,
  );
  const badges = p.badges ?? [];
  const bad = badges.filter((b) => b.ratio < 4.5);
  check(
    bad.length === 0,
    `${what}: ${badges.length} step badge(s) readable (≥ 4.5:1)${bad.length ? `; too faint: ${[...new Set(bad.map((b) => `${b.text} ${b.ratio}:1`))].join(", ")}` : ""}`,
  );
}
check(
  probe.banner && probe.banner.outcome === built.outcome && probe.banner.bg === expectedColor && probe.banner.top === 0,
  `outcome banner at the top, ${built.outcome}, ${expectedColor} (got ${JSON.stringify(probe.banner)})`,
);
checkContrast(probe, `banner ${built.outcome}`);
check(
  probe.gantt && probe.gantt.rows === built.steps.length && probe.gantt.w > 600,
  `step timeline drawn: ${probe.gantt?.rows} rows, ${probe.gantt?.bars} bars, ${Math.round(probe.gantt?.w ?? 0)} px wide`,
);
// the write-stop window: its shares drawn as a bar (each share as wide as its part of the window)
// and as a band on the step timeline; the record's facts present
if (built.window) {
  const w = probe.window;
  const drawn = (w?.shares ?? []).filter((x) => x.ms > 0);
  const total = drawn.reduce((n, x) => n + x.ms, 0);
  check(
    w &&
      w.w > 600 &&
      drawn.length > 0 &&
      drawn.every((x) => Math.abs(x.w / w.w - x.ms / total) < 0.02 || x.w >= 2) &&
      w.parts === built.window.parts.length,
    `write-stop window drawn: ${drawn.map((x) => `${x.share} ${x.ms} ms ${Math.round(x.w)} px`).join(", ")} of ${Math.round(w?.w ?? 0)} px; ${w?.parts} parts`,
  );
  check(
    probe.windowBand > 0,
    `the window is a band on the step timeline (${Math.round(probe.windowBand ?? 0)} px wide)`,
  );
}
check(
  probe.record >= 6,
  `"For the record" states who, which syncbook, runbook and service version (${probe.record} facts)`,
);
for (const id of ["chart-copy", "chart-lag", "chart-events", "chart-verifier"]) {
  const c = probe.charts.find((x) => x.id === id);
  check(
    c && c.svg && c.w > 600 && c.h > 150,
    `${id} laid out as SVG (${Math.round(c?.w ?? 0)}×${Math.round(c?.h ?? 0)} px)`,
  );
}
// chart markers (writes off, commit, canWrite, COMMITTED, runs, undos…) close in time: their labels
// stacked apart, none printed over another, none outside its chart
for (const c of probe.charts.filter((x) => x.svg)) {
  check(
    c.clash.length === 0 && c.inside,
    `${c.id}: ${c.markers} marker label(s), none over another${c.clash.length ? ` (overlapping: ${c.clash.join(", ")})` : ""}, all inside the chart`,
  );
}
const byKey = new Map(probe.series.map((s) => [s.key, s]));
for (const [key, n] of expected) {
  const s = byKey.get(key);
  if (n === 0) {
    check(!s || s.points === 0, `${key}: no samples, nothing drawn`);
    continue;
  }
  check(
    s && s.samples === n && s.points === s.drawn && s.drawn > 0 && (s.samples <= 800 ? s.drawn === n : s.drawn <= 800),
    `${key}: ${n} samples → ${s?.drawn} points in the DOM`,
  );
  check(
    s && (n < 2 || (s.bboxW > 0 && s.screenW > 0)),
    `${key}: rendered ${s ? `${s.bboxW.toFixed(0)}×${s.bboxH.toFixed(0)} (svg units), ${s.screenW.toFixed(0)} px wide` : "missing"}`,
  );
}
const fleet = byKey.get("copy:fleet");
if (built.progress.length > 1)
  check(
    fleet && fleet.drawn > 0 && fleet.drawn === fleet.points && fleet.bboxH > 0,
    `copy:fleet drawn (${fleet?.drawn} points, one per polling round)`,
  );

// --- 2. screenshot of the page as shipped (no script in it), tall enough for every chart ----
const png = join(outDir, "report.png");
rmSync(png, { force: true });
const shotHeight = Math.max(HEIGHT, Math.ceil(Math.max(0, ...probe.charts.map((c) => c.y + c.h)) + 40));
runChromium([`--screenshot=${png}`], pathToFileURL(files.html).href, shotHeight);
check(existsSync(png) && statSync(png).size > 10_000, `screenshot written: ${png}`);

// --- 3. the screenshot's pixels --------------------------------------------------------------
function decodePng(buf) {
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error("not a PNG");
  let off = 8;
  let width = 0;
  let height = 0;
  let depth = 0;
  let type = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const kind = buf.toString("latin1", off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (kind === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      depth = data[8];
      type = data[9];
      if (data[12] !== 0) throw new Error("interlaced PNG");
    } else if (kind === "IDAT") idat.push(data);
    else if (kind === "IEND") break;
    off += 12 + len;
  }
  const bpp = type === 6 ? 4 : type === 2 ? 3 : 0;
  if (depth !== 8 || bpp === 0) throw new Error(`PNG colour type ${type}, depth ${depth}: not handled`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const px = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? px[y * stride + x - bpp] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[(y - 1) * stride + x - bpp] : 0;
      let v = src[x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * stride + x] = v & 255;
    }
  }
  return { width, height, bpp, px };
}
const img = decodePng(readFileSync(png));
check(img.width === WIDTH && img.height === shotHeight, `screenshot is ${img.width}×${img.height}`);
const at = (x, y) => {
  const i = (y * img.width + x) * img.bpp;
  return [img.px[i], img.px[i + 1], img.px[i + 2]];
};
const near = (p, rgb, tol = 40) => Math.abs(p[0] - rgb[0]) + Math.abs(p[1] - rgb[1]) + Math.abs(p[2] - rgb[2]) <= tol;
const bannerRgb = expectedColor.match(/\d+/g).map(Number);
check(
  near(at(8, 8), bannerRgb, 10) && near(at(img.width - 8, 20), bannerRgb, 10),
  `the screenshot's top is the outcome colour ${expectedColor}`,
);
/** Pixels of a colour inside a chart's box (so the banner or a badge of the same colour cannot count). */
const count = (chartId, rgb) => {
  const c = probe.charts.find((x) => x.id === chartId);
  if (!c) return 0;
  let n = 0;
  const x1 = Math.min(img.width, Math.ceil(c.x + c.w));
  const y1 = Math.min(img.height, Math.ceil(c.y + c.h));
  for (let y = Math.max(0, Math.floor(c.y)); y < y1; y++)
    for (let x = Math.max(0, Math.floor(c.x)); x < x1; x++) if (near(at(x, y), rgb, 30)) n++;
  return n;
};
const colorOf = (key) => probe.series.find((s) => s.key === key)?.stroke;
const checks = [];
for (const s of built.progress.slice(0, 3)) {
  checks.push(["chart-lag", `lag:${s.label}`]);
  checks.push(["chart-copy", `copy:${s.label}`]);
}
if (counters.has("completedTasks")) checks.push(["chart-verifier", "verifier:completedTasks"]);
for (const [chart, key] of checks) {
  if ((expected.get(key) ?? 0) < 2) continue;
  const me = probe.series.findIndex((s) => s.key === key);
  const cover = probe.series.slice(me + 1).find((s) => s.chart === chart && s.geometry === probe.series[me]?.geometry);
  if (cover) {
    process.stdout.write(`  --   ${key} is drawn under ${cover.key} (identical data): not visible on its own\n`);
    continue;
  }
  const stroke = colorOf(key);
  const rgb = stroke?.match(/\d+/g)?.slice(0, 3).map(Number);
  const n = rgb ? count(chart, rgb) : 0;
  check(n > 100, `${key} visible in the screenshot (${stroke}): ${n} pixels in #${chart}`);
}

// --- 4. every banner kind: a report per outcome, measured in the browser ----------------------
// The run above shows one banner; the others (FAILED, INTERRUPTED, UNFINISHED…) are rendered
// from the synthesized run with its end rewritten, each checked for its colour, its headline and
// the contrast of every text on it, and screenshotted to banners/<kind>.png.
{
  const { synthRun } = await import(pathToFileURL(join(root, "test/support/report-fixture.ts")).href);
  const ended = (events, patch) => events.map((e) => (e.type === "run.finished" ? { ...e, ...patch } : e));
  const ok = synthRun().events;
  const refused = synthRun({ refuseCommit: true }).events;
  const stopped = refused.map((e) =>
    e.type === "step.finished" && e.outcome === "failed" ? { ...e, outcome: "interrupted", error: "interrupted" } : e,
  );
  const lastStart = refused.findLastIndex((e) => e.type === "step.started");
  // a run that sent no commit: a commit the journal shows taken makes the report COMMITTED whatever
  // the run's end says (the read model's `commitAccepted`, the journal's rule)
  const commitIds = new Set(
    ok.filter((e) => e.type === "request.sent" && e.path === "/api/v1/commit").map((e) => e.id),
  );
  const uncommitted = (events) =>
    events.filter(
      (e) =>
        e.type !== "commit.sent" &&
        !((e.type === "request.sent" || e.type === "response.received") && commitIds.has(e.id)),
    );
  // the synthesized run verifies: a banner that ended well says so (src/report/html.ts, "COMMITTED · VERIFIED")
  const kinds = [
    ["COMMITTED", "ok", ended(ok, { outcome: "ok", committed: true }), "COMMITTED · VERIFIED"],
    ["SUCCEEDED", "ok", ended(uncommitted(ok), { outcome: "ok", committed: false }), "SUCCEEDED · VERIFIED"],
    ["FAILED", "failed", refused],
    // the verdict wherever the destination may take writes, however the run ended (helper 124)
    ["FAILED AFTER COMMIT", "failed", ended(refused, { committed: true }), "FAILED AFTER COMMIT · VERIFIED"],
    ["INTERRUPTED", "interrupted", ended(stopped, { outcome: "interrupted", exitCode: 130 })],
    ["SKIPPED", "skipped", ended(ok, { outcome: "skipped" }), "SKIPPED · VERIFIED"],
    ["UNFINISHED", "unfinished", refused.slice(0, lastStart + 1)],
  ];
  const dir = join(outDir, "banners");
  mkdirSync(dir, { recursive: true });
  for (const [headline, outcome, evs, shown = headline] of kinds) {
    const slug = headline.toLowerCase().replace(/ /g, "-");
    const { files: f } = await report.writeReport(evs, join(dir, slug));
    const page = join(dir, `${slug}.probe.html`);
    writeFileSync(page, readFileSync(f.html, "utf8").replace("</body>", `${PROBE}</body>`));
    const out = /<pre id="browser-check-result">([\s\S]*?)<\/pre>/.exec(
      runChromium(["--dump-dom", "--virtual-time-budget=3000"], pathToFileURL(page).href, 800),
    );
    rmSync(page, { force: true });
    const p = out ? JSON.parse(unescape(out[1])) : undefined;
    const color = bannerColor(outcome);
    check(
      p?.banner?.outcome === outcome && p.banner.headline === shown && p.banner.bg === color,
      `${headline} banner: ${color} (got ${p?.banner?.headline} ${p?.banner?.outcome} ${p?.banner?.bg})`,
    );
    if (p) checkContrast(p, `${headline} banner`);
    const shot = join(dir, `${slug}.png`);
    rmSync(shot, { force: true });
    runChromium([`--screenshot=${shot}`], pathToFileURL(f.html).href, 240);
    const im = existsSync(shot) ? decodePng(readFileSync(shot)) : undefined;
    const px = im ? [...im.px.subarray((8 * im.width + 8) * im.bpp, (8 * im.width + 8) * im.bpp + 3)] : [];
    check(im && near(px, color.match(/\d+/g).map(Number), 10), `${headline} banner on screen: ${shot}`);
  }
}

if (failures.length) {
  process.stdout.write(`\nbrowser-check: ${failures.length} check(s) failed; screenshot: ${png}\n`);
  process.exit(1);
}
process.stdout.write(`\nbrowser-check: ok (${chromium}); screenshot: ${png}\n`);
