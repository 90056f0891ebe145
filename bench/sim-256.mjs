// Benchmark: one simulator process answering 256 instances, each polled once a second.
// Budget (issue #3): under 10% of one core.
//
//   npm run build && node bench/sim-256.mjs [--instances 256] [--seconds 10] [--json]
//
// The simulator runs in a child process (forked from this file), so the numbers are its own:
// the child reports process.cpuUsage() over the polling window; the parent only polls.
// Every instance is started first (RUNNING, copying then in CEA) and the verifier is polled
// too, so the answers are the realistic ones, not IDLE nulls.
import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};

if (args[0] === "--child") {
  const dist = new URL("../dist/src/sim/index.js", import.meta.url);
  const { startSimulator } = await import(dist.href);
  const sim = await startSimulator({ instances: Number(args[1]), timeScale: 50 });
  let base = process.cpuUsage();
  let t0 = performance.now();
  process.on("message", async (m) => {
    if (m === "mark") {
      base = process.cpuUsage();
      t0 = performance.now();
      process.send({ marked: true });
    } else if (m === "usage") {
      const u = process.cpuUsage(base);
      process.send({
        cpuMs: (u.user + u.system) / 1000,
        wallMs: performance.now() - t0,
        rssMiB: process.memoryUsage().rss / 2 ** 20,
      });
    } else if (m === "close") {
      await sim.close();
      process.exit(0);
    }
  });
  process.send({ urls: sim.instances.map((i) => i.url), verifierUrl: sim.verifierUrl });
} else {
  const here = fileURLToPath(import.meta.url);
  if (!existsSync(fileURLToPath(new URL("../dist/src/sim/index.js", import.meta.url)))) {
    console.error("dist/ is missing: run `npm run build` first");
    process.exit(2);
  }
  const n = arg("instances", 256);
  const seconds = arg("seconds", 10);
  const child = fork(here, ["--child", String(n)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const next = () => new Promise((resolve) => child.once("message", resolve));
  const { urls, verifierUrl } = await next();
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 1 });
  const body = JSON.stringify({ source: "cluster0", destination: "cluster1", sharding: { shardingEntries: [] } });
  await Promise.all(
    urls.map((u) => request(`${u}/api/v1/start`, { method: "POST", body, dispatcher }).then((r) => r.body.text())),
  );
  // the verifier's check once the fleet is in change event application (a check before the destination has
  // the collections fails, and the verifier exits: src/sim/README.md)
  for (;;) {
    const ps = await Promise.all(
      urls.map((u) =>
        request(`${u}/api/v1/progress`, { dispatcher }).then(async (r) => JSON.parse(await r.body.text())),
      ),
    );
    if (ps.every((p) => p.progress?.info === "change event application")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await request(`${verifierUrl}/api/v1/check`, { method: "POST", body: "{}", dispatcher }).then((r) => r.body.text());
  // Warm the connections, then measure.
  await Promise.all(urls.map((u) => request(`${u}/api/v1/progress`, { dispatcher }).then((r) => r.body.text())));
  child.send("mark");
  await next();
  let answered = 0;
  let failed = 0;
  const poll = async (u) => {
    try {
      const r = await request(u, { dispatcher });
      JSON.parse(await r.body.text());
      answered++;
    } catch {
      failed++;
    }
  };
  const start = performance.now();
  const timers = [];
  // Each instance polled once a second, the polls spread evenly over the second.
  for (const [i, u] of urls.entries()) {
    const offset = (i / urls.length) * 1000;
    timers.push(
      setTimeout(() => {
        poll(`${u}/api/v1/progress`);
        timers.push(setInterval(() => poll(`${u}/api/v1/progress`), 1000));
      }, offset),
    );
  }
  timers.push(setInterval(() => poll(`${verifierUrl}/api/v1/progress`), 1000));
  await new Promise((r) => setTimeout(r, seconds * 1000));
  for (const t of timers) clearInterval(t);
  await new Promise((r) => setTimeout(r, 200));
  child.send("usage");
  const usage = await next();
  const pct = (usage.cpuMs / usage.wallMs) * 100;
  const rate = answered / ((performance.now() - start) / 1000);
  console.log(`sim-256: ${n} instances, ${answered} answers (${rate.toFixed(0)}/s), ${failed} failed, ${seconds} s`);
  console.log(
    `sim-256: simulator CPU ${usage.cpuMs.toFixed(0)} ms over ${usage.wallMs.toFixed(0)} ms = ${pct.toFixed(1)}% of one core (budget 10%), RSS ${usage.rssMiB.toFixed(0)} MiB`,
  );
  if (args.includes("--json")) {
    // the bench protocol (bench/run.mjs): {"figures":[…]} as the last JSON line of stdout
    const figures = [
      {
        name: `simulator CPU, ${n} instances polled at 1 s`,
        value: Math.round(pct * 100) / 100,
        unit: "% core",
        budget: "< 10%",
        ok: pct < 10 && failed === 0,
        note: `${rate.toFixed(0)} answers/s over ${seconds} s${failed ? `, ${failed} failed` : ""}`,
      },
      { name: `simulator RSS, ${n} instances`, value: Math.round(usage.rssMiB * 10) / 10, unit: "MiB" },
    ];
    console.log(JSON.stringify({ figures }));
  }
  const closed = new Promise((r) => child.once("exit", r));
  child.send("close");
  await closed;
  await dispatcher.close();
  // a missed budget is a figure, not a crash: exit 0 under --json (bench/run.mjs), 1 otherwise
  process.exitCode = args.includes("--json") || (pct < 10 && failed === 0) ? 0 : 1;
}
