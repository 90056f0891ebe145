/**
 * Inline SVG charts drawn by our own code: no chart library, no script, no network. Every chart
 * carries stable hooks for tests and the browser check:
 *   <figure id="chart-<name>" data-chart="<name>">
 *     <svg …> <g class="series" data-series="<kind>:<label>" data-points="N" data-samples="M"> <polyline …/>…
 * `data-points` is the number of points drawn (the sum of the polylines' points), `data-samples`
 * the number of numeric samples in the run (equal unless a very long series was thinned).
 */
import { escapeXml as esc } from "../text.js";
import { formatDuration } from "./model.js";

export interface ChartSeries {
  key: string;
  label: string;
  color: string;
  /** [ms since run start, value]; null breaks the line (e.g. lag is null while PAUSED). */
  points: readonly (readonly [number, number | null])[];
  width?: number;
  dash?: boolean;
}

export interface ChartMarker {
  t: number;
  label: string;
}

export interface LineChartSpec {
  id: string;
  title: string;
  /** One sentence under the title: what the lines are. */
  note?: string;
  xMaxMs: number;
  series: readonly ChartSeries[];
  markers?: readonly ChartMarker[];
  yMin?: number;
  yMax?: number;
  yFormat?: (v: number) => string;
  /** Most points drawn per series (longer series are thinned keeping each bucket's min and max). */
  maxPoints?: number;
  emptyText?: string;
}

const W = 960;
const H = 260;
const M = { l: 64, r: 16, t: 14, b: 30 };

const PALETTE = [
  "#1f77b4",
  "#d62728",
  "#2ca02c",
  "#ff7f0e",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#17becf",
  "#bcbd22",
  "#7f7f7f",
];
/** A distinct colour per series index. */
export const seriesColor = (i: number): string => PALETTE[i] ?? `hsl(${Math.round((i * 137.508) % 360)} 65% 38%)`;

const r1 = (v: number): string => (Math.round(v * 10) / 10).toString();

/** Round tick values covering [lo, hi]. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.round(v / step) * step);
  return out;
}

/** Round time ticks (ms) for [0, max]. */
function timeTicks(maxMs: number): number[] {
  const steps = [
    100,
    250,
    500,
    1e3,
    2e3,
    5e3,
    10e3,
    15e3,
    30e3,
    60e3,
    120e3,
    300e3,
    600e3,
    900e3,
    1800e3,
    3600e3,
    7200e3,
    4 * 3600e3,
    6 * 3600e3,
    12 * 3600e3,
    24 * 3600e3,
  ];
  const step = steps.find((s) => maxMs / s <= 8) ?? maxMs / 8;
  const out: number[] = [];
  for (let v = 0; v <= maxMs + 1e-9; v += step) out.push(v);
  return out;
}

type Pt = [number, number];

/** The points of a run with the lowest and the highest value, in time order. */
function minMax(run: Pt[]): Pt[] {
  if (run.length <= 2) return run;
  let lo = run[0] as Pt;
  let hi = lo;
  for (const p of run) {
    if (p[1] < lo[1]) lo = p;
    if (p[1] > hi[1]) hi = p;
  }
  if (lo === hi) return [lo];
  return lo[0] <= hi[0] ? [lo, hi] : [hi, lo];
}

/**
 * Splits at nulls (a gap in the line); a series of more than `max` numeric points is thinned:
 * cut into max/4 buckets, each keeps the min and max of its points before its first gap and
 * after its last one (so peaks and gaps survive, and at most `max` points are drawn).
 */
