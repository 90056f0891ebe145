/**
 * The documented example plugin (`plugins/examples/pager.ts`), loaded the way a site loads its
 * own: a local TypeScript file named under `plugins:` (issue #5, point 6).
 */
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createNotifierListener, loadRunbookPlugins } from "../../src/plugin/index.js";
import type { RunEventOf } from "../../src/events.js";
import { ev, loadedFromYaml, recordingContext, tempDir, writeFiles } from "../support/plugin.js";
import { startServer } from "../support/http-server.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

describe("example pager plugin", () => {
  it("loads from a runbook-relative path, is linted with its schema, triggers on trouble and resolves on success", async () => {
    const srv = await startServer((_r, _n, res) =>
      res.writeHead(202, { "content-type": "application/json" }).end('{"status":"success"}'),
    );
    closers.push(srv.close);
    const dir = tempDir();
    const pager = relative(dir, join(process.cwd(), "plugins/examples/pager.ts"));
    const text = `runbook: 1
name: sales-cutover
instances: [http://127.0.0.1:27182]
plugins: [${pager}]
notify:
  - use: pager
    with: { routingKey: "\${env.PAGER_KEY}", url: "${srv.url}/v2/enqueue", group: databases }
    on: [wait.slow, step.failed, run.finished, step.finished]
steps:
  - notify: hi
`;
    writeFiles(dir, { "rb.yaml": text });
    const loaded = loadedFromYaml(join(dir, "rb.yaml"), text, { PAGER_KEY: "R0UTING-KEY-PLANTED" });
    const { registry, diagnostics } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    expect(diagnostics).toEqual([]);
    expect(registry.notifier("pager")?.source).toEqual({
      kind: "file",
      path: join(process.cwd(), "plugins/examples/pager.ts"),
    });

    const ctx = recordingContext(dir, loaded.secrets, "sales-cutover");
    const listener = createNotifierListener(registry, (loaded.runbook as { notify: never[] }).notify, ctx);
    void listener(
      ev<RunEventOf<"step.finished">>({ type: "step.finished", index: 0, id: "start", outcome: "ok", durationMs: 5 }),
    );
    void listener(
      ev<RunEventOf<"wait.slow">>({
        type: "wait.slow",
        index: 2,
        id: "ready",
        stalledForMs: 900_000,
        detail: "lag 40s on shard-b",
      }),
    );
    void listener(
      ev<RunEventOf<"run.finished">>({
        type: "run.finished",
        outcome: "ok",
        exitCode: 0,
        committed: true,
        durationMs: 3_600_000,
      }),
    );
    await listener.flush();
    const bodies = srv.seen.map((s) => JSON.parse(s.body) as Record<string, unknown>);
    expect(bodies).toEqual([
      {
        routing_key: "R0UTING-KEY-PLANTED",
        event_action: "trigger",
        dedup_key: "syncbook/sales-cutover",
        payload: {
          summary: "sales-cutover: step 3 ready has made no progress for 15m 00s: lag 40s on shard-b",
          source: "syncbook",
          severity: "warning",
          component: "sales-cutover",
          group: "databases",
          custom_details: { event: "wait.slow", runbook: join(dir, "rb.yaml") },
        },
      },
      expect.objectContaining({ event_action: "resolve", dedup_key: "syncbook/sales-cutover" }),
    ]);
    expect(ctx.logs).toContain(
      "info pager: paged: sales-cutover: step 3 ready has made no progress for 15m 00s: lag 40s on shard-b",
    );
    expect(ctx.logs.join("\n")).not.toContain("PLANTED");
  });

  it("lints its options: a missing routing key is reported at the notify entry", async () => {
    const dir = tempDir();
    const pager = join(process.cwd(), "plugins/examples/pager.ts");
    const text = `runbook: 1\nname: x\ninstances: [http://127.0.0.1:1]\nplugins: [${pager}]\nnotify:\n  - { use: pager, with: { routingkey: abc }, on: [wait.slow] }\nsteps:\n  - notify: hi\n`;
    writeFiles(dir, { "rb.yaml": text });
    const { diagnostics } = await loadRunbookPlugins(loadedFromYaml(join(dir, "rb.yaml"), text), {
      callKinds: PLUGIN_CALL_KINDS,
    });
    expect(diagnostics.map((d) => `${d.rule}@${d.line}: ${d.message}`).sort()).toEqual([
      "plugin-options@6: notifier `pager`: missing required option `routingKey`",
      "plugin-options@6: notifier `pager`: unknown option `routingkey`; did you mean `routingKey`?",
    ]);
  });
});
