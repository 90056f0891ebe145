#!/usr/bin/env node
// syncbook against what most operators write today (issue #7):
//   1. a full rehearsal's wall time: `syncbook rehearse runbooks/rs-to-sharded.yaml` (whole process);
//   2. the same cutover (start → wait canCommit → writes off → commit → wait COMMITTED) on a
//      simulated 2-instance fleet, driven (a) by `syncbook run` and (b) by bench/shell-cutover.sh,
//      a bash loop of curl and jq; both poll every second. Compared: reaction time (the answer
//      that completed the wait → the next request out) and CPU of the whole process tree
//      (bash `times`: user + sys of the driver and every child it waited for — curl, jq, hooks).
//
//   npm run build && node bench/rehearsal-vs-shell.mjs [--runs 3] [--json]
//
// syncbook's reaction comes from its own report (`run --report DIR`, report.json): the last
// progress answer of the wait step → the stop-writes hook starting (or any request after it).
// The shell's from its own clock (date +%s%N right after curl returns → right before the next
// curl). Both are the driver's own work once the answer is in, not the poll phase. Medians of
// --runs runs. Without bash, curl or jq the shell figures are null with the reason in their note
// (and syncbook's stop-writes hook uses the built-in sim-writes instead of curl).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const runsArg = args.indexOf("--runs");
const runs = runsArg >= 0 ? Math.max(1, Number(args[runsArg + 1]) || 3) : 3;
const asJson = args.includes("--json");
const cli = join(root, "dist/cli/syncbook.cjs");
const POLL_S = 1;
const log = (s) => process.stderr.write(`rehearsal-vs-shell: ${s}\n`);

if (!existsSync(join(root, "dist/src/sim/index.js"))) {
  log("dist/ is missing: run `npm run build` first");
  process.exit(2);
}
const missing = ["bash", "curl", "jq"].filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0);
const shellReason = missing.length
  ? `${missing.join(" and ")} not installed here: the shell loop could not run (apt-get install -y ${missing.join(" ")})`
  : undefined;
