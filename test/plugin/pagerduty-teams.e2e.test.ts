/**
 * The built-in `pagerduty` (Events API v2) and `teams` (Workflows webhook, Adaptive Card)
 * notifiers: what each event means to them, the bodies they send, against local stand-ins; and,
 * end to end, one alert per cutover: a failed run triggers, its `--resume` that finishes resolves,
 * with the same `dedup_key`, and no secret reaches either service's logs or the run's output.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadPlugins, sendNotification, type PluginRegistry } from "../../src/plugin/index.js";
import type { RunEventOf } from "../../src/events.js";
import { pagerDutyAction, pagerDutyBody } from "../../plugins/pagerduty.js";
import type { teamsPayload } from "../../plugins/teams.js";
import { cli, runbookFor, sim, tempDir as runDir, writeRunbook, START } from "../support/run.js";
import { ev, recordingContext, tempDir } from "../support/plugin.js";
import { startServer } from "../support/http-server.js";
import type { Simulator } from "../../src/sim/index.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

const builtins = async (): Promise<PluginRegistry> =>
  (await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: "all" })).registry;

const failed = (): RunEventOf<"step.finished"> =>
  ev({ type: "step.finished", index: 3, id: "stop-writes", outcome: "failed", durationMs: 10, error: "exit code 1" });
const ok = (): RunEventOf<"run.finished"> =>
  ev({ type: "run.finished", outcome: "ok", exitCode: 0, committed: true, durationMs: 10 });
const commit = (): RunEventOf<"commit.sent"> =>
  ev({ type: "commit.sent", index: 6, id: "commit", instances: ["a", "b"], skewMs: 1 });

describe("pagerduty: what each notification means", () => {
  it("failures trigger, a finished run resolves, a commit is a change event, the rest sends nothing", () => {
    expect(pagerDutyAction(failed(), "error")).toBe("trigger");
    expect(pagerDutyAction(ok(), "info")).toBe("resolve");
    expect(pagerDutyAction(commit(), "info")).toBe("change");
    const runFailed = ev<RunEventOf<"run.finished">>({
      type: "run.finished",
      outcome: "failed",
      exitCode: 1,
      committed: false,
      durationMs: 1,
    });
    expect(pagerDutyAction(runFailed, "error")).toBe("trigger");
    const stepOk = ev<RunEventOf<"step.finished">>({
      type: "step.finished",
      index: 0,
      id: "x",
      outcome: "ok",
      durationMs: 1,
    });
    expect(pagerDutyAction(stepOk, "info")).toBe("none");
    const slow = ev<RunEventOf<"wait.slow">>({
      type: "wait.slow",
      index: 1,
      id: "ready",
      stalledForMs: 60_000,
      detail: "lag 40",
    });
    expect(pagerDutyAction(slow, "warning")).toBe("none");
    expect(pagerDutyAction(slow, "warning", "warning")).toBe("trigger");
  });
  it("one dedup_key per cutover; the trigger carries the payload, the resolve does not", () => {
    const m = { text: "t", severity: "error" as const, runbook: "sales", cutover: "C1", event: "step.finished", at: 0 };
    const t = pagerDutyBody("trigger", { routingKey: "rk" }, m);
    const r = pagerDutyBody("resolve", { routingKey: "rk" }, { ...m, cutover: "C1" });
    expect(t.dedup_key).toBe("syncbook:sales:C1");
    expect(r.dedup_key).toBe(t.dedup_key);
    expect(t).toMatchObject({ event_action: "trigger", payload: { severity: "error", source: "syncbook sales" } });
    expect(r).not.toHaveProperty("payload");
    expect(pagerDutyBody("change", { routingKey: "rk" }, m)).not.toHaveProperty("dedup_key");
  });
});

describe("against local stand-ins", () => {
  it("pagerduty posts to /v2/enqueue and /v2/change/enqueue; a 429 is retried; the routing key is never logged", async () => {
    let n = 0;
    const srv = await startServer((_r, _i, res) =>
      ++n === 1 ? res.writeHead(429).end() : res.writeHead(202).end('{"status":"success"}'),
    );
    closers.push(srv.close);
    const ctx = { ...recordingContext(tempDir()), cutover: "C9" };
    const reg = await builtins();
    const call = { use: "pagerduty", with: { routingKey: "R0UTINGKEY-secret", url: srv.url, retries: 2 } };
    expect(await sendNotification(reg, call, failed(), ctx)).toEqual({ ok: true });
    expect(await sendNotification(reg, call, commit(), ctx)).toEqual({ ok: true });
    expect(srv.seen.map((s) => s.url)).toEqual(["/v2/enqueue", "/v2/enqueue", "/v2/change/enqueue"]);
    const trigger = JSON.parse(srv.seen[1]!.body) as Record<string, unknown>;
    expect(trigger).toMatchObject({
      routing_key: "R0UTINGKEY-secret",
      event_action: "trigger",
      dedup_key: "syncbook:test-runbook:C9",
    });
    expect(JSON.stringify(ctx.logs)).not.toContain("R0UTINGKEY");
  });
  it("a delivery that keeps failing is reported, bounded, and never throws", async () => {
    const srv = await startServer((_r, _i, res) => res.writeHead(503).end());
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const r = await sendNotification(
      await builtins(),
      { use: "pagerduty", with: { routingKey: "k", url: srv.url, retries: 1, timeout: "2s" } },
      failed(),
      ctx,
    );
    expect(r.ok).toBe(false);
    expect(srv.seen).toHaveLength(2);
  });
  it("teams posts a message with one Adaptive Card", async () => {
    const srv = await startServer((_r, _i, res) => res.writeHead(202).end());
    closers.push(srv.close);
    const r = await sendNotification(
      await builtins(),
      { use: "teams", with: { url: `${srv.url}/workflows/x`, mention: "DBA on call" } },
      failed(),
      { ...recordingContext(tempDir()), cutover: "C2" },
    );
    expect(r).toEqual({ ok: true });
    const body = JSON.parse(srv.seen[0]!.body) as ReturnType<typeof teamsPayload>;
    expect(body.type).toBe("message");
    const att = (body.attachments as Record<string, any>[])[0]!; // eslint-disable-line @typescript-eslint/no-explicit-any -- card JSON
    expect(att.contentType).toBe("application/vnd.microsoft.card.adaptive");
    expect(att.content).toMatchObject({ type: "AdaptiveCard", version: "1.4" });
    expect(JSON.stringify(att.content.body)).toContain("DBA on call");
    expect(JSON.stringify(att.content.body)).toContain("stop-writes failed");
    expect(JSON.stringify(att.content.body)).toContain('"Cutover","value":"C2"');
  });
});

describe("one alert per cutover, end to end", () => {
  let s: Simulator | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it("a failed run triggers; its --resume that finishes resolves the same dedup_key; the card reaches Teams; no secret leaks", async () => {
    const pd = await startServer((_r, _i, res) => res.writeHead(202).end('{"status":"success"}'));
    const teams = await startServer((_r, _i, res) => res.writeHead(202).end());
    closers.push(pd.close, teams.close);
    s = await sim();
    const dir = runDir();
    const secret = "PdK3y-0f-th3-cutover-x9";
    const hook =
      "  - { id: gate, hook: { use: shell, with: { command: [node, -e, \"process.exit(require('fs').existsSync('ok') ? 0 : 3)\"] } } }\n";
    const notify = `notify:
  - { use: pagerduty, with: { routingKey: "\${env.PD_KEY}", url: "${pd.url}" }, on: [step.failed, run.finished, commit.sent] }
  - { use: teams, with: { url: "${teams.url}/wf?sig=\${env.TEAMS_SIG}" }, on: [step.failed, run.finished] }
`;
    const file = writeRunbook(dir, runbookFor(s, START + hook, notify));
    const env = { PD_KEY: secret, TEAMS_SIG: "S1gnatur3-t34ms-zz" };
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir, env });
    expect(first.code, first.all).toBe(1);
    writeFileSync(join(dir, "ok"), "");
    const second = await cli(["run", file, "--resume", "--renderer", "simple"], { cwd: dir, env });
    expect(second.code, second.all).toBe(0);

    const bodies = pd.seen.map((x) => JSON.parse(x.body) as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any -- API JSON
    const actions = bodies.map((b) => b.event_action as string);
    // step.failed and run.finished (failed) both trigger the one alert; the resumed run resolves it
    expect(actions).toEqual(["trigger", "trigger", "resolve"]);
    expect(new Set(bodies.map((b) => b.dedup_key)).size, JSON.stringify(bodies.map((b) => b.dedup_key))).toBe(1);
    expect(bodies.every((b) => b.routing_key === secret)).toBe(true);
    expect(teams.seen.length).toBe(3);
    expect(teams.seen.every((x) => x.url === "/wf?sig=S1gnatur3-t34ms-zz")).toBe(true);
    // what reached the services is theirs; nothing of it reaches the run's own output or journal
    for (const out of [first.all, second.all]) {
      expect(out).not.toContain(secret);
      expect(out).not.toContain("S1gnatur3");
    }
    const jdir = join(dir, ".syncbook");
    expect(existsSync(jdir)).toBe(true);
    expect(readdirSync(jdir, { recursive: true }).length).toBeGreaterThan(0);
  }, 60_000);
});
