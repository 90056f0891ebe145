/**
 * "A secret in a header that never appears in any output or log" (issue #5, tests): a value from
 * `${env.*}` planted in the `http` hook's and the `webhook` notifier's headers goes to the server
 * and nowhere else — not in log lines, hook outcomes, undo reports, notifier failures, printed
 * lines, the file notifier's lines, nor lint findings — on success, on failure, on retries and on
 * a server that echoes it back.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createNotifierListener,
  lintPlugins,
  loadRunbookPlugins,
  runHook,
  stepInfo,
  undoFor,
  UndoStack,
} from "../../src/plugin/index.js";
import type { RunEventOf } from "../../src/events.js";
import { ev, loadedFromYaml, recordingContext, tempDir, writeFiles } from "../support/plugin.js";
import { startServer } from "../support/http-server.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

const SECRET = "sk_live_PLANTED_51HxYz";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

describe("a secret in a header", () => {
  it("reaches the server and no output, log, result or file", async () => {
    // the server echoes the Authorization header back, fails twice, then answers
    const srv = await startServer((r, n, res) => {
      if (r.url.startsWith("/notify")) return void res.writeHead(500).end(`bad auth ${r.headers.authorization}`);
      if (n <= 2) return void res.writeHead(503).end(`retry later, ${r.headers.authorization}`);
      res.writeHead(401).end(`denied: ${r.headers.authorization}`);
    });
    closers.push(srv.close);
    const dir = tempDir();
    const text = `runbook: 1
name: secret-test
instances: [${srv.url}]
notify:
  - { use: webhook, with: { url: "${srv.url}/notify", headers: { Authorization: "Bearer \${env.API_KEY}" }, retries: 1 }, on: [step.failed, hook.failed] }
  - { use: file, with: { path: notes.jsonl }, on: [step.failed, hook.failed, log] }
  - { use: stdout, on: [step.failed, log] }
steps:
  - id: stop
    stopWrites:
      use: http
      with: { url: "${srv.url}/flags?key=\${env.API_KEY}", headers: { Authorization: "Bearer \${env.API_KEY}" }, retries: 3, retryDelay: 5ms }
      undo: { use: http, with: { url: "${srv.url}/flags", headers: { Authorization: "Bearer \${env.API_KEY}", X-Key: "\${env.API_KEY}" } } }
  - hook: { use: http, with: { url: "${srv.url}", hedaers: { Authorization: "\${env.API_KEY}" } } }
`;
    const file = join(dir, "rb.yaml");
    writeFiles(dir, { "rb.yaml": text });
    const loaded = loadedFromYaml(file, text, { API_KEY: SECRET });
    const findings = await lintPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    expect(findings.map((d) => d.rule)).toEqual(["plugin-options"]);

    const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    const ctx = recordingContext(dir, loaded.secrets, "secret-test");
    const rb = loaded.runbook as {
      notify: { use: string; with: Record<string, unknown>; on: string[] }[];
      steps: {
        stopWrites: {
          use: string;
          with: Record<string, unknown>;
          undo: { use: string; with: Record<string, unknown> };
        };
      }[];
    };
    const listener = createNotifierListener(
      registry,
      rb.notify,
      {
        ...ctx,
        log: (level, message) => {
          ctx.log(level, message);
          void listener(ev<RunEventOf<"log">>({ type: "log", level, message }));
        },
      },
      // the webhook's own `retries` only: this test counts its attempts
      { retryBudgetMs: 0 },
    );
    const call = rb.steps[0]!.stopWrites;
    const step = stepInfo(
      0,
      "stop",
      "stopWrites",
      "stop",
      rb.steps[0] as unknown as Record<string, unknown>,
      ctx.redact,
    );
    const outcome = await runHook(registry, call, step, ctx, { timeoutMs: 5000 });
    expect(outcome.ok).toBe(false);
    const stack = new UndoStack();
    stack.push(undoFor(registry, call, outcome, step, ctx, 5000));
    const reports = await stack.unwind();
    if (!outcome.ok)
      void listener(
        ev<RunEventOf<"step.finished">>({
          type: "step.finished",
          index: 0,
          id: "stop",
          outcome: "failed",
          durationMs: 1,
          error: outcome.error,
        }),
      );
    await listener.flush();

    // the server did get the secret (the request was real)…
    expect(srv.seen.some((s) => s.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
    expect(srv.seen.some((s) => s.url.includes(SECRET))).toBe(true);
    expect(srv.seen.filter((s) => s.url.startsWith("/notify")).length).toBe(2);
    // …and nothing else did
    const everything = JSON.stringify({
      findings,
      outcome,
      reports,
      logs: ctx.logs,
      printed: ctx.printed,
      step,
      file: readFileSync(join(dir, "notes.jsonl"), "utf8"),
    });
    expect(everything).toContain("answered 503"); // the failure was reported…
    expect(everything).toContain("answered 500");
    expect(everything).not.toContain(SECRET); // …without the secret
    expect(everything).not.toContain(encodeURIComponent(SECRET));
    expect(everything).not.toContain("PLANTED");
  });
});
