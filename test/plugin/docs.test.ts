/**
 * docs/plugins.md's "Writing a plugin" walk-through (moved there from the README, issue 39 point 7) works as written: its plugin file and
 * runbook snippet are taken from the document, linted, and run against a local flag service
 * (issue #5, point 6: "a README section … that a newcomer can follow").
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadRunbookPlugins, runHook, stepInfo, undoFor, UndoStack } from "../../src/plugin/index.js";
import { loadedFromYaml, recordingContext, tempDir, writeFiles } from "../support/plugin.js";
import { startServer } from "../support/http-server.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

function block(doc: string, after: string, lang: string): string {
  const start = doc.indexOf(after);
  expect(start, after).toBeGreaterThan(-1);
  const open = doc.indexOf("```" + lang + "\n", start);
  return doc.slice(open + lang.length + 4, doc.indexOf("```", open + 3));
}

describe("docs/plugins.md: Writing a plugin", () => {
  it("the example plugin lints clean and stops and restores the flag", async () => {
    const page = readFileSync(join(process.cwd(), "docs/plugins.md"), "utf8");
    const doc = page.slice(page.indexOf("## Writing a plugin"));
    const plugin = block(doc, "**1. Write the file**", "ts").replace(
      'from "syncbook"',
      `from ${JSON.stringify(join(process.cwd(), "src/index.ts"))}`,
    );
    const snippet = block(doc, "**2. Name it in the runbook**", "yaml");
    const srv = await startServer((_r, _n, res) => res.writeHead(200).end("{}"));
    closers.push(srv.close);
    const dir = tempDir();
    const text = `runbook: 1\nname: flags-demo\ninstances: [http://127.0.0.1:27182]\n${snippet}`.replace(
      "{ flag: sales-writes }",
      `{ flag: sales-writes, service: "${srv.url}" }`,
    );
    // as the walk-through says: the runbooks' folder is an ES module package
    writeFiles(dir, { "package.json": '{ "type": "module" }\n', "plugins/flags.ts": plugin, "rb.yaml": text });
    const loaded = loadedFromYaml(join(dir, "rb.yaml"), text);
    const { registry, diagnostics } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    expect(diagnostics).toEqual([]);

    const ctx = { ...recordingContext(dir, ["flag-token-123"]), env: { FLAGS_TOKEN: "flag-token-123" } };
    const call = (loaded.runbook as { steps: { stopWrites: { use: string; with: Record<string, unknown> } }[] })
      .steps[0]!.stopWrites;
    const step = stepInfo(0, "stop", "stopWrites", "stop", {}, ctx.redact);
    const out = await runHook(registry, call, step, ctx, { timeoutMs: 5000 });
    expect(out).toMatchObject({ ok: true, summary: "sales-writes off" });
    const stack = new UndoStack();
    stack.push(undoFor(registry, call, out, step, ctx, 5000));
    await stack.unwind();
    expect(srv.seen.map((s) => [s.method, s.url, s.headers.authorization, s.body])).toEqual([
      ["PUT", "/flags/sales-writes", "Bearer flag-token-123", '{"enabled":false}'],
      ["PUT", "/flags/sales-writes", "Bearer flag-token-123", '{"enabled":true}'],
    ]);
    expect(ctx.logs).toEqual([
      "info writes-flag-off: flag sales-writes is off",
      "info writes-flag-off: sales-writes off",
    ]);
  });
});

// issue 39, point 8: the editor's hover names every built-in notifier
describe("the format's descriptions of notify[].use", () => {
  it("name every built-in notifier", async () => {
    const { BUILTIN_PLUGINS } = await import("../../src/plugin/builtins.js");
    const schema = readFileSync(join(process.cwd(), "schemas/runbook.schema.json"), "utf8");
    const descriptions = [...schema.matchAll(/"description": "(Notifier plugin: [^"]*)"/g)].map((m) => m[1]!);
    expect(descriptions.length).toBe(2);
    for (const d of descriptions)
      for (const n of BUILTIN_PLUGINS.flatMap((b) => b.notifiers ?? [])) expect(d, n).toContain(`\`${n}\``);
  });
});