export function segmentsOf(points: ChartSeries["points"], max: number): { segments: Pt[][]; samples: number } {
  const samples = points.reduce((n, [, v]) => (v === null || !Number.isFinite(v) ? n : n + 1), 0);
  const segments: Pt[][] = [];
  let cur: Pt[] = [];
  const close = (): void => {
    if (cur.length) segments.push(cur);
    cur = [];
  };
  if (samples <= max) {
    for (const [t, v] of points) {
      if (v === null || !Number.isFinite(v)) close();
      else cur.push([t, v]);
    }
    close();
    return { segments, samples };
  }
  const buckets = Math.max(1, Math.floor(max / 4));
  const size = points.length / buckets;
  for (let b = 0; b < buckets; b++) {
    const part = points.slice(Math.floor(b * size), Math.floor((b + 1) * size));
    const runs: Pt[][] = [[]];
    for (const [t, v] of part) {
      if (v === null || !Number.isFinite(v)) runs.push([]);
      else (runs[runs.length - 1] as Pt[]).push([t, v]);
    }
    const first = runs[0] as Pt[];
    cur.push(...minMax(first));
    if (runs.length > 1) {
      close();
      cur.push(...minMax(runs[runs.length - 1] as Pt[]));
    }
  }
  close();
  return { segments, samples };
}

/** A marker label's row height and the space kept between two labels on one row (svg units). */
const LABEL_ROW = 14;
const LABEL_GAP = 6;

/**
 * A generous estimate of a marker label's width at the 10 px sans-serif font (capitals and
 * digits about 7 units, other characters about 6): wide enough that labels it keeps apart do
 * not touch as rendered (scripts/browser-check.mjs measures them in Chromium).
 */
function labelWidth(label: string): number {
  let w = 0;
  for (const ch of label) w += /[A-Z0-9]/.test(ch) ? 7.2 : 6;
  return w;
}

