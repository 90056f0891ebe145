/**
 * The plugin machinery with the real runbook loader (`loadRunbook(file, { env: "lint" })`):
 * positioned lint errors for a bad plugin file and for a shell string where an argv list is
 * wanted, the example runbooks linting clean; plus `notify` step messages for `on: [notify]`
 * entries and plugin step kinds (issue #5, points 1, 2, 4).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRunbook } from "../../src/runbook/index.js";
import {
  createNotifierListener,
  definePlugin,
  lintPlugins,
  loadPlugins,
  pluginStepTitle,
  runPluginStep,
  stepInfo,
  undoFor,
  UndoStack,
  type NotifyMessage,
} from "../../src/plugin/index.js";
import { lineOf, recordingContext, tempDir, writeFiles } from "../support/plugin.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

describe("with the real runbook loader", () => {
  it("the example runbooks have no plugin findings", async () => {
    const dir = join(process.cwd(), "runbooks");
    const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files)
      expect(
        await lintPlugins(await loadRunbook(join(dir, f), { env: "lint" }), { callKinds: PLUGIN_CALL_KINDS }),
        f,
      ).toEqual([]);
  });

  it("a bad plugin file and a shell string are positioned errors; `${env.*}` options are not judged", async () => {
    const dir = tempDir();
    writeFiles(dir, { "ops/broken.ts": "export default definePlugin({ name: 'broken', hooks: { a: () => {} }\n" });
    const text = `runbook: 1
name: t
clusters:
  cluster0: { topology: replicaSet }
  cluster1: { topology: replicaSet }
instances: [http://127.0.0.1:27182]
plugins:
  - ./ops/broken.ts
notify:
  - { use: webhook, with: { url: "\${env.HOOK}" }, on: [notify, step.failed] }
steps:
  - stopWrites:
      use: shell
      with: { command: "node hooks/app-writes.mjs off" }
      undo: { use: shell, with: { command: [node, hooks/app-writes.mjs, "on"], timeout: 1m } }
      check: { use: shell, with: { command: [node, hooks/app-writes.mjs, "status"] } }
  - notify: done
`;
    writeFiles(dir, { "rb.yaml": text });
    const loaded = await loadRunbook(join(dir, "rb.yaml"), { env: "lint" });
    const d = await lintPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    expect(d.map((x) => `${x.rule}@${x.line}:${x.column}`)).toEqual([
      `plugin-load@${lineOf(text, "./ops/broken.ts")}:5`,
      `plugin-options@${lineOf(text, 'command: "node')}:${text.split("\n")[lineOf(text, 'command: "node') - 1]!.indexOf('"node') + 1}`,
    ]);
    expect(d[0]!.message).toMatch(/^plugin file \.\/ops\/broken\.ts failed to load: /);
    expect(d[1]!.message).toBe("hook `shell`: option `command` must be array");
    expect(d[1]!.hint).toContain("Never a shell string");
  });
});

describe("TypeScript plugins outside an ES module package", () => {
  it('a load failure says to add "type": "module" (tsx loads such a file as CommonJS)', async () => {
    const dir = tempDir();
    const api = JSON.stringify(join(process.cwd(), "src/index.ts"));
    writeFiles(dir, {
      "p.ts": `import { sendHttp } from ${api};\nthrow new Error("boom " + typeof sendHttp);\nexport default {};\n`,
    });
    const text = "runbook: 1\nname: t\ninstances: [http://127.0.0.1:1]\nplugins: [./p.ts]\nsteps:\n  - notify: hi\n";
    writeFiles(dir, { "rb.yaml": text });
    const d = await lintPlugins(await loadRunbook(join(dir, "rb.yaml"), { env: "lint" }), {
      callKinds: PLUGIN_CALL_KINDS,
    });
    expect(d.map((x) => x.rule)).toEqual(["plugin-load"]);
    expect(d[0]!.hint).toContain(
      'add {"type": "module"} to the package.json next to your runbooks, or name the file .mts',
    );
  });
});

describe("notify step messages", () => {
  it("go to the entries whose `on:` lists `notify`, in the background", async () => {
    const { registry } = await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: ["stdout"] });
    const ctx = recordingContext(tempDir());
    const listener = createNotifierListener(
      registry,
      [
        { use: "stdout", with: { text: "ignored for messages" }, on: ["notify"] },
        { use: "stdout", on: ["run.finished"] },
      ],
      ctx,
    );
    const m: NotifyMessage = {
      type: "notify",
      text: "sales is committed",
      index: 7,
      id: "announce",
      at: Date.UTC(2024, 0, 1),
    };
    expect(listener.message(m)).toBeUndefined();
    await listener.flush();
    expect(ctx.printed).toEqual(["[notify i] 2024-01-01T00:00:00.000Z sales is committed"]);
  });
});

describe("plugin step kinds", () => {
  it("run like hooks: checked options, a title, an outcome, and an undo", async () => {
    const journal: string[] = [];
    const { registry } = await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: "none" });
    const clashes = registry.add(
      definePlugin<{ pool: string }>({
        name: "lb",
        steps: {
          drain: {
            optionsSchema: { type: "object", required: ["pool"], properties: { pool: { type: "string" } } },
            title: (o) => `Drain ${o.pool}`,
            run: (ctx) => {
              journal.push(`drain ${ctx.options.pool} (${ctx.step.kind})`);
              return { summary: "drained", undo: async () => void journal.push(`refill ${ctx.options.pool}`) };
            },
          },
        },
      }),
      { kind: "file", path: "/tmp/lb.ts" },
    );
    expect(clashes).toEqual([]);
    const ctx = recordingContext(tempDir());
    expect(pluginStepTitle(registry, "drain", { pool: "web" }, ctx.redact)).toBe("Drain web");
    const info = stepInfo(2, "drain-web", "drain", "Drain web", { drain: { pool: "web" } }, ctx.redact);
    const out = await runPluginStep(registry, "drain", { pool: "web" }, info, ctx, { timeoutMs: 1000 });
    expect(out).toMatchObject({ ok: true, summary: "drained" });
    const bad = await runPluginStep(registry, "drain", {}, info, ctx, { timeoutMs: 1000 });
    expect(bad).toMatchObject({ ok: false, error: "step drain: missing required option `pool`" });
    const stack = new UndoStack();
    stack.push(undoFor(registry, { use: "drain" }, out, info, ctx, 1000));
    await stack.unwind();
    expect(journal).toEqual(["drain web (drain)", "refill web"]);
    expect(ctx.logs).toEqual(["info drain: drained"]);
  });

  it("may not take a built-in step key", async () => {
    const { registry } = await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: "none" });
    expect(
      registry.add(definePlugin({ name: "x", steps: { commit: { run: () => undefined } } }), {
        kind: "file",
        path: "/tmp/x.ts",
      }),
    ).toEqual(["step kind commit (a built-in step key)"]);
  });
});
