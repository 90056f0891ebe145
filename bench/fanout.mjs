// Benchmark: commit fan-out skew across 64 instances (budget < 20 ms): the time between the
// first and the last commit request leaving, measured from undici's onRequestStart.
//
//   npm run build && node bench/fanout.mjs [--instances 64] [--rounds 10] [--json]
//
// The simulator runs in a child process (forked from this file) so its request handling does not
// share the event loop that sends. Each round is a fresh sync, as in a real cutover: start on
// every instance, the child jumps to change event application with writes off, the fleet polls
// progress once (the runner's interlock does; it warms the keep-alive connections), then commit.
import { fork } from "node:child_process";
import { existsSync } from "node:fs";

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url);

if (args[0] === "--child") {
  const { startSimulator } = await import(dist("sim/index.js").href);
  let sim;
  process.on("message", async (m) => {
    if (m.op === "start") {
      await sim?.close();
      sim = await startSimulator({ instances: m.instances, timeScale: 0, data: "1GiB" });
      process.send({ urls: sim.instances.map((i) => i.url) });
    } else if (m.op === "to-commit") {
      sim.control.advance(60);
      sim.control.setWrites({ enabled: false });
      sim.control.advance(5);
      process.send({ ok: true });
    } else if (m.op === "close") {
      await sim?.close();
      process.exit(0);
    }
  });
  process.send({ ready: true });
} else {
  if (!existsSync(dist("fleet/index.js"))) {
    process.stderr.write("fanout: dist/ is missing: npm run build\n");
    process.exit(2);
  }
  const { createFleet } = await import(dist("fleet/index.js").href);
  const n = arg("instances", 64);
  const rounds = arg("rounds", 10);
  const child = fork(new URL(import.meta.url).pathname, ["--child"], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const replies = [];
  const waiters = [];
  child.on("message", (m) => (waiters.length ? waiters.shift()(m) : replies.push(m)));
  const next = () => (replies.length ? Promise.resolve(replies.shift()) : new Promise((r) => waiters.push(r)));
  const ask = (m) => {
    child.send(m);
    return next();
  };
  await next(); // ready

  const skews = [];
  for (let r = 0; r < rounds; r++) {
    const { urls } = await ask({ op: "start", instances: n });
    const fleet = createFleet({ instances: urls.map((url) => ({ url })), requestTimeoutMs: 5000 });
    const start = await fleet.broadcast("start", {
      source: "cluster0",
      destination: "cluster1",
      sharding: { shardingEntries: [] },
    });
    if (start.results.some((x) => !x.ok))
      throw new Error(`start failed: ${start.results.find((x) => !x.ok).error.message}`);
    await ask({ op: "to-commit" });
    await fleet.progress();
    const commit = await fleet.broadcast("commit", {});
    const failed = commit.results.filter((x) => !x.ok);
    if (failed.length) throw new Error(`commit failed on ${failed.length} instances: ${failed[0].error.message}`);
    skews.push(commit.skewMs);
    process.stderr.write(`round ${r + 1}/${rounds}: commit fan-out skew ${commit.skewMs.toFixed(2)} ms\n`);
    await fleet.close();
  }
  const exited = new Promise((r) => child.once("exit", r));
  child.send({ op: "close" });
  await exited;

  const sorted = [...skews].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const max = sorted[sorted.length - 1];
  const round2 = (v) => Math.round(v * 100) / 100;
  const figures = [
    {
      name: `commit fan-out skew (${n} instances)`,
      value: round2(median),
      unit: "ms",
      budget: "< 20 ms",
      ok: max < 20,
      note: `median of ${rounds} commits; max ${round2(max)} ms (round ${skews.indexOf(max) + 1})`,
    },
    {
      name: `commit fan-out skew, worst of ${rounds} (${n} instances)`,
      value: round2(max),
      unit: "ms",
      budget: "< 20 ms",
      ok: max < 20,
    },
  ];
  if (args.includes("--json")) process.stdout.write(`${JSON.stringify({ figures })}\n`);
  else
    for (const f of figures)
      process.stdout.write(`${f.name}: ${f.value} ${f.unit} (${f.budget}${f.ok ? ", ok" : ", MISSED"})\n`);
}
