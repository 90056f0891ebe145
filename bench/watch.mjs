#!/usr/bin/env node
// Benchmark (issue 38, point 5): `syncbook watch` holding load. 64 instances and 50 open pages at
// one update a second: the built CLI's `syncbook watch <runbook>` reads a 64-instance simulator
// itself (GET progress, once a second) and follows a journal that a stand-in runner grows by 64
// progress samples a second; 50 clients keep `/events` open. Prints the watch process's CPU (% of
// one core) and RSS, the frames each page got and their size, and how late a journal line reaches
// a page. Figures only, no budget asserted here (a timed test on a shared machine is no test);
// the issue's bar is "on one core's share of this machine".
//
//   npm run build && node bench/watch.mjs [--instances 64] [--pages 50] [--seconds 30] [--json]
//
// The simulator runs in a child process of its own (forked from this file), so its work is not
// counted as watch's.
import { fork, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url);

if (args[0] === "--child") {
  const n = Number(args[1]);
  const { startSimulator } = await import(dist("sim/index.js").href);
  const cluster = { topology: "sharded", shards: n };
  const sim = await startSimulator({
    instances: n,
    data: "1GiB",
    timeScale: 1,
    clusters: { cluster0: cluster, cluster1: cluster },
  });
  process.send({ urls: sim.instances.map((i) => i.url), verifier: sim.verifierUrl });
  process.on("message", async () => {
    await sim.close();
    process.exit(0);
  });
} else {
  const N = Number(opt("instances", "64"));
  const PAGES = Number(opt("pages", "50"));
  const SECONDS = Number(opt("seconds", "30"));
  const root = fileURLToPath(new URL("..", import.meta.url));
  const cliPath = join(root, "dist/cli/syncbook.cjs");
  const child = fork(fileURLToPath(import.meta.url), ["--child", String(N)], { stdio: "inherit" });
  const { urls, verifier } = await new Promise((r) => child.once("message", r));
  const dir = mkdtempSync(join(tmpdir(), "syncbook-bench-watch-"));
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    `runbook: 1\nname: bench\nserviceVersion: "1.8.0"\nclusters:\n  cluster0: { topology: sharded, shards: ${N} }\n  cluster1: { topology: sharded, shards: ${N} }\ninstances:\n${urls.map((u, i) => `  - { url: "${u}", name: s${i} }`).join("\n")}\nverifier: "${verifier}"\nsteps:\n  - { id: start, start: { source: cluster0, destination: cluster1 } }\n  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n`,
  );
  // the stand-in runner: a journal with a run started, then 64 samples a second
  const folder = join(dir, ".syncbook", "bench");
  mkdirSync(folder, { recursive: true });
  const journal = join(folder, "20261129T000000Z-bench.jsonl");
  let seq = 0;
  const line = (type, body) => JSON.stringify({ type, seq: ++seq, at: Date.now(), ...body });
  const instances = urls.map((url, index) => ({ url, name: `s${index}`, index }));
  writeFileSync(
    journal,
    [
      line("run.started", {
        runbook: "bench",
        file,
        hash: "sha256:00000000",
        mode: "run",
        instances,
        steps: [
          { index: 0, id: "start", kind: "start", title: "start" },
          { index: 1, id: "ready", kind: "waitFor", title: "ready" },
        ],
        by: { user: "bench", host: "bench", pid: process.pid },
      }),
      line("step.started", { index: 1, id: "ready", kind: "waitFor", title: "ready" }),
    ].join("\n") + "\n",
  );
  writeFileSync(
    join(folder, "syncbook.lock"),
    JSON.stringify({
      pid: process.pid,
      host: (await import("node:os")).hostname(),
      startedAt: new Date().toISOString(),
    }),
  );

  const watch = spawn(process.execPath, [cliPath, "watch", file], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((r) => {
    let out = "";
    watch.stdout.on("data", (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) r(m[1]);
    });
  });
  // 50 pages: each keeps /events open and notes each frame's size and how late the newest sample is
  const pages = [];
  for (let p = 0; p < PAGES; p++) {
    const page = { frames: 0, bytes: 0, lateMs: [] };
    pages.push(page);
    const req = request(new URL("events", url), (res) => {
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (!frame.startsWith("data: ")) continue;
          page.frames++;
          page.bytes += frame.length;
          const st = JSON.parse(frame.slice(6));
          const last = st.model.cutover.lastAt;
          if (typeof last === "number") page.lateMs.push(Date.now() - last);
        }
      });
    });
    req.end();
    page.req = req;
  }
  const ticks = (pid) => {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return Number(f[11]) + Number(f[12]); // utime + stime, clock ticks
  };
  const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;
  // warm up 3 s, then measure
  const sampler = setInterval(() => {
    appendFileSync(
      journal,
      instances
        .map((instance) =>
          line("progress.sampled", {
            instance,
            progress: { state: "RUNNING", canCommit: false, lagTimeSeconds: 20, info: "change event application" },
          }),
        )
        .join("\n") + "\n",
    );
  }, 1000);
  await new Promise((r) => setTimeout(r, 3000));
  for (const p of pages) {
    p.frames = 0;
    p.bytes = 0;
    p.lateMs = [];
  }
  const t0 = process.hrtime.bigint();
  const c0 = ticks(watch.pid);
  let peak = 0;
  const rssTimer = setInterval(() => (peak = Math.max(peak, rss(watch.pid))), 500);
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpuS = (ticks(watch.pid) - c0) / 100;
  clearInterval(rssTimer);
  clearInterval(sampler);
  const frames = pages.map((p) => p.frames);
  const late = pages.flatMap((p) => p.lateMs).sort((a, b) => a - b);
  const q = (x) => late[Math.min(late.length - 1, Math.floor(x * late.length))];
  const fig = {
    instances: N,
    pages: PAGES,
    seconds: Math.round(wallS),
    cpuPercentOfCore: Math.round((cpuS / wallS) * 1000) / 10,
    rssPeakMiB: Math.round(peak),
    framesPerPagePerSecond: Math.round((frames.reduce((a, b) => a + b, 0) / PAGES / wallS) * 100) / 100,
    framesMinPage: Math.min(...frames),
    frameKiB: Math.round(
      pages.reduce((a, p) => a + p.bytes, 0) /
        Math.max(
          1,
          frames.reduce((a, b) => a + b, 0),
        ) /
        1024,
    ),
    journalLineToPageMsMedian: q(0.5),
    journalLineToPageMsP95: q(0.95),
  };
  for (const p of pages) p.req.destroy();
  watch.kill("SIGINT");
  child.send("stop");
  await new Promise((r) => watch.once("close", r));
  rmSync(dir, { recursive: true, force: true });
  // bench/run.mjs's protocol: { figures: [{ name, value, unit, note? }] }
  const at = `${N} instances, ${PAGES} pages`;
  const figures = [
    { name: `watch process CPU, ${at}`, value: fig.cpuPercentOfCore, unit: "% core" },
    { name: `watch process RSS (peak), ${at}`, value: fig.rssPeakMiB, unit: "MiB" },
    {
      name: `frames per page per second, ${at}`,
      value: fig.framesPerPagePerSecond,
      unit: "/s",
      note: `fewest on one page: ${fig.framesMinPage}; ${fig.frameKiB} KiB each`,
    },
    {
      name: `newest journal line → page (median), ${at}`,
      value: fig.journalLineToPageMsMedian ?? null,
      unit: "ms",
      note: `p95 ${fig.journalLineToPageMsP95} ms`,
    },
  ];
  if (args.includes("--json")) process.stdout.write(`${JSON.stringify({ figures })}\n`);
  else {
    process.stdout.write(
      `syncbook watch: ${N} instances, ${PAGES} open pages, ${fig.seconds} s, node ${process.version}\n`,
    );
    process.stdout.write(`  watch process CPU            ${fig.cpuPercentOfCore} % of one core\n`);
    process.stdout.write(`  watch process RSS (peak)     ${fig.rssPeakMiB} MiB\n`);
    process.stdout.write(
      `  frames per page per second   ${fig.framesPerPagePerSecond} (fewest on one page: ${fig.framesMinPage})\n`,
    );
    process.stdout.write(`  frame size                   ${fig.frameKiB} KiB (the whole state)\n`);
    process.stdout.write(
      `  newest journal line → page   median ${fig.journalLineToPageMsMedian} ms, p95 ${fig.journalLineToPageMsP95} ms\n`,
    );
  }
  process.exit(0);
}
