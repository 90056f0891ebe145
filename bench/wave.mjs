// Benchmark: `syncbook wave rehearse` of a generated wave of 100 runbooks (issue 28).
// Budget: under a minute and under 1 GiB on a 2-core machine.
//
//   npm run build && node bench/wave.mjs [--runbooks 100] [--max-parallel 8] [--json]
//
// The wave mixes topologies (replica set to replica set, replica set to sharded with one
// instance, sharded to sharded with 2 or 3 instances, one per shard) and `after` chains (every
// fourth runbook comes after the one 8 places before it, every tenth after two). The rehearsal
// runs in a child process (forked from this file) that reports its own peak RSS
// (process.resourceUsage().maxRSS), wall time and each runbook's duration; the per-runbook
// overhead is what the wave costs beyond its rehearsals run maxParallel at a time:
// (wall − Σ durations ÷ maxParallel) ÷ runbooks.
import { fork } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};

const SHARDING =
  ", sharding: { createSupportingIndexes: true, shardingEntries: [{ database: app, collection: events, shardCollection: { key: [{ at: 1 }] } }] }";

function runbook(i) {
  const kind = i % 3;
  const n = kind === 2 ? 2 + (i % 2) : 1;
  const port = 30000 + i * 4;
  const cluster = (t, shards) => `{ topology: ${t}${shards ? `, shards: ${shards}` : ""}, serverVersion: "7.0" }`;
  const [src, dst] =
    kind === 0
      ? [cluster("replicaSet"), cluster("replicaSet")]
      : kind === 1
        ? [cluster("replicaSet"), cluster("sharded", 2)]
        : [cluster("sharded", n), cluster("sharded", n)];
  return `runbook: 1
name: rb-${i}
serviceVersion: "1.8.0"
clusters:
  cluster0: ${src}
  cluster1: ${dst}
instances:
${Array.from({ length: n }, (_, k) => `  - { url: "http://127.0.0.1:${port + k}", name: rb-${i}-${k}${k === 0 ? ", startedFirst: true" : ""} }`).join("\n")}
verifier: "http://127.0.0.1:${40000 + i}"
defaults: { pollInterval: 2s, timeout: 30m }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1${kind === 1 ? SHARDING : ""} } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5, timeout: 12h } }
  - { id: check, startVerification: {} }
  - id: stop-writes
    stopWrites: { use: shell, with: { command: ["true"] }, undo: { use: shell, with: { command: ["true"] } } }
  - { id: drained, waitFor: { canCommit: true, lagBelow: 3, timeout: 15m } }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED, timeout: 1h } }
  - { id: writable, waitFor: { canWrite: true, timeout: 10m } }
  - { id: verify, verify: { timeout: 4h } }
`;
}

function generate(dir, count, maxParallel) {
  const entries = [];
  for (let i = 0; i < count; i++) {
    writeFileSync(join(dir, `rb-${i}.yaml`), runbook(i));
    const after = [];
    if (i >= 8 && i % 4 === 0) after.push(`rb-${i - 8}`);
    if (i >= 10 && i % 10 === 0) after.push(`rb-${i - 3}`);
    entries.push(after.length ? `  - { path: rb-${i}.yaml, after: [${after.join(", ")}] }` : `  - rb-${i}.yaml`);
  }
  const file = join(dir, "wave.yaml");
  writeFileSync(file, `wave: 1\nname: bench\nmaxParallel: ${maxParallel}\nrunbooks:\n${entries.join("\n")}\n`);
  return file;
}

if (args[0] === "--child") {
  const [, waveFile, reportDir] = args;
  const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url).href;
  const { lintWave } = await import(dist("wave/lint.js"));
  const { rehearseWave } = await import(dist("wave/rehearse.js"));
  const { buildWaveReport, writeWaveReport } = await import(dist("wave/report.js"));
  const t0 = performance.now();
  const linted = await lintWave(waveFile);
  const lintMs = performance.now() - t0;
  const errors = linted.diagnostics.filter((d) => d.severity === "error");
  if (!linted.plan) {
    process.send({
      error: `the generated wave does not lint: ${errors
        .slice(0, 3)
        .map((d) => d.message)
        .join("; ")}`,
    });
    process.exit(1);
  }
  const entries = await rehearseWave(linted.plan, { reportDir });
  await writeWaveReport(buildWaveReport({ wave: "bench", source: "rehearse", runbooks: entries }), reportDir);
  process.send({
    wallMs: performance.now() - t0,
    lintMs,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    durations: entries.map((e) => e.durationMs ?? 0),
    statuses: entries.map((e) => e.status),
    stages: 1 + Math.max(...linted.plan.items.map((i) => i.stage)),
  });
  process.exit(0);
} else {
  if (!existsSync(fileURLToPath(new URL("../dist/src/wave/rehearse.js", import.meta.url)))) {
    console.error("dist/ is missing: run `npm run build` first");
    process.exit(2);
  }
  const count = arg("runbooks", 100);
  const maxParallel = arg("max-parallel", 8);
  const dir = mkdtempSync(join(tmpdir(), "syncbook-bench-wave-"));
  try {
    const waveFile = generate(dir, count, maxParallel);
    mkdirSync(join(dir, "report"));
    const child = fork(fileURLToPath(import.meta.url), ["--child", waveFile, join(dir, "report")], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    const r = await new Promise((resolve, reject) => {
      child.on("message", resolve);
      child.on("exit", (code) => reject(new Error(`the rehearsal exited ${code} before reporting`)));
    });
    if (r.error) throw new Error(r.error);
    const sum = r.durations.reduce((a, b) => a + b, 0);
    const overhead = (r.wallMs - sum / maxParallel) / count;
    const safe = r.statuses.filter((s) => s === "SAFE").length;
    console.error(
      `wave of ${count} runbooks (${r.stages} stages), maxParallel ${maxParallel}: ${safe} SAFE; wall ${(r.wallMs / 1000).toFixed(1)} s (lint ${(r.lintMs / 1000).toFixed(1)} s), peak RSS ${r.maxRssMiB.toFixed(0)} MiB, mean rehearsal ${(sum / count / 1000).toFixed(2)} s`,
    );
    const figures = [
      {
        name: `wave rehearse, ${count} runbooks, maxParallel ${maxParallel} (wall)`,
        value: Math.round(r.wallMs),
        unit: "ms",
        budget: "< 60000 ms",
        ok: r.wallMs < 60_000 && safe === count,
        ...(safe === count ? {} : { note: `only ${safe} of ${count} SAFE` }),
      },
      {
        name: `wave rehearse, ${count} runbooks: peak RSS`,
        value: Math.round(r.maxRssMiB),
        unit: "MiB",
        budget: "< 1024 MiB",
        ok: r.maxRssMiB < 1024,
      },
      {
        name: "wave rehearse: per-runbook overhead ((wall − Σ rehearsals ÷ maxParallel) ÷ runbooks)",
        value: Math.round(overhead),
        unit: "ms",
      },
      { name: "wave rehearse: mean rehearsal of one runbook", value: Math.round(sum / count), unit: "ms" },
    ];
    if (args.includes("--json")) console.log(JSON.stringify({ figures }));
    else
      for (const f of figures) console.log(`${f.name}: ${f.value} ${f.unit}${f.budget ? ` (budget ${f.budget})` : ""}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
