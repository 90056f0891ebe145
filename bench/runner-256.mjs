#!/usr/bin/env node
// Benchmark: what the runner itself costs while it drives 256 instances, each polled every second:
// CPU (% of one core) and RSS of this process.
//
//   npm run build && node bench/runner-256.mjs [--instances 256] [--seconds 20] [--json]
//
// The simulator is a CHILD process, the real CLI (`node dist/cli/syncbook.cjs sim --instances 256
// --port 0 --verifier-port 0 --time-scale 1`), so its CPU is not counted. The runner runs here,
// in process (runRunbook from dist/, as `syncbook run` does minus the UI and the journal), on
//
//   start → waitFor { state: COMMITTED } (pollInterval 1s)
//
// which polls every instance once a second and never ends (nothing sends commit). Measured after
// the start step and a 3 s warm-up: process.cpuUsage() (user + system) over --seconds of wall
// time, RSS sampled every second (the peak is reported), and the polls answered (a check that
// the runner really polled 256 instances a second). Then the run is aborted.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const root = fileURLToPath(new URL("..", import.meta.url));
const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url);
const cli = join(root, "dist/cli/syncbook.cjs");
const say = (s) => process.stderr.write(`runner-256: ${s}\n`);
if (!existsSync(cli)) {
  say("dist/ is missing: npm run build");
  process.exit(2);
}
const n = arg("instances", 256);
const seconds = arg("seconds", 20);
const asJson = args.includes("--json");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- the simulator: the CLI, in a child process -----------------------------------------------
const sim = spawn(
  process.execPath,
  [cli, "sim", "--instances", String(n), "--port", "0", "--verifier-port", "0", "--time-scale", "1", "--data", "5GiB"],
  { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
);
let simOut = "";
let simErr = "";
sim.stderr.on("data", (d) => (simErr += d));
const urls = await new Promise((resolve, reject) => {
  const t = setTimeout(() => reject(new Error(`syncbook sim printed no URLs in 30 s: ${simErr.slice(-500)}`)), 30_000);
  sim.on("exit", (code) => reject(new Error(`syncbook sim exited ${code}: ${simErr.slice(-500)}`)));
  sim.stdout.on("data", (d) => {
    simOut += d;
    const found = [...simOut.matchAll(/^instance (\d+) (\S+)$/gm)].map((m) => m[2]);
    if (found.length === n && /^verifier \S+$/m.test(simOut)) {
      clearTimeout(t);
      resolve(found);
    }
  });
});
const simExit = new Promise((r) => sim.once("exit", r));
say(`simulator: ${n} instances in child pid ${sim.pid} (${urls[0]} …)`);

const dir = mkdtempSync(join(tmpdir(), "syncbook-bench-runner-"));
let figures;
try {
  const { runRunbook } = await import(dist("run/index.js").href);
  const { loadRunbook } = await import(dist("runbook/index.js").href);
  const { loadRunbookPlugins } = await import(dist("plugin/index.js").href);
  const { PLUGIN_CALL_KINDS } = await import(dist("steps/index.js").href);
  const file = join(dir, "poll-256.yaml");
  writeFileSync(
    file,
    [
      "runbook: 1",
      "name: bench-runner-256",
      'serviceVersion: "1.8.0"',
      "clusters:",
      "  cluster0: { topology: replicaSet }",
      "  cluster1: { topology: sharded }",
      "instances:",
      ...urls.map((u, i) => `  - { url: "${u}", name: sync${i} }`),
      "defaults: { pollInterval: 1s, timeout: 1h }",
      "steps:",
      "  - { id: start, start: { source: cluster0, destination: cluster1, sharding: { shardingEntries: [] } } }",
      "  - { id: committed, waitFor: { state: COMMITTED } }",
      "",
    ].join("\n"),
  );
  const loaded = await loadRunbook(file, { env: {} });
  if (!loaded.runbook)
    throw new Error(`the generated runbook is invalid: ${loaded.diagnostics.map((d) => d.message).join("; ")}`);
  const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });

  let samples = 0;
  let failedPolls = 0;
  let waiting;
  const inWait = new Promise((r) => (waiting = r));
  const listener = (e) => {
    if (e.type === "progress.sampled") samples++;
    else if (e.type === "step.started" && e.id === "committed") waiting();
    else if (e.type === "log" && e.level !== "debug" && /progress/i.test(e.message)) failedPolls++;
  };
  const controller = new AbortController();
  const run = runRunbook({
    loaded,
    registry,
    mode: "run",
    yes: true,
    env: {},
    signal: controller.signal,
    listeners: [listener],
    print: () => undefined,
  });
  const early = await Promise.race([inWait.then(() => undefined), run]);
  if (early) throw new Error(`the run ended before polling: ${early.outcome} ${early.message ?? ""}`);
  await sleep(3000); // warm-up: JIT, keep-alive connections
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const s0 = samples;
  let rssPeak = process.memoryUsage().rss;
  for (let i = 0; i < seconds; i++) {
    await sleep(1000);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  const polled = samples - s0;
  const rssEnd = process.memoryUsage().rss;
  controller.abort();
  const result = await run;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const pct = (100 * cpuMs) / wallMs;
  const rate = polled / (wallMs / 1000);
  say(
    `${polled} progress answers in ${(wallMs / 1000).toFixed(1)} s (${rate.toFixed(0)}/s, expected ${n}/s); CPU ${cpuMs.toFixed(0)} ms = ${pct.toFixed(1)}% of one core; RSS peak ${(rssPeak / 2 ** 20).toFixed(0)} MiB, end ${(rssEnd / 2 ** 20).toFixed(0)} MiB; run ended ${result.outcome}`,
  );
  const pollNote = `${polled} progress answers (${(polled / n).toFixed(0)} rounds of ${n}) in ${(wallMs / 1000).toFixed(0)} s${failedPolls ? `, ${failedPolls} poll warnings` : ""}`;
  figures = [
    {
      name: `runner CPU, ${n} instances polled at 1 s`,
      value: Math.round(pct * 100) / 100,
      unit: "% core",
      note: `${pollNote}; simulator in a child process, not counted; no UI, no journal`,
    },
    {
      name: `runner RSS, ${n} instances (peak)`,
      value: Math.round((rssPeak / 2 ** 20) * 10) / 10,
      unit: "MiB",
      note: `whole bench process (node + dist/ + the runner); at the end ${(rssEnd / 2 ** 20).toFixed(0)} MiB`,
    },
  ];
} finally {
  sim.kill("SIGTERM");
  await simExit;
  rmSync(dir, { recursive: true, force: true });
}
if (asJson) process.stdout.write(`${JSON.stringify({ figures })}\n`);
else for (const f of figures) process.stdout.write(`${f.name}: ${f.value} ${f.unit}  (${f.note})\n`);