if (shellReason) log(shellReason);
const hasCurl = !missing.includes("curl");
const hasBash = !missing.includes("bash");
const { startSimulator } = await import(pathToFileURL(join(root, "dist/src/sim/index.js")).href);
const median = (xs) => {
  const s = xs.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Runs `argv` under bash, appending `times`: returns wall ms, CPU ms of the process tree, output. */
function timed(argv, env = {}) {
  const quoted = argv.map((a) => `'${String(a).replace(/'/g, "'\\''")}'`).join(" ");
  return new Promise((resolve) => {
    const t0 = performance.now();
    // without bash (no `times`), the command runs on its own and its CPU is not measured
    const [cmd, ...rest] = hasBash ? ["bash", "-c", `${quoted}; rc=$?; times >&2; exit $rc`] : argv;
    const child = spawn(cmd, rest, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => {
      const wallMs = performance.now() - t0;
      // `times`: line 1 the shell itself, line 2 its children: "0m0.250s 0m0.030s"
      const t = [...stderr.matchAll(/(\d+)m(\d+(?:\.\d+)?)s (\d+)m(\d+(?:\.\d+)?)s/g)].map(
        (m) => (Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000,
      );
      stderr = stderr.replace(/^\d+m\d+(?:\.\d+)?s \d+m\d+(?:\.\d+)?s\n?/gm, "");
      resolve({
        code,
        wallMs,
        cpuMs: t.length >= 2 ? (t[t.length - 2] ?? 0) + (t[t.length - 1] ?? 0) : null,
        stdout,
        stderr,
      });
    });
  });
}

const simOptions = {
  instances: 2,
  clusters: { cluster0: { topology: "sharded" }, cluster1: { topology: "sharded" } },
  timeScale: 50,
};
const START_BODY = { source: "cluster0", destination: "cluster1" };

// --- (b) the shell loop ----------------------------------------------------------------------
async function shellOnce() {
  const sim = await startSimulator(simOptions);
  try {
    const r = await timed(["bash", join(root, "bench/shell-cutover.sh")], {
      INSTANCES: sim.instances.map((i) => i.url).join(" "),
      CONTROL: sim.instances[0].url,
      POLL: String(POLL_S),
      START_BODY: JSON.stringify(START_BODY),
    });
    const m = /RESULT (\{.*\})/.exec(r.stdout);
    if (r.code !== 0 || !m)
      throw new Error(`shell-cutover.sh exit ${r.code}: ${r.stderr.trim().split("\n").slice(-3).join(" / ")}`);
    const res = JSON.parse(m[1]);
    const state = sim.control.state();
    if (!state.instances.every((i) => i.state === "COMMITTED"))
      throw new Error("the shell loop ended but the fleet is not COMMITTED");
    return { reactionMs: res.reactionMs, wallMs: r.wallMs, cpuMs: r.cpuMs };
  } finally {
    await sim.close();
  }
}

// --- (a) syncbook run ---------------------------------------------------------------------------
function runHelp() {
  if (!existsSync(join(root, "dist/src/cli/run.js")))
    return { reason: "the runner is not built yet (dist/src/cli/run.js)" };
  const h = spawnSync(process.execPath, [cli, "run", "--help"], { encoding: "utf8" });
  if (h.status !== 0 || !/Usage: syncbook run\b/.test(h.stdout)) return { reason: "`syncbook run` is not there yet" };
  if (!h.stdout.includes("--report"))
    return { reason: "`syncbook run` has no --report yet (see src/report: createReportListener)" };
  return { help: h.stdout };
}

function cutoverRunbook(sim) {
  const q = (s) => JSON.stringify(s);
  return [
    "runbook: 1",
    "name: bench-cutover",
    'serviceVersion: "1.8.0"',
    "clusters:",
    "  cluster0: { topology: sharded }",
    "  cluster1: { topology: sharded }",
    "instances:",
    ...sim.instances.map((i) => `  - ${q(i.url)}`),
    `defaults: { pollInterval: ${POLL_S}s, timeout: 10m }`,
    "steps:",
    "  - id: start",
    "    start: { source: cluster0, destination: cluster1 }",
    "  - id: ready",
    "    waitFor: { canCommit: true }",
    "  - id: stop-writes",
    "    stopWrites:",
    ...(hasCurl
      ? [
          "      use: shell",
          `      with: { command: [curl, -sS, -X, POST, -H, "Content-Type: application/json", -d, ${q('{"enabled":false}')}, ${q(`${sim.instances[0].url}/sim/writes`)}] }`,
          `      undo: { use: shell, with: { command: [curl, -sS, -X, POST, -H, "Content-Type: application/json", -d, ${q('{"enabled":true}')}, ${q(`${sim.instances[0].url}/sim/writes`)}] } }`,
        ]
      : ["      use: sim-writes", "      undo: { use: sim-writes, with: { enabled: true } }"]),
    "  - id: commit",
    "    commit: {}",
    "  - id: committed",
    "    waitFor: { state: COMMITTED }",
    "",
  ].join("\n");
}

/**
 * From report.json: the last progress answer of the canCommit wait (polls are progress samples,
 * not `requests`: those are the commands) → the stop-writes hook starting, or any request after it.
 */
function reactionFromReport(report) {
  const wait = report.steps.find((s) => s.id === "ready");
  if (!wait || wait.start === undefined || wait.end === undefined) return null;
  const answers = report.progress
    .flatMap((s) => s.samples.map((x) => x.t))
    .filter((t) => t >= wait.start && t <= wait.end);
  if (answers.length === 0) return null;
  const met = Math.max(...answers);
  const next = [
    ...report.requests.filter((r) => r.t >= met && r.step !== wait.index).map((r) => r.t),
    ...report.hooks.filter((h) => h.start >= met).map((h) => h.start),
  ];
  return next.length ? Math.min(...next) - met : null;
}

async function syncbookOnce(help) {
  const sim = await startSimulator(simOptions);
  const dir = mkdtempSync(join(tmpdir(), "syncbook-bench-"));
  try {
    const file = join(dir, "cutover.yaml");
    writeFileSync(file, cutoverRunbook(sim));
    const flags = ["--report", join(dir, "report"), "--journal-dir", join(dir, "journal"), "--renderer", "silent"];
    if (/--yes\b/.test(help)) flags.push("--yes");
    const r = await timed([process.execPath, cli, "run", file, ...flags], { NO_COLOR: "1" });
    if (r.code !== 0)
      throw new Error(`syncbook run exit ${r.code}: ${r.stderr.trim().split("\n").slice(-4).join(" / ")}`);
    const report = JSON.parse(readFileSync(join(dir, "report", "report.json"), "utf8"));
    return { reactionMs: reactionFromReport(report), wallMs: r.wallMs, cpuMs: r.cpuMs };
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- 1. full rehearsal -----------------------------------------------------------------------------
async function rehearsalOnce() {
  const h = spawnSync(process.execPath, [cli, "rehearse", "--help"], { encoding: "utf8" });
  if (h.status !== 0 || !/Usage: syncbook rehearse\b/.test(h.stdout))
    return { reason: "`syncbook rehearse` is not there yet" };
  const flags = /--yes\b/.test(h.stdout) ? ["--yes"] : [];
  const r = await timed(
    [process.execPath, cli, "rehearse", "runbooks/rs-to-sharded.yaml", "--renderer", "silent", ...flags],
    { NO_COLOR: "1" },
  );
  if (r.code !== 0)
    return { reason: `syncbook rehearse exit ${r.code}: ${r.stderr.trim().split("\n").slice(-2).join(" / ")}` };
  return { wallMs: r.wallMs, cpuMs: r.cpuMs };
}

const shell = [];
let shellWhy = shellReason;
for (let i = 0; i < runs && !shellWhy; i++) {
  try {
    shell.push(await shellOnce());
    log(
      `shell run ${i + 1}/${runs}: reaction ${shell[i].reactionMs} ms, CPU ${shell[i].cpuMs?.toFixed(0)} ms, wall ${shell[i].wallMs.toFixed(0)} ms`,
    );
  } catch (err) {
    shellWhy = err.message;
  }
}
const sb = [];
let sbReason;
const help = runHelp();
if (help.reason) sbReason = help.reason;
else {
  for (let i = 0; i < runs; i++) {
    try {
      sb.push(await syncbookOnce(help.help));
      log(
        `syncbook run ${i + 1}/${runs}: reaction ${sb[i].reactionMs} ms, CPU ${sb[i].cpuMs?.toFixed(0)} ms, wall ${sb[i].wallMs.toFixed(0)} ms`,
      );
    } catch (err) {
      sbReason = err.message;
      break;
    }
  }
}
const reh = [];
let rehReason;
for (let i = 0; i < runs; i++) {
  const r = await rehearsalOnce();
  if (r.reason) {
    rehReason = r.reason;
    break;
  }
  reh.push(r);
  log(`rehearsal ${i + 1}/${runs}: wall ${r.wallMs.toFixed(0)} ms, CPU ${r.cpuMs?.toFixed(0)} ms`);
}

const S = {
  reaction: median(shell.map((x) => x.reactionMs)),
  cpu: median(shell.map((x) => x.cpuMs)),
  wall: median(shell.map((x) => x.wallMs)),
};
const B = {
  reaction: median(sb.map((x) => x.reactionMs)),
  cpu: median(sb.map((x) => x.cpuMs)),
  wall: median(sb.map((x) => x.wallMs)),
};
const note = (v, reason) => (v === null ? (reason ?? "not measured") : undefined);
const R = { wall: median(reh.map((x) => x.wallMs)), cpu: median(reh.map((x) => x.cpuMs)) };
const vsShell = (v, s, why) => ({
  ...(s !== null ? { baseline: s, baselineName: "bash+curl+jq" } : {}),
  ...(v === null
    ? { note: why ?? "not measured" }
    : s === null
      ? { note: `no shell baseline: ${shellWhy ?? "not measured"}` }
      : {}),
});
const stopHook = hasCurl ? "stop-writes hook: curl" : "stop-writes hook: sim-writes (no curl here)";
const figures = [
  {
    name: "full rehearsal wall time (syncbook rehearse rs-to-sharded, whole process)",
    value: R.wall,
    unit: "ms",
    note: note(R.wall, rehReason) ?? `median of ${reh.length}; CPU ${R.cpu?.toFixed(0)} ms; simulated clock ×50`,
  },
  {
    name: `cutover reaction, syncbook run (2 instances, ${POLL_S} s poll)`,
    value: B.reaction,
    unit: "ms",
    ...vsShell(B.reaction, S.reaction, sbReason),
  },
  { name: "cutover CPU, syncbook run (process tree)", value: B.cpu, unit: "ms", ...vsShell(B.cpu, S.cpu, sbReason) },
  {
    name: "cutover wall time, syncbook run",
    value: B.wall,
    unit: "ms",
    ...vsShell(B.wall, S.wall, sbReason),
    ...(B.wall !== null && S.wall !== null ? { note: stopHook } : {}),
  },
  {
    name: "cutover reaction, bash+curl+jq",
    value: S.reaction,
    unit: "ms",
    baseline: POLL_S * 1000,
    baselineName: "poll interval",
    ...(S.reaction === null ? { note: shellWhy ?? "not measured" } : {}),
  },
  {
    name: "cutover CPU, bash+curl+jq (process tree)",
    value: S.cpu,
    unit: "ms",
    ...(S.cpu === null ? { note: shellWhy ?? "not measured" } : {}),
  },
  {
    name: "cutover wall time, bash+curl+jq",
    value: S.wall,
    unit: "ms",
    ...(S.wall === null ? { note: shellWhy ?? "not measured" } : {}),
  },
];
if (asJson) process.stdout.write(`${JSON.stringify({ figures })}\n`);
else
  for (const f of figures)
    process.stdout.write(
      `${f.name.padEnd(62)} ${f.value === null ? "–" : f.value.toFixed(0)} ${f.unit}${f.baseline !== undefined && f.value !== null ? `  (${(f.value / f.baseline).toFixed(2)}× ${f.baselineName})` : ""}${f.note ? `  ${f.note}` : ""}\n`,
    );