/** A line chart as an HTML <figure> holding an inline <svg> (no xmlns needed inside HTML). */
export function lineChart(spec: LineChartSpec): string {
  const fmt = spec.yFormat ?? ((v: number) => String(v));
  const max = spec.maxPoints ?? 800;
  const drawn = spec.series.map((s) => ({ s, ...segmentsOf(s.points, max) }));
  const values = drawn.flatMap((d) => d.segments.flat().map((p) => p[1]));
  const head = `<figure class="chart" id="${esc(spec.id)}" data-chart="${esc(spec.id.replace(/^chart-/, ""))}" data-series-count="${spec.series.length}">\n<figcaption><strong>${esc(spec.title)}</strong>${spec.note ? ` <span class="note">${esc(spec.note)}</span>` : ""}</figcaption>`;
  if (values.length === 0)
    return `${head}\n<p class="nodata">${esc(spec.emptyText ?? "No samples in this run.")}</p>\n</figure>`;

  let dataMin = Infinity;
  let dataMax = -Infinity;
  for (const v of values) {
    if (v < dataMin) dataMin = v;
    if (v > dataMax) dataMax = v;
  }
  const lo = spec.yMin ?? Math.min(0, dataMin);
  let hi = spec.yMax ?? dataMax;
  if (!(hi > lo)) hi = lo + 1;
  const yt = niceTicks(lo, hi);
  const step = yt.length > 1 ? (yt[1] as number) - (yt[0] as number) : 0;
  // round the top up to the next tick, unless the caller fixed it (e.g. 100 %)
  const top =
    spec.yMax === undefined && step > 0 ? Math.ceil(hi / step - 1e-9) * step : Math.max(hi, yt[yt.length - 1] ?? hi);
  let xMax = Math.max(1, spec.xMaxMs);
  for (const d of drawn) for (const seg of d.segments) for (const p of seg) if (p[0] > xMax) xMax = p[0];
  const pw = W - M.l - M.r;
  const ph = H - M.t - M.b;
  const x = (t: number): number => M.l + (t / xMax) * pw;
  const y = (v: number): number => M.t + ph - ((v - lo) / (top - lo)) * ph;

  const grid: string[] = [];
  for (const v of niceTicks(lo, top)) {
    grid.push(
      `<line class="grid" x1="${M.l}" x2="${W - M.r}" y1="${r1(y(v))}" y2="${r1(y(v))}"/><text class="tick" x="${M.l - 6}" y="${r1(y(v) + 4)}" text-anchor="end">${esc(fmt(v))}</text>`,
    );
  }
  for (const t of timeTicks(xMax)) {
    grid.push(
      `<line class="grid" x1="${r1(x(t))}" x2="${r1(x(t))}" y1="${M.t}" y2="${M.t + ph}"/><text class="tick" x="${r1(x(t))}" y="${H - 10}" text-anchor="middle">${esc(formatDuration(t))}</text>`,
    );
  }
  // labels of markers close together are stacked, never overprinted: each goes on the first row
  // where it clears every label already there (its width estimated from the 10 px font)
  const rowsEnd: number[] = [];
  const markers = [...(spec.markers ?? [])]
    .filter((m) => m.t >= 0 && m.t <= xMax)
    .sort((a, b) => a.t - b.t)
    .map((m) => {
      const mx = x(m.t);
      const width = labelWidth(m.label);
      const right = mx + 3 + width > W - M.r;
      const [from, to] = right ? [mx - 3 - width, mx - 3] : [mx + 3, mx + 3 + width];
      let row = rowsEnd.findIndex((end) => end + LABEL_GAP <= from);
      if (row < 0) row = rowsEnd.push(to) - 1;
      else rowsEnd[row] = to;
      return `<g class="marker" data-marker="${esc(m.label)}"><line x1="${r1(mx)}" x2="${r1(mx)}" y1="${M.t}" y2="${M.t + ph}"/><text x="${r1(right ? mx - 3 : mx + 3)}" y="${M.t + 10 + row * LABEL_ROW}"${right ? ' text-anchor="end"' : ""}>${esc(m.label)}</text></g>`;
    });
  const series = drawn.map(({ s, segments, samples }) => {
    const pointsDrawn = segments.reduce((n, seg) => n + seg.length, 0);
    const lines = segments.map(
      (seg) => `<polyline points="${seg.map(([t, v]) => `${r1(x(t))},${r1(y(v))}`).join(" ")}"/>`,
    );
    const last = segments[segments.length - 1]?.[segments[segments.length - 1]!.length - 1];
    const dot = last ? `<circle cx="${r1(x(last[0]))}" cy="${r1(y(last[1]))}" r="2.5"/>` : "";
    const title = last
      ? `${s.label}: last ${fmt(last[1])} at ${formatDuration(last[0])} (${samples} samples)`
      : `${s.label}: no samples`;
    return `<g class="series" data-series="${esc(s.key)}" data-points="${pointsDrawn}" data-samples="${samples}" stroke="${esc(s.color)}" fill="${esc(s.color)}" stroke-width="${s.width ?? 1.6}"${s.dash ? ' stroke-dasharray="5 3"' : ""}><title>${esc(title)}</title>${lines.join("")}${dot}</g>`;
  });
  const legend = spec.series
    .map(
      (s, i) =>
        `<li><span class="swatch${s.dash ? " dash" : ""}" style="background:${esc(s.color)}"></span>${esc(s.label)}${drawn[i]?.samples ? "" : " <em>(no data)</em>"}</li>`,
    )
    .join("");
  return `${head}
<svg class="plot" viewBox="0 0 ${W} ${H}" width="100%" preserveAspectRatio="xMidYMid meet" role="img" aria-label="${esc(spec.title)}">
<rect class="frame" x="${M.l}" y="${M.t}" width="${pw}" height="${ph}"/>
${grid.join("\n")}
${markers.join("\n")}
${series.join("\n")}
</svg>
<ul class="legend">${legend}</ul>
</figure>`;
}

export interface GanttBar {
  start: number;
  end: number;
  outcome: string;
  title: string;
}

export interface GanttRow {
  key: string;
  label: string;
  start?: number;
  end?: number;
  outcome: string;
  title: string;
  /** Several bars on the row (a step run in several runs of a resumed cutover); default one from start to end. */
  bars?: readonly GanttBar[];
}

/** Extras drawn behind and over the rows: the runs as bands, markers, a highlighted span (the write-stop window). */
export interface GanttExtras {
  bands?: readonly { from: number; to: number; label: string }[];
  markers?: readonly ChartMarker[];
  highlight?: { from: number; to: number; label: string };
}

