#!/usr/bin/env node
// Benchmark: the runner's reaction latency. From the moment the fleet meets a waitFor condition
// to the moment the first request of the next step reaches the fleet. Budget (issue): at most
// the poll interval + 50 ms.
//
//   npm run build && node bench/reaction.mjs [--instances 4] [--rounds 12] [--poll 1000] [--json]
//
// How: the simulator runs in a CHILD process (forked from this file) with its clock stopped
// (timeScale 0), so nothing changes unless we say so; the child timestamps every HTTP request as
// it arrives (a wrapper around http.Server#emit("request"), same clock for everything it
// measures). The runner runs here, in process (runRunbook from dist/, no UI), on the runbook
//
//   start → ready: waitFor { canCommit: true } → stop-writes: stopWrites { use: sim-writes }
//
// Each round: once `ready` has polled at least once, we wait a random part of the poll interval,
// then the child advances the simulated clock 60 s (the copy ends, change event application
// starts: canCommit turns true on every instance at once) and records that moment, t_met. The
// first request of the next step is the sim-writes hook's POST /sim/writes; its arrival is t_next.
//   reaction = t_next − t_met            (poll phase + the runner's own work; ≤ poll + 50 ms)
//   runner's own share = t_next − arrival of the last GET /progress before it (the poll that saw
//   the condition met → the next step's first request: answer, parsing, conditions, events, hook)
// Every round is a fresh simulator (start needs an IDLE fleet). REACTION_DEBUG=1 prints the
// simulator's request log around each round (times relative to the condition being met).
import { fork } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url);
const now = () => performance.timeOrigin + performance.now();

