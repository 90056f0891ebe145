/**
 * Issue 38 point 2, the dead-man's switch: a real run of the built CLI on the simulator stops
 * writes, its runner is killed (kill -9) in the window, and `syncbook watch` (two processes on
 * one journal folder, two pages open on one of them) tells the runbook's notifiers exactly once,
 * within its stated bound (`ALARM_CONFIRM_TICKS` reads), what happened, what it left and the
 * command that helps next; with the cutover's PagerDuty `dedup_key` (one cutover, one alert,
 * which the resumed run resolves); no secret in it; and not again when watch restarts (the claim
 * beside the journal).
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { ALARM_CONFIRM_TICKS, WATCH_TICK_MS, type WatchState } from "../../src/watch/index.js";
import { cli, startCli, type CliRun } from "../support/run.js";
import {
  COMMIT,
  COMMITTED,
  CLI_CUTOVER_DEFAULTS,
  DRAINED,
  READY,
  START,
  cutoverYaml,
  fastSim,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";
import { startServer, type Seen } from "../support/http-server.js";

const SECRET = "dead-man-secret-7c2e9";
const PD_KEY = "pd-routing-key-51ab0e";
/** How long after the kill the stub may first hear (the stated bound: two reads, plus the delivery and a loaded machine). */
const BOUND_MS = ALARM_CONFIRM_TICKS * WATCH_TICK_MS + 4000;

async function watchUrl(w: CliRun): Promise<string> {
  let out = "";
  w.child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  await w.waitFor(/syncbook watch: http:\/\/127\.0\.0\.1:\d+\//);
  return /syncbook watch: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)![1]!;
}

async function state(url: string): Promise<WatchState> {
  return (await (await fetch(new URL("state.json", url))).json()) as WatchState;
}