const OUTCOME_COLOR: Record<string, string> = {
  ok: "#2e7d32",
  failed: "#c62828",
  interrupted: "#ef6c00",
  running: "#ef6c00",
  skipped: "#9e9e9e",
  pending: "#bdbdbd",
};

/** The steps on the run's time axis: one bar per step, coloured by outcome. */
export function ganttChart(id: string, rows: readonly GanttRow[], xMaxMs: number, extras: GanttExtras = {}): string {
  const rowH = 20;
  const labelW = 230;
  const top = M.t + (extras.bands?.length || extras.markers?.length ? 14 : 0);
  const h = top + rows.length * rowH + M.b;
  const pw = W - labelW - M.r;
  const xMax = rows.reduce(
    (m, r) => Math.max(m, r.end ?? r.start ?? 0, ...(r.bars ?? []).map((b) => b.end)),
    Math.max(1, xMaxMs),
  );
  const x = (t: number): number => labelW + (Math.max(0, Math.min(t, xMax)) / xMax) * pw;
  const ticks = timeTicks(xMax).map(
    (t) =>
      `<line class="grid" x1="${r1(x(t))}" x2="${r1(x(t))}" y1="${top}" y2="${h - M.b}"/><text class="tick" x="${r1(x(t))}" y="${h - 10}" text-anchor="middle">${esc(formatDuration(t))}</text>`,
  );
  const bands = (extras.bands ?? []).map(
    (b, i) =>
      `<g class="run-band" data-run="${i + 1}"><rect x="${r1(x(b.from))}" y="${top}" width="${r1(Math.max(1, x(b.to) - x(b.from)))}" height="${rows.length * rowH}" fill="${i % 2 ? "#eef3f8" : "#f6f8fa"}"/><text class="tick" x="${r1(x(b.from) + 3)}" y="${top - 3}">${esc(b.label)}</text></g>`,
  );
  const hl = extras.highlight
    ? `<g class="window" data-from="${r1(extras.highlight.from)}" data-to="${r1(extras.highlight.to)}"><rect x="${r1(x(extras.highlight.from))}" y="${top}" width="${r1(Math.max(2, x(extras.highlight.to) - x(extras.highlight.from)))}" height="${rows.length * rowH}" fill="#fde0dc" fill-opacity="0.7"/><title>${esc(extras.highlight.label)}</title></g>`
    : "";
  const marks = (extras.markers ?? []).map((m) => {
    const mx = r1(x(m.t));
    return `<g class="marker" data-marker="${esc(m.label)}"><line x1="${mx}" x2="${mx}" y1="${top}" y2="${h - M.b}"/><title>${esc(`${m.label} at +${formatDuration(m.t)}`)}</title></g>`;
  });
  const bars = rows.map((r, i) => {
    const yy = top + i * rowH;
    const label = r.label.length > 34 ? `${r.label.slice(0, 33)}…` : r.label;
    const list: GanttBar[] = r.bars
      ? [...r.bars]
      : r.start === undefined
        ? []
        : [{ start: r.start, end: r.end ?? r.start, outcome: r.outcome, title: r.title }];
    const rects = list
      .map(
        (b) =>
          `<rect class="bar" data-outcome="${esc(b.outcome)}" x="${r1(x(b.start))}" y="${yy + 4}" width="${r1(Math.max(2, x(b.end) - x(b.start)))}" height="${rowH - 8}" fill="${OUTCOME_COLOR[b.outcome] ?? "#607d8b"}"><title>${esc(b.title)}</title></rect>`,
      )
      .join("");
    return `<g class="step" data-step="${esc(r.key)}" data-outcome="${esc(r.outcome)}" data-bars="${list.length}"><text class="label" x="${labelW - 8}" y="${yy + 14}" text-anchor="end">${esc(label)}</text>${rects}</g>`;
  });
  return `<svg class="gantt" id="${esc(id)}" data-rows="${rows.length}" viewBox="0 0 ${W} ${h}" width="100%" role="img" aria-label="step timeline">
${bands.join("\n")}
${hl}
${ticks.join("\n")}
${bars.join("\n")}
${marks.join("\n")}
</svg>`;
}
