#!/usr/bin/env node
// Lint speed benchmark (issue #2). Not a timed test: it measures and prints.
//
//   npm run build && node bench/lint.mjs            # 9 runs each (median), prints figures and verdicts
//   node bench/lint.mjs --runs 15 --check           # exit 1 when a budget is missed
//   node bench/lint.mjs --json                      # one JSON object instead of the table
//
// Budgets (issue 2; issue 41 restated the second as a ratio, like the first, so that both hold on
// any machine and any Node: a slow machine's 2 s was a fast one's 3 s):
//   1. `syncbook lint runbooks/rs-to-sharded.yaml`, as a whole process, within 2x `node -e 0`;
//   2. 1,000 runbooks in one `syncbook lint` call (whole process) within 20x `node -e 0`;
// each a ratio of two figures measured in this one run (`node -e 0` before and after both; the
// smaller median is the baseline).
// The 1,000 runbooks are the example runbooks copied round-robin (each renamed) into a temp dir.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist/cli/syncbook.cjs");
const args = process.argv.slice(2);
const runsArg = args.indexOf("--runs");
const runs = runsArg >= 0 ? Math.max(1, Number(args[runsArg + 1]) || 9) : 9;
const check = args.includes("--check");
const asJson = args.includes("--json");

if (!existsSync(cli)) {
  process.stderr.write("bench/lint.mjs: dist/cli/syncbook.cjs is missing; run `npm run build` first\n");
  process.exit(2);
}

/** Wall time of one whole process, in ms; fails loudly if it exits with an unexpected code. */
function time(cmd, argv, expectCode = 0) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { cwd: root, stdio: ["ignore", "pipe", "pipe"], maxBuffer: 256 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== expectCode) {
    process.stderr.write(
      `bench/lint.mjs: ${[cmd, ...argv].join(" ")} exited ${r.status}\n${r.stderr}\n${String(r.stdout).slice(0, 2000)}\n`,
    );
    process.exit(2);
  }
  return { ms, stdout: r.stdout };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median of `n` runs after one warm-up (file cache, not compile cache: each run is a new process). */
function bench(cmd, argv, n, expectCode) {
  time(cmd, argv, expectCode);
  const xs = [];
  // interleave nothing else: measure back to back
  for (let i = 0; i < n; i++) xs.push(time(cmd, argv, expectCode).ms);
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
}

const node = process.execPath;
const example = "runbooks/rs-to-sharded.yaml";

const bare = bench(node, ["-e", "0"], runs);
const one = bench(node, [cli, "lint", example], runs);
// bare node again, so a machine that got busier mid-run shows up in the figures
const bare2 = bench(node, ["-e", "0"], runs);

// 1,000 runbooks
const dir = mkdtempSync(join(tmpdir(), "syncbook-bench-"));
let many;
let count = 0;
try {
  const examples = readdirSync(join(root, "runbooks"))
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => readFileSync(join(root, "runbooks", f), "utf8"));
  for (let i = 0; i < 1000; i++) {
    const text = examples[i % examples.length]
      .replace(/^name: .*$/m, `name: bench-${i}`)
      .replace("$schema=../schemas/", "$schema=../../schemas/");
    writeFileSync(join(dir, `runbook-${String(i).padStart(4, "0")}.yaml`), text);
  }
  const manyRuns = Math.max(3, Math.ceil(runs / 2));
  many = bench(node, [cli, "lint", dir, "--format", "json"], manyRuns);
  const out = JSON.parse(String(time(node, [cli, "lint", dir, "--format", "json"]).stdout));
  count = readdirSync(dir).length;
  if (out.errors !== 0 || out.warnings !== 0) {
    process.stderr.write(
      `bench/lint.mjs: the generated runbooks should lint clean, got ${out.errors} errors, ${out.warnings} warnings\n`,
    );
    process.exit(2);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const bare3 = bench(node, ["-e", "0"], runs);
const bareMedian = Math.min(bare.median, bare2.median, bare3.median);
const ratio = one.median / bareMedian;
const ratioMany = many.median / bareMedian;

const okOne = ratio <= 2;
const okMany = ratioMany <= 20;
const result = {
  node: process.version,
  runs,
  nodeE0Ms: +bareMedian.toFixed(1),
  lintOneMs: +one.median.toFixed(1),
  ratio: +ratio.toFixed(2),
  lint1000Ms: +many.median.toFixed(1),
  ratio1000: +ratioMany.toFixed(2),
  runbooks: count,
  budgets: { ratioMax: 2, ratio1000Max: 20 },
  ok: okOne && okMany,
};
// the bench protocol (bench/run.mjs): {"figures":[…]} as the last JSON line of stdout
const r1 = (v) => Math.round(v * 10) / 10;
const figures = [
  {
    name: `lint cold start, ${example} (whole process)`,
    value: r1(one.median),
    unit: "ms",
    baseline: r1(bareMedian),
    baselineName: "node -e 0",
    budget: "≤ 2×",
    ok: okOne,
    note: `median of ${runs}; min ${r1(one.min)}, max ${r1(one.max)}`,
  },
  {
    name: `lint ${count} runbooks, one process (total)`,
    value: r1(many.median),
    unit: "ms",
    baseline: r1(bareMedian),
    baselineName: "node -e 0",
    budget: "≤ 20×",
    ok: okMany,
    note: `generated into a temp dir; median of ${Math.max(3, Math.ceil(runs / 2))}`,
  },
  {
    name: `lint ${count} runbooks, per runbook`,
    value: Math.round((many.median / count) * 100) / 100,
    unit: "ms",
    note: `marginal cost after start-up: ${((many.median - one.median) / (count - 1)).toFixed(2)} ms`,
  },
];
if (asJson) process.stdout.write(`${JSON.stringify({ ...result, figures })}\n`);
else {
  const f = (x) => `${x.median.toFixed(1)} ms (min ${x.min.toFixed(1)}, max ${x.max.toFixed(1)})`;
  process.stdout.write(
    [
      `syncbook lint speed (node ${process.version}, median of ${runs} runs, whole processes)`,
      `  node -e 0                          ${f(bare)}; again: ${f(bare2)}; at the end: ${f(bare3)}`,
      `  syncbook lint ${example}  ${f(one)}`,
      `  ratio                              ${ratio.toFixed(2)}x   budget 2x     ${okOne ? "ok" : "OVER BUDGET"}`,
      `  syncbook lint <1,000 runbooks>     ${f(many)}`,
      `  ratio                              ${ratioMany.toFixed(2)}x   budget 20x    ${okMany ? "ok" : "OVER BUDGET"}`,
      "",
    ].join("\n"),
  );
}
if (check && !result.ok) process.exit(1);
