/**
 * Built-in notifiers and notification dispatch: "`webhook` (JSON POST), a chat incoming-webhook
 * format (Slack-compatible payload), `file` (JSON lines), `stdout`. Notifications fire on events
 * chosen in the runbook's top-level `notify:` block … A failing notifier is reported but never
 * fails the cutover." (issue #5, point 4)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createNotifierListener,
  definePlugin,
  loadPlugins,
  sendNotification,
  type NotifyMessage,
  type PluginRegistry,
} from "../../src/plugin/index.js";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import { ev, recordingContext, sleep, tempDir } from "../support/plugin.js";
import { startServer } from "../support/http-server.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function builtins(): Promise<PluginRegistry> {
  const { registry } = await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: "all" });
  // a plugin notifier that fails in the two ways a plugin can: throwing, and hanging
  registry.add(
    definePlugin({
      name: "bad",
      notifiers: {
        throws: () => {
          throw new Error("boom");
        },
        hangs: () => new Promise<void>(() => {}),
      },
    }),
    { kind: "file", path: "/tmp/bad.ts" },
  );
  return registry;
}

const stepFailed = (): RunEventOf<"step.finished"> =>
  ev({
    type: "step.finished",
    index: 3,
    id: "stop-writes",
    outcome: "failed",
    durationMs: 1500,
    error: "exit code 1",
    hint: "check the script",
  });
const stepOk = (): RunEventOf<"step.finished"> =>
  ev({ type: "step.finished", index: 2, id: "ready", outcome: "ok", durationMs: 20 });
const runStarted = (): RunEventOf<"run.started"> =>
  ev({
    type: "run.started",
    runbook: "sales",
    file: "rb.yaml",
    hash: "h",
    instances: [{ url: "http://127.0.0.1:27182", index: 0 }],
    mode: "rehearse",
    steps: [],
  });
const message = (text: string): NotifyMessage => ({
  type: "notify",
  text,
  index: 9,
  id: "announce",
  at: Date.UTC(2024, 0, 1),
});

describe("webhook", () => {
  it("POSTs the notification as JSON with its headers", async () => {
    const srv = await startServer((_r, _n, res) => res.writeHead(200).end());
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const r = await sendNotification(
      await builtins(),
      { use: "webhook", with: { url: `${srv.url}/hooks/ops`, headers: { "X-Token": "t0k3n-webhook" } } },
      stepFailed(),
      ctx,
    );
    expect(r).toEqual({ ok: true });
    const req = srv.seen[0]!;
    expect(req).toMatchObject({ method: "POST", url: "/hooks/ops" });
    expect(req.headers["x-token"]).toBe("t0k3n-webhook");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req.body)).toEqual({
      source: "syncbook",
      runbook: "test-runbook",
      text: "test-runbook: step 4 stop-writes failed after 1.5s: exit code 1 (check the script)",
      severity: "error",
      event: expect.objectContaining({ type: "step.finished", index: 3, id: "stop-writes", outcome: "failed" }),
    });
  });

  it("sends a notify step's text as the message", async () => {
    const srv = await startServer((_r, _n, res) => res.writeHead(202).end());
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    await sendNotification(
      await builtins(),
      { use: "webhook", with: { url: srv.url, text: "sales committed" } },
      message("sales committed"),
      ctx,
    );
    expect(JSON.parse(srv.seen[0]!.body)).toMatchObject({
      text: "sales committed",
      severity: "info",
      event: { type: "notify", id: "announce" },
    });
  });

  it("a failing webhook is a result, never an exception, and its URL secret is redacted", async () => {
    const srv = await startServer((_r, _n, res) => res.writeHead(500).end("down"));
    closers.push(srv.close);
    const secretPath = "/services/T000/B000/PLANTEDxSECRET";
    const ctx = recordingContext(tempDir(), [`${srv.url}${secretPath}`]);
    const r = await sendNotification(
      await builtins(),
      { use: "webhook", with: { url: `${srv.url}${secretPath}`, retries: 0 } },
      stepOk(),
      ctx,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toBe("notifier webhook failed: POST *** answered 500 (down), expected 2xx");
      expect(r.error).not.toContain("PLANTED");
    }
  });
});

describe("chat", () => {
  it("posts a Slack-compatible { text, blocks } payload, escaped, with a mention on failures", async () => {
    const srv = await startServer((_r, _n, res) => res.writeHead(200).end("ok"));
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const reg = await builtins();
    const w = { url: srv.url, mention: "<!here>", username: "syncbook", channel: "#dba" };
    await sendNotification(
      reg,
      { use: "chat", with: w },
      ev<RunEventOf<"wait.slow">>({
        type: "wait.slow",
        index: 1,
        id: "ready",
        stalledForMs: 600_000,
        detail: "lag 12 > 5 on shard-b",
      }),
      ctx,
    );
    await sendNotification(reg, { use: "chat", with: w }, stepFailed(), ctx);
    await sendNotification(reg, { use: "chat", with: { url: srv.url, blocks: false } }, message("a <b> & c"), ctx);
    const [slow, failed, plain] = srv.seen.map((s) => JSON.parse(s.body) as Record<string, unknown>);
    expect(slow).toMatchObject({
      text: ":warning: test-runbook: step 2 ready has made no progress for 10m 00s: lag 12 &gt; 5 on shard-b",
      username: "syncbook",
      channel: "#dba",
      blocks: [
        {
          type: "section",
          text: {
            type: "mrkdwn",
            text: ":warning: test-runbook: step 2 ready has made no progress for 10m 00s: lag 12 &gt; 5 on shard-b",
          },
        },
        {
          type: "context",
          elements: [
            {
              type: "mrkdwn",
              text: expect.stringMatching(/^syncbook · test-runbook · wait\.slow · 2024-01-01T03:00:\d\d\.000Z$/),
            },
          ],
        },
      ],
    });
    expect(failed?.text).toBe(
      ":x: <!here> test-runbook: step 4 stop-writes failed after 1.5s: exit code 1 (check the script)",
    );
    expect(plain).toEqual({ text: ":information_source: a &lt;b&gt; &amp; c" });
  });
});

describe("file", () => {
  it("appends one JSON line per notification, relative to the runbook's folder", async () => {
    const dir = tempDir();
    const ctx = recordingContext(dir);
    const reg = await builtins();
    await sendNotification(reg, { use: "file", with: { path: "out/notes.jsonl" } }, runStarted(), ctx);
    await sendNotification(reg, { use: "file", with: { path: "out/notes.jsonl", text: "[sales]" } }, stepFailed(), ctx);
    const lines = readFileSync(join(dir, "out/notes.jsonl"), "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    const rows = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      runbook: "test-runbook",
      text: "test-runbook: rehearse started on 1 instance (0 steps)",
      severity: "info",
      event: { type: "run.started" },
    });
    expect(rows[0]?.at).toMatch(/^2024-01-01T03:00:\d\d\.000Z$/);
    expect(rows[1]).toMatchObject({
      text: "[sales] test-runbook: step 4 stop-writes failed after 1.5s: exit code 1 (check the script)",
      severity: "error",
    });
  });
});

describe("stdout", () => {
  it("prints one line per notification, as text or JSON", async () => {
    const ctx = recordingContext(tempDir());
    const reg = await builtins();
    await sendNotification(
      reg,
      { use: "stdout", with: { text: "sales is committed" } },
      message("sales is committed"),
      ctx,
    );
    await sendNotification(reg, { use: "stdout", with: { format: "json" } }, stepFailed(), ctx);
    expect(ctx.printed[0]).toBe("[notify i] 2024-01-01T00:00:00.000Z sales is committed");
    expect(JSON.parse(ctx.printed[1]!)).toMatchObject({ severity: "error", event: { type: "step.finished" } });
  });
});

describe("notify: dispatch from the event stream", () => {
  it("fires each entry only on the events its `on:` selects (aliases included), in order", async () => {
    const ctx = recordingContext(tempDir());
    const listener = createNotifierListener(
      await builtins(),
      [
        { use: "stdout", with: { text: "A" }, on: ["step.failed", "run.started"] },
        { use: "stdout", with: { text: "B" }, on: ["step.finished"] },
      ],
      ctx,
    );
    const events: RunEvent[] = [runStarted(), stepOk(), stepFailed()];
    for (const e of events) expect(listener(e)).toBeUndefined();
    await listener.flush();
    const sent = (p: string) =>
      ctx.printed.filter((l) => l.includes(` ${p} test-runbook`)).map((l) => l.replace(/^\[notify .\] \S+ /, ""));
    expect(sent("A")).toEqual([
      "A test-runbook: rehearse started on 1 instance (0 steps)",
      "A test-runbook: step 4 stop-writes failed after 1.5s: exit code 1 (check the script)",
    ]);
    expect(sent("B")).toEqual([
      "B test-runbook: step 3 ready done after 20ms",
      "B test-runbook: step 4 stop-writes failed after 1.5s: exit code 1 (check the script)",
    ]);
  });

  it("a failing, throwing or hanging notifier is reported and never throws into the run", async () => {
    const srv = await startServer((_r, _n, res) => res.writeHead(500).end());
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const failures: string[] = [];
    const listener = createNotifierListener(
      await builtins(),
      [
        { use: "webhook", with: { url: srv.url, retries: 0 }, on: ["step.failed"] },
        { use: "throws", on: ["step.failed"] },
        { use: "hangs", on: ["step.failed"] },
        { use: "stdout", on: ["step.failed"] },
      ],
      ctx,
      { timeoutMs: 200, retryBudgetMs: 0, onError: (f) => failures.push(`${f.use}: ${f.error}`) },
    );
    const t = performance.now();
    expect(() => listener(stepFailed())).not.toThrow();
    expect(performance.now() - t).toBeLessThan(50);
    await listener.flush();
    expect(failures.sort()).toEqual([
      "hangs: notifier hangs failed: timed out after 200ms",
      "throws: notifier throws failed: boom",
      expect.stringMatching(
        /^webhook: notifier webhook failed: POST http:\/\/127\.0\.0\.1:\d+\/ answered 500, expected 2xx$/,
      ),
    ]);
    expect(ctx.printed).toHaveLength(1);
  });

  it("a notifier on `log` that logs does not feed itself", async () => {
    const ctx = recordingContext(tempDir());
    const reg = await builtins();
    reg.add(definePlugin({ name: "chatty", notifiers: { chatty: (_n, c) => c.log.info("sent") } }), {
      kind: "file",
      path: "/tmp/chatty.ts",
    });
    const listener = createNotifierListener(reg, [{ use: "chatty", on: ["log"] }], {
      ...ctx,
      log: (level, msg) => {
        ctx.logs.push(`${level} ${msg}`);
        void listener(ev<RunEventOf<"log">>({ type: "log", level, message: msg }));
      },
    });
    void listener(ev<RunEventOf<"log">>({ type: "log", level: "info", message: "hook said hi" }));
    for (let i = 0; i < 5; i++) await listener.flush();
    expect(ctx.logs).toEqual(["info chatty: sent"]);
  });

  it("reports failures as warn log lines by default, and never notifies about its own reports", async () => {
    const ctx = recordingContext(tempDir());
    const reg = await builtins();
    // the runner turns plugin log lines into `log` events and sends them back to listeners
    const listener = createNotifierListener(
      reg,
      [{ use: "throws", on: ["log", "step.failed"] }],
      {
        ...ctx,
        log: (level, msg) => {
          ctx.logs.push(`${level} ${msg}`);
          void listener(ev<RunEventOf<"log">>({ type: "log", level, message: msg }));
        },
      },
      { retryBudgetMs: 0 },
    );
    void listener(stepFailed());
    await listener.flush();
    await sleep(10);
    await listener.flush();
    expect(ctx.logs).toEqual(["warn notifier throws failed: boom (event step.finished); the run goes on"]);
  });
});