async function until<T>(f: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("never happened");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the dead-man's switch: a runner killed in the window, told once by watch", () => {
  let s: Simulator;
  let dir: string;
  let file: string;
  let folder: string;
  let pd: Awaited<ReturnType<typeof startServer>>;
  const watches: CliRun[] = [];
  const pages: AbortController[] = [];
  let runner: CliRun | undefined;
  let killedAt = 0;
  let firstHeardAfterMs = Infinity;
  let afterKill: Seen[] = [];
  let afterRestart: Seen[] = [];
  let restarted: WatchState | undefined;
  let all: Seen[] = [];
  let watchOutput = "";
  let cutoverId = "";
  let commitsLogBeforeResume = true;
  const env = { WATCH_SECRET: SECRET, PD_KEY };
  const enqueued = (): Seen[] => pd.seen.filter((x) => x.url === "/v2/enqueue");

  beforeAll(async () => {
    pd = await startServer((_req, _n, res) =>
      res.writeHead(202, { "content-type": "application/json" }).end('{"status":"success"}'),
    );
    s = await fastSim({ instances: 2, timeScale: 100, graceMs: 120_000 });
    dir = tempDir("syncbook-dead-man-");
    file = join(dir, "rb.yaml");
    folder = join(dir, ".syncbook", "watched");
    const hold = `  - { id: hold, hook: { use: shell, with: { command: [node, -e, "console.log('holding'); setTimeout(() => {}, 4000)", "\${env.WATCH_SECRET}"] } } }\n`;
    // a pager on failures and the run's end (it hears the runner's death), a file on commits only (it does not)
    const notify =
      `notify:\n  - { use: pagerduty, with: { routingKey: "\${env.PD_KEY}", url: "${pd.url}" }, on: [step.failed, run.finished] }\n` +
      `  - { use: file, with: { path: ${join(dir, "commits.log")} }, on: [commit.sent] }\n`;
    writeFileSync(
      file,
      cutoverYaml(s, {
        name: "watched",
        defaults: CLI_CUTOVER_DEFAULTS,
        head: notify,
        steps: START + READY + stopVia(s.verifierUrl) + hold + DRAINED + COMMIT + COMMITTED,
      }),
    );
    // two watch processes on the one folder, two pages open on the first
    for (let i = 0; i < 2; i++) watches.push(startCli(["watch", file, "--no-live"], { cwd: dir, env }));
    const urls = await Promise.all(watches.map(watchUrl));
    for (let i = 0; i < 2; i++) {
      const ac = new AbortController();
      pages.push(ac);
      void fetch(new URL("events", urls[0]), { signal: ac.signal })
        .then(async (r) => {
          const reader = r.body!.getReader();
          for (;;) if ((await reader.read()).done) break;
        })
        .catch(() => undefined);
    }
    runner = startCli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir, env });
    await runner.waitFor(/holding/, 60_000);
    await until(async () => ((await state(urls[0]!)).model.window?.open ? true : undefined));
    runner.child.kill("SIGKILL");
    await runner.done;
    killedAt = Date.now();
    await until(() => (enqueued().length > 0 ? true : undefined), 30_000);
    firstHeardAfterMs = Date.now() - killedAt;
    // longer than either watch needs to tell again, had it a mind to
    await new Promise((r) => setTimeout(r, 4 * WATCH_TICK_MS));
    afterKill = [...enqueued()];
    // watch restarted: the first stops (Ctrl-C), a new one starts on the folder
    watches[0]!.child.kill("SIGINT");
    await watches[0]!.done;
    const again = startCli(["watch", file, "--no-live"], { cwd: dir, env });
    watches.push(again);
    const url2 = await watchUrl(again);
    restarted = await until(async () => {
      const st = await state(url2);
      return st.told !== undefined ? st : undefined;
    });
    await new Promise((r) => setTimeout(r, 3 * WATCH_TICK_MS));
    afterRestart = [...enqueued()];
    commitsLogBeforeResume = existsSync(join(dir, "commits.log"));
    // the resume finishes the cutover: its success resolves the one alert
    const resumed = await cli(["run", file, "--renderer", "simple", "--resume", "--yes"], { cwd: dir, env });
    expect(resumed.code, resumed.all).toBe(0);
    await until(() => (enqueued().some((x) => JSON.parse(x.body).event_action === "resolve") ? true : undefined));
    all = [...pd.seen];
    const journal = readdirSync(folder).find((n) => n.endsWith(".jsonl"))!;
    cutoverId = (
      JSON.parse(
        readFileSync(join(folder, journal), "utf8")
          .split("\n")
          .find((l) => l.includes('"run.started"'))!,
      ) as { cutover: string }
    ).cutover;
  }, 180_000);

  afterAll(async () => {
    for (const p of pages) p.abort();
    runner?.child.kill("SIGKILL");
    for (const w of watches) if (w.child.exitCode === null) w.child.kill("SIGINT");
    const outs = await Promise.all(watches.map((w) => w.done));
    watchOutput = outs.map((o) => o.all).join("\n");
    // the watches' own words never carry a secret either
    expect(watchOutput).not.toContain(SECRET);
    expect(watchOutput).not.toContain(PD_KEY);
    await s?.close();
    await pd?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("tells the notifiers within its stated bound of the kill", () => {
    expect(firstHeardAfterMs).toBeLessThan(BOUND_MS);
  });

  it("exactly once: two watch processes, two open pages, and a restart of watch send one notification", () => {
    expect(afterKill).toHaveLength(1);
    expect(afterRestart).toHaveLength(1);
    expect(restarted?.told?.by).toBe("already");
    expect(restarted?.runner.state).toBe("dead");
    // the claim beside the journal says what was delivered
    const claim = readdirSync(folder).filter((n) => n.startsWith("watch-told."));
    expect(claim).toEqual([`watch-told.${cutoverId}.run1.json`]);
    const rec = JSON.parse(readFileSync(join(folder, claim[0]!), "utf8"));
    expect(rec).toMatchObject({ state: "told", run: 1, by: "sent", delivered: ["pagerduty (notify #1)"], failed: [] });
    // the entry that does not hear of it (commit.sent only) was not told
    expect(commitsLogBeforeResume).toBe(false);
    expect(readFileSync(join(dir, "commits.log"), "utf8")).not.toMatch(/RUNNER IS GONE/);
  });

  it("says what happened, what state it left and the command that helps next, as a critical page on the cutover's dedup_key", () => {
    const b = JSON.parse(afterKill[0]!.body);
    expect(b.event_action).toBe("trigger");
    expect(b.dedup_key).toBe(`syncbook:watched:${cutoverId}`);
    expect(b.payload.severity).toBe("critical");
    expect(b.payload.custom_details).toEqual({ runbook: "watched", cutover: cutoverId, event: "runner.lost" });
    const text = b.payload.summary as string;
    expect(text).toMatch(/^watched: THE RUNNER IS GONE: its process \(pid \d+ on .*\) no longer runs/);
    expect(text).toMatch(/It left: writes stopped \d[^;]* ago; commit not sent; in step 4 hold \(hook\)\./);
    expect(text).toContain(`Next: syncbook run ${file} --resume`);
  });

  it("one cutover, one key: the resumed run's success resolves the alert watch raised", () => {
    const bodies = all.filter((x) => x.url === "/v2/enqueue").map((x) => JSON.parse(x.body));
    expect(bodies.map((b) => b.event_action)).toEqual(["trigger", "resolve"]);
    expect(new Set(bodies.map((b) => b.dedup_key))).toEqual(new Set([`syncbook:watched:${cutoverId}`]));
  });

  it("no secret in what the pager received: the routing key only where PagerDuty needs it", () => {
    for (const x of all) {
      expect(x.body).not.toContain(SECRET);
      const b = JSON.parse(x.body);
      expect(b.routing_key).toBe(PD_KEY);
      delete b.routing_key;
      expect(JSON.stringify(b)).not.toContain(PD_KEY);
    }
  });
});
