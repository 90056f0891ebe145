#!/usr/bin/env node
// `npm run bench`: runs every benchmark in bench/ and prints ONE table of the figures measured in
// this run, each as a ratio against its baseline where it has one, plus the machine.
//
//   node bench/run.mjs [--only lint,rehearsal-vs-shell] [--nodes 20,22,24] [--markdown] [--json] [--no-build] [--timeout 900]
//
// --nodes runs every bench on each Node named (a major version: this Node when it is that major,
// else the npm registry's `node` package in $SYNCBOOK_NODE_CACHE/node<major>, default
// ~/.cache/syncbook-node, as docs/testing.md installs it), one after another, with dist/ rebuilt
// for each (its V8 code cache is one Node's), then once more for this Node; one table, a column per
// Node. Without it, this Node only.
//
// PROTOCOL (each bench/<name>.mjs): run as `node bench/<name>.mjs --json`, print (as the last
// line of stdout that parses as JSON) one object:
//
//   {"figures":[{"name":"lint cold start","value":71.2,"unit":"ms",
//                "baseline":48.1,"baselineName":"node -e 0","ratio":1.48,"budget":"≤ 2×","ok":true}]}
//
//   name, value, unit  required; value a number (null: could not be measured, say why in note)
//   baseline           optional number in the same unit; ratio = value / baseline when not given
//   baselineName       optional: what the baseline is ("node -e 0", "poll interval", "bash+curl+jq")
//   budget, ok         optional: the budget as text and whether this run met it
//   note               optional: one short remark
// Other output (progress, tables) goes to stderr or to stdout lines before the JSON line.
// Exit status 0 = measured (budgets missed are figures, not crashes); non-zero = could not run.
// A bench that prints no figures (or crashes) is listed as "not run" with the reason.
// Files in bench/ that are not benches: run.mjs (this), *.sh, and names starting with "_".
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { cpus, homedir, loadavg, release, totalmem, type } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// the machine is shared: its load average before and after is part of every figure
const loadBefore = loadavg();
const root = fileURLToPath(new URL("..", import.meta.url));
const benchDir = join(root, "bench");
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = opt("--only")
  ?.split(",")
  .map((s) => s.trim().replace(/\.(mjs|js|ts)$/, ""));
const asJson = args.includes("--json");
const markdown = args.includes("--markdown");
const timeoutMs = Number(opt("--timeout") ?? 900) * 1000;

// --- the Nodes --------------------------------------------------------------------------------
const nodeCache = process.env.SYNCBOOK_NODE_CACHE ?? join(homedir(), ".cache", "syncbook-node");
const nodes = (opt("--nodes") ?? "")
  .split(",")
  .map((s) => s.trim().replace(/^v/, ""))
  .filter(Boolean)
  .map((major) => {
    if (process.versions.node.split(".")[0] === major.split(".")[0]) return { major, exe: process.execPath };
    const exe = join(nodeCache, `node${major}`, "node_modules", ".bin", "node");
    return existsSync(exe)
      ? { major, exe }
      : { major, missing: `not installed: npm install --prefix ${join(nodeCache, `node${major}`)} node@${major}` };
  });
if (nodes.length === 0) nodes.push({ major: process.versions.node.split(".")[0], exe: process.execPath });
const versionOf = (exe) => spawnSync(exe, ["--version"], { encoding: "utf8" }).stdout.trim();

// --- a fresh build (benches measure dist/) -----------------------------------------------------
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p));
    else if (/\.(ts|json)$/.test(e.name)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}
/** dist/ built by `exe` (first on PATH, whichever `node` PATH would give npm), unless it already is and is fresh. */
function buildFor(exe, version, force = false) {
  const cli = join(root, "dist/cli/syncbook.cjs");
  const builtOn = existsSync(cli) ? /"node":"(v[^"]+)"/.exec(readFileSync(cli, "utf8"))?.[1] : undefined;
  if (
    !force &&
    existsSync(cli) &&
    builtOn === version &&
    statSync(cli).mtimeMs >=
      Math.max(newest(join(root, "src")), newest(join(root, "schemas")), newest(join(root, "plugins")))
  )
    return true;
  process.stderr.write(
    `bench: dist/ is missing, older than src/ or built on ${builtOn ?? "another Node"}: npm run build (node ${version})\n`,
  );
  const b = spawnSync("npm", ["run", "build"], {
    cwd: root,
    // the build's output goes to stderr: stdout is the table's (--markdown, --json)
    stdio: ["ignore", 2, 2],
    env: { ...process.env, PATH: `${dirname(exe)}${delimiter}${process.env.PATH ?? ""}` },
  });
  return b.status === 0;
}