if (args[0] === "--child") {
  // --- the simulator, with a request log -------------------------------------------------------
  const http = await import("node:http");
  const log = [];
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...rest) {
    if (event === "request") {
      const req = rest[0];
      log.push({ t: now(), method: req.method, path: req.url.split("?")[0], port: this.address()?.port });
    }
    return emit.call(this, event, ...rest);
  };
  const { startSimulator } = await import(dist("sim/index.js").href);
  let sim;
  process.on("message", async (m) => {
    if (m.op === "start") {
      await sim?.close();
      const cluster = { topology: "sharded", shards: m.instances };
      sim = await startSimulator({
        instances: m.instances,
        timeScale: 0,
        data: "1GiB",
        clusters: { cluster0: cluster, cluster1: cluster },
      });
      log.length = 0;
      process.send({ urls: sim.instances.map((i) => i.url), verifierUrl: sim.verifierUrl });
    } else if (m.op === "arm") {
      sim.control.advance(60); // the copy ends: change event application, canCommit true everywhere
      const tMet = now();
      const st = sim.control.state();
      process.send({ tMet, states: st.instances.map((i) => i.state) });
    } else if (m.op === "log") {
      process.send({ log });
    } else if (m.op === "close") {
      await sim?.close();
      process.exit(0);
    }
  });
  process.send({ ready: true });
} else {
  if (!existsSync(fileURLToPath(dist("run/index.js")))) {
    process.stderr.write("reaction: dist/ is missing: npm run build\n");
    process.exit(2);
  }
  const { runRunbook } = await import(dist("run/index.js").href);
  const { loadRunbook } = await import(dist("runbook/index.js").href);
  const { loadRunbookPlugins } = await import(dist("plugin/index.js").href);
  const { PLUGIN_CALL_KINDS } = await import(dist("steps/index.js").href);
  const n = arg("instances", 4);
  const rounds = arg("rounds", 12);
  const pollMs = arg("poll", 1000);
  const asJson = args.includes("--json");
  const say = (s) => process.stderr.write(`reaction: ${s}\n`);

  const child = fork(fileURLToPath(import.meta.url), ["--child"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const replies = [];
  const waiters = [];
  child.on("message", (m) => (waiters.length ? waiters.shift()(m) : replies.push(m)));
  const next = () => (replies.length ? Promise.resolve(replies.shift()) : new Promise((r) => waiters.push(r)));
  const ask = (m) => {
    child.send(m);
    return next();
  };
  await next(); // ready

  const dir = mkdtempSync(join(tmpdir(), "syncbook-bench-reaction-"));
  const reactions = [];
  const own = [];
  const problems = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const { urls } = await ask({ op: "start", instances: n });
      const file = join(dir, `round-${r}.yaml`);
      writeFileSync(
        file,
        [
          "runbook: 1",
          "name: bench-reaction",
          'serviceVersion: "1.8.0"',
          "clusters:",
          `  cluster0: { topology: sharded, shards: ${n} }`,
          `  cluster1: { topology: sharded, shards: ${n} }`,
          "instances:",
          ...urls.map((u, i) => `  - { url: "${u}", name: sync${i} }`),
          `defaults: { pollInterval: ${pollMs}ms, timeout: 2m }`,
          "steps:",
          "  - { id: start, start: { source: cluster0, destination: cluster1 } }",
          "  - { id: ready, waitFor: { canCommit: true } }",
          "  - { id: stop-writes, stopWrites: { use: sim-writes } }",
          "",
        ].join("\n"),
      );
      const loaded = await loadRunbook(file, { env: {} });
      if (!loaded.runbook)
        throw new Error(`the generated runbook is invalid: ${loaded.diagnostics.map((d) => d.message).join("; ")}`);
      const { registry, diagnostics } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
      if (diagnostics.some((d) => d.severity === "error"))
        throw new Error(diagnostics.map((d) => d.message).join("; "));

      // arm the condition at a random phase of the poll, once `ready` has polled at least once
      let armed;
      let polled;
      const firstPoll = new Promise((resolve) => (polled = resolve));
      const listener = (e) => {
        if (e.type === "wait.status" && e.id === "ready" && !e.met) polled();
      };
      const run = runRunbook({
        loaded,
        registry,
        mode: "run",
        yes: true,
        env: {},
        listeners: [listener],
        print: () => undefined,
      });
      await Promise.race([firstPoll, run]);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * pollMs));
      armed = await ask({ op: "arm" });
      const result = await run;
      const { log } = await ask({ op: "log" });
      if (result.outcome !== "ok") {
        problems.push(`round ${r + 1}: run ${result.outcome}: ${result.message ?? ""}`);
        continue;
      }
      const hook = log.find((x) => x.method === "POST" && x.path === "/sim/writes" && x.t >= armed.tMet);
      const lastPoll = log
        .filter((x) => x.method === "GET" && x.path === "/api/v1/progress" && hook && x.t <= hook.t)
        .at(-1);
      if (!hook || !lastPoll) {
        problems.push(`round ${r + 1}: no POST /sim/writes after the condition was met`);
        continue;
      }
      if (process.env.REACTION_DEBUG)
        say(
          JSON.stringify(
            log.filter((x) => x.t >= armed.tMet - pollMs).map((x) => ({ ...x, t: +(x.t - armed.tMet).toFixed(2) })),
          ),
        );
      reactions.push(hook.t - armed.tMet);
      own.push(hook.t - lastPoll.t);
      say(
        `round ${r + 1}/${rounds}: condition met → POST /sim/writes ${(hook.t - armed.tMet).toFixed(1)} ms (the poll that saw it → next request ${(hook.t - lastPoll.t).toFixed(2)} ms)`,
      );
    }
  } finally {
    const exited = new Promise((r) => child.once("exit", r));
    child.send({ op: "close" });
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }

  const sorted = (xs) => [...xs].sort((a, b) => a - b);
  const median = (xs) => {
    const s = sorted(xs);
    const m = Math.floor(s.length / 2);
    return s.length === 0 ? null : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const max = (xs) => (xs.length ? Math.max(...xs) : null);
  const r2 = (v) => (v === null ? null : Math.round(v * 100) / 100);
  const budget = pollMs + 50;
  const note = problems.length ? problems.slice(0, 2).join("; ") : undefined;
  const figures = [
    {
      name: `reaction, condition met → next step's first request (${n} instances, worst of ${reactions.length})`,
      value: r2(max(reactions)),
      unit: "ms",
      baseline: pollMs,
      baselineName: "poll interval",
      budget: `≤ ${budget} ms`,
      ok: max(reactions) !== null && max(reactions) <= budget && problems.length === 0,
      note,
    },
    {
      name: `reaction, condition met → next step's first request (median of ${reactions.length})`,
      value: r2(median(reactions)),
      unit: "ms",
      baseline: pollMs,
      baselineName: "poll interval",
      note: "armed at a random phase of the poll: expect about half the interval",
    },
    {
      name: "runner's own share: the poll that saw it met → next request (median)",
      value: r2(median(own)),
      unit: "ms",
      note: `max ${r2(max(own))} ms`,
    },
  ];
  if (asJson) process.stdout.write(`${JSON.stringify({ figures })}\n`);
  else
    for (const f of figures)
      process.stdout.write(
        `${f.name}: ${f.value} ${f.unit}${f.budget ? ` (${f.budget}${f.ok ? ", ok" : ", MISSED"})` : ""}${f.note ? `  ${f.note}` : ""}\n`,
      );
  process.exitCode = reactions.length ? 0 : 1;
}