// --- the benches --------------------------------------------------------------------------------
// In the issue's order (lint, reaction, fan-out, the runner at 256, the simulator at 256, the
// rehearsal and the shell loop, then the write-stop window); any other bench after them, by name.
const ORDER = ["lint", "reaction", "fanout", "runner-256", "sim-256", "rehearsal-vs-shell", "downtime"];
const rank = (f) => {
  const i = ORDER.indexOf(f.replace(/\.(mjs|js|ts)$/, ""));
  return i < 0 ? ORDER.length : i;
};
const files = readdirSync(benchDir)
  .filter((f) => /\.(mjs|js|ts)$/.test(f) && f !== "run.mjs" && !f.startsWith("_"))
  .filter((f) => !only || only.includes(f.replace(/\.(mjs|js|ts)$/, "")))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

function run(exe, file) {
  const argv = file.endsWith(".ts")
    ? ["--import", "tsx", join(benchDir, file), "--json"]
    : [join(benchDir, file), "--json"];
  return new Promise((resolve) => {
    // the bench's own children (`process.execPath`) and any `node` it finds on PATH are this Node
    const child = spawn(exe, argv, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PATH: `${dirname(exe)}${delimiter}${process.env.PATH ?? ""}` },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => {
      stderr += d;
      if (!asJson) process.stderr.write(d);
    });
    const t0 = performance.now();
    const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

function lastJson(stdout) {
  const lines = stdout.trim().split("\n").reverse();
  for (const l of lines) {
    const s = l.trim();
    if (!s.startsWith("{")) continue;
    try {
      return JSON.parse(s);
    } catch {
      // not JSON: keep looking
    }
  }
  return undefined;
}

/** Every bench on one Node: its figures and the benches it could not run. */
async function benchOn(exe) {
  const rows = [];
  const notRun = [];
  for (const file of files) {
    if (!asJson) process.stderr.write(`\nbench: ${file} …\n`);
    const out = await run(exe, file);
    const j = lastJson(out.stdout);
    const figures = Array.isArray(j?.figures) ? j.figures : undefined;
    if (!figures) {
      const why = out.signal
        ? `killed (${out.signal}) after ${Math.round(out.ms / 1000)} s`
        : out.code !== 0
          ? `exit ${out.code}: ${out.stderr
              .trim()
              .split("\n")
              .filter((l) => l.trim())
              .slice(-2)
              .join(" / ")
              .replace(/\s+/g, " ")
              .slice(0, 200)}`
          : "prints no figures (--json protocol not implemented yet)";
      notRun.push({ bench: file, reason: why });
      continue;
    }
    for (const f of figures) {
      const value = typeof f.value === "number" && Number.isFinite(f.value) ? f.value : null;
      const baseline =
        typeof f.baseline === "number" && Number.isFinite(f.baseline) && f.baseline !== 0 ? f.baseline : undefined;
      const ratio =
        typeof f.ratio === "number" ? f.ratio : value !== null && baseline !== undefined ? value / baseline : undefined;
      rows.push({
        bench: file.replace(/\.(mjs|js|ts)$/, ""),
        name: String(f.name),
        value,
        unit: String(f.unit ?? ""),
        baseline,
        baselineName: f.baselineName,
        ratio,
        budget: f.budget,
        ok: f.ok,
        note: f.note || undefined,
      });
    }
    if (out.code !== 0 && !out.signal)
      rows[rows.length - 1].note = [rows[rows.length - 1].note, `exit ${out.code}`].filter(Boolean).join("; ");
  }
  return { rows, notRun };
}

const runs = [];
for (const n of nodes) {
  if (n.missing) {
    runs.push({ node: `node ${n.major}`, rows: [], notRun: [{ bench: "all", reason: n.missing }] });
    continue;
  }
  const version = versionOf(n.exe);
  // Every figure is this Node's: the CLI's V8 code cache is only used on the Node that built it.
  process.stderr.write(`bench: node ${version} (${n.exe})\n`);
  if (!args.includes("--no-build") && !buildFor(n.exe, version)) {
    runs.push({
      node: version,
      rows: [],
      notRun: [{ bench: "all", reason: "the build failed; benches measure dist/, so nothing was run" }],
    });
    continue;
  }
  runs.push({ node: version, ...(await benchOn(n.exe)) });
}
// dist/ as this Node (the one npm and the tests use) would have it
if (!args.includes("--no-build") && nodes.some((n) => n.exe && n.exe !== process.execPath))
  buildFor(process.execPath, process.version);
if (runs.every((r) => r.rows.length === 0 && r.notRun.some((x) => x.bench === "all"))) {
  for (const r of runs) process.stderr.write(`bench: ${r.node}: ${r.notRun[0].reason}\n`);
  process.exit(2);
}

// --- the machine ---------------------------------------------------------------------------------
const cpu = cpus();
const machine = {
  node: runs.map((r) => r.node).join(", "),
  cpu: cpu[0]?.model?.replace(/\s+/g, " ").trim() ?? "unknown",
  cores: cpu.length,
  memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  os: `${type()} ${release()}`,
  date: new Date().toISOString().slice(0, 10),
  loadAverage: {
    before: loadBefore.map((x) => Math.round(x * 100) / 100),
    after: loadavg().map((x) => Math.round(x * 100) / 100),
  },
};

if (asJson) {
  process.stdout.write(
    `${JSON.stringify(runs.length === 1 ? { machine, figures: runs[0].rows, notRun: runs[0].notRun } : { machine, runs })}\n`,
  );
  process.exit(0);
}

const num = (v) =>
  v === null || v === undefined
    ? "–"
    : Math.abs(v) >= 100
      ? v.toFixed(0)
      : Math.abs(v) >= 10
        ? v.toFixed(1)
        : v.toFixed(2);
const verdict = (r) => (r.budget && r.ok !== undefined ? (r.ok ? " ok" : " MISSED") : "");
let head;
let table;
if (runs.length === 1) {
  const { rows, notRun } = runs[0];
  head = ["bench", "figure", "value", "unit", "baseline", "ratio", "budget", "note"];
  table = rows.map((r) => [
    r.bench,
    r.name,
    num(r.value),
    r.unit,
    r.baseline === undefined ? "" : `${num(r.baseline)} ${r.unit}${r.baselineName ? ` (${r.baselineName})` : ""}`,
    r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}×`,
    r.budget ? `${r.budget}${verdict(r)}` : "",
    r.note ?? "",
  ]);
  for (const n of notRun) table.push([n.bench.replace(/\.(mjs|js|ts)$/, ""), "not run", "", "", "", "", "", n.reason]);
} else {
  // a row per figure, a column per Node: the value, its baseline and ratio there, and the verdict
  head = ["bench", "figure", "unit", "budget", ...runs.map((r) => r.node)];
  const keys = [];
  for (const r of runs)
    for (const x of r.rows) if (!keys.some((k) => k.bench === x.bench && k.name === x.name)) keys.push(x);
  table = keys.map((k) => {
    const cells = runs.map((r) => {
      const x = r.rows.find((y) => y.bench === k.bench && y.name === k.name);
      if (!x) return "not run";
      const base =
        x.baseline === undefined
          ? ""
          : ` / ${num(x.baseline)}${x.ratio === undefined ? "" : ` = ${x.ratio.toFixed(2)}×`}`;
      return `${num(x.value)}${base}${verdict(x)}`;
    });
    return [k.bench, k.name, k.unit, k.budget ?? "", ...cells];
  });
  for (const r of runs)
    for (const n of r.notRun)
      table.push([
        n.bench.replace(/\.(mjs|js|ts)$/, ""),
        `not run on ${r.node}`,
        "",
        "",
        ...runs.map((x) => (x === r ? n.reason : "")),
      ]);
}
const numeric = runs.length === 1 ? [2, 5] : [];
const machineLine = `${runs.length === 1 ? `node ${machine.node}` : `nodes ${machine.node}`} · ${machine.cpu} · ${machine.cores} cores · ${machine.memoryGiB} GiB · ${machine.os} · ${machine.date} · load average ${machine.loadAverage.before.join(", ")} before, ${machine.loadAverage.after.join(", ")} after`;
if (markdown) {
  const esc = (s) => String(s).replace(/\|/g, "\\|");
  process.stdout.write(
    `Measured on: ${machineLine}\n\n| ${head.join(" | ")} |\n|${head.map((_, i) => (numeric.includes(i) ? "---:" : "---")).join("|")}|\n${table.map((r) => `| ${r.map(esc).join(" | ")} |`).join("\n")}\n`,
  );
} else {
  const w = head.map((h, i) => Math.max(h.length, ...table.map((r) => String(r[i]).length)));
  const line = (r) =>
    r
      .map((c, i) => (numeric.includes(i) ? String(c).padStart(w[i]) : String(c).padEnd(w[i])))
      .join("  ")
      .trimEnd();
  process.stdout.write(
    `\n${line(head)}\n${w.map((n) => "-".repeat(n)).join("  ")}\n${table.map(line).join("\n")}\n\nmachine: ${machineLine}\n`,
  );
}
