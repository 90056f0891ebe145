/**
 * Plugin findings of `syncbook lint`: "A plugin that is missing or fails to load is a lint error
 * at the `plugins:` entry", unknown `use:` names, and options checked against the plugin's own
 * JSON Schema "at lint time, with positioned errors" (issue #5, points 1 and 2).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_PLUGINS, lintPlugins, loadRunbookPlugins } from "../../src/plugin/index.js";
import { pluginFromModule } from "../../src/plugin/resolve.js";
import { lineOf, loadedFromYaml, runbook, tempDir, writeFiles } from "../support/plugin.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

const API = join(process.cwd(), "src/plugin/api.ts");

async function lint(dir: string, text: string, env: Record<string, string> = {}) {
  const file = join(dir, "rb.yaml");
  writeFiles(dir, { "rb.yaml": text });
  const loaded = loadedFromYaml(file, text, env);
  const diags = await lintPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
  return diags.map((d) => ({ ...d, at: `${d.rule}@${d.line}` }));
}

describe("built-in plugins", () => {
  it("the built-in table names exactly what each module exports", async () => {
    for (const b of BUILTIN_PLUGINS) {
      const def = pluginFromModule(await b.load(), b.name);
      expect(def.name).toBe(b.name);
      expect(Object.keys(def.hooks ?? {}).sort()).toEqual([...(b.hooks ?? [])].sort());
      expect(Object.keys(def.notifiers ?? {}).sort()).toEqual([...(b.notifiers ?? [])].sort());
      // every option is described (editors and `--help` show the descriptions)
      const props = (def.optionsSchema as { properties: Record<string, { description?: string }> }).properties;
      for (const [k, p] of Object.entries(props)) expect(p.description, `${b.name}.${k}`).toBeTruthy();
    }
  });

  it("a runbook that uses the built-ins correctly has no findings", async () => {
    const dir = tempDir();
    const text = runbook(
      `  - stopWrites:
      use: http
      with: { url: "\${env.FLAG_URL}", method: PUT, headers: { Authorization: "Bearer \${env.TOKEN}" }, body: { on: false }, expectStatus: [200, 204], retries: 2, timeout: 5s }
      undo: { use: sim-writes, with: { enabled: true } }
  - notify: "done"
  - notify: { use: webhook, with: { url: "\${env.HOOK}", text: committed } }
`,
      `notify:
  - { use: chat, with: { url: "\${env.CHAT}" }, on: [run.started, step.failed, wait.slow, commit.sent, run.finished] }
  - { use: file, with: { path: out/n.jsonl }, on: [step.finished] }
  - { use: stdout, on: [run.finished] }
`,
    );
    expect(
      await lint(dir, text, {
        FLAG_URL: "https://flags.example.com/x",
        TOKEN: "s3cr3t-token",
        HOOK: "https://hooks.example.com/a",
        CHAT: "https://chat.example.com/b",
      }),
    ).toEqual([]);
    // lint runs without secrets: `${env.*}` values are not judged
    expect(await lint(dir, text)).toEqual([]);
  });
});

describe("plugin-unknown", () => {
  it("is reported at the `use:` of a step, an undo, a notify step and a notify entry", async () => {
    const dir = tempDir();
    const text = runbook(
      `  - stopWrites:
      use: shel
      undo: { use: htp, with: {} }
  - notify: { use: pagr }
  - hook: { use: webhook, with: { url: http://x } }
`,
      `notify:
  - { use: slack, on: [run.started] }
`,
    );
    const d = await lint(dir, text);
    expect(d.map((x) => x.at).sort()).toEqual(
      [
        `plugin-unknown@${lineOf(text, "use: shel")}`,
        `plugin-unknown@${lineOf(text, "use: htp")}`,
        `plugin-unknown@${lineOf(text, "use: pagr")}`,
        `plugin-unknown@${lineOf(text, "use: webhook")}`,
        `plugin-unknown@${lineOf(text, "use: slack")}`,
      ].sort(),
    );
    expect(d.find((x) => x.message.includes("htp"))?.hint).toContain("Did you mean `http`");
    expect(d.find((x) => x.message.includes("webhook"))?.message).toBe(
      "`webhook` is a notifier (plugin webhook), not a hook",
    );
    const col = d.find((x) => x.message.includes("shel"))?.column;
    expect(col).toBe(text.split("\n")[lineOf(text, "use: shel") - 1]!.indexOf("shel") + 1);
  });
});

describe("undo-process-without-check", () => {
  it("a stopWrites whose undo starts a process (shell, or a hook declaring startsProcesses) and that has no check: a warning at the undo's use", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "ops/switch.ts": `import { definePlugin } from ${JSON.stringify(API)};
export default definePlugin({
  name: "switch",
  hooks: {
    "switch-spawns": { startsProcesses: true, run: async () => ({}) },
    "switch-request": { run: async () => ({}) },
  },
});
`,
    });
    const text = runbook(
      `  - stopWrites:
      use: sim-writes
      undo: { use: shell, with: { command: [node, on.mjs] } }
  - stopWrites:
      use: sim-writes
      undo: { use: switch-spawns }
  - stopWrites:
      use: sim-writes
      undo: { use: shell, with: { command: [node, on-checked.mjs] } }
      check: { use: sim-writes-stopped }
  - stopWrites:
      use: shell
      with: { command: [node, off.mjs] }
      undo: { use: http, with: { url: http://127.0.0.1:8080/on, method: PUT } }
  - stopWrites:
      use: sim-writes
      undo: { use: switch-request }
  - hook: { use: shell, with: { command: [node, other.mjs] } }
`,
      "plugins: [./ops/switch.ts]\n",
    );
    const file = join(dir, "rb.yaml");
    writeFiles(dir, { "rb.yaml": text });
    const { diagnostics } = await loadRunbookPlugins(loadedFromYaml(file, text), { callKinds: PLUGIN_CALL_KINDS });
    const d = diagnostics.filter((x) => x.rule === "undo-process-without-check");
    expect(d.map((x) => x.line)).toEqual([lineOf(text, "[node, on.mjs]"), lineOf(text, "use: switch-spawns")]);
    // a warning (src/plugin/rules.ts says why): a team can accept it with its reason
    expect(d.map((x) => x.severity)).toEqual(["warning", "warning"]);
    expect(d[0]!.message).toContain("the undo of this stopWrites starts a process (`shell`)");
    expect(d[1]!.message).toContain("(`switch-spawns`)");
    expect(d[0]!.hint).toMatch(/^Add `check:` to the stopWrites step/);
    expect(diagnostics.filter((x) => x.rule !== "undo-process-without-check")).toEqual([]);
  });
});

describe("plugin-options", () => {
  it("points at the offending option, an unknown option's key, or the call for a missing one", async () => {
    const dir = tempDir();
    const text = runbook(`  - stopWrites:
      use: http
      with:
        url: http://127.0.0.1:1/x
        retries: many
        method: FETCH
        hedaers: { a: b }
  - hook:
      use: http
      with: { method: GET }
  - hook: { use: http }
`);
    const d = await lint(dir, text);
    expect(d.map((x) => x.at).sort()).toEqual(
      [
        `plugin-options@${lineOf(text, "retries: many")}`,
        `plugin-options@${lineOf(text, "method: FETCH")}`,
        `plugin-options@${lineOf(text, "hedaers")}`,
        `plugin-options@${lineOf(text, "with: { method: GET }")}`,
        `plugin-options@${lineOf(text, "- hook: { use: http }")}`,
      ].sort(),
    );
    const unknown = d.find((x) => x.message.includes("hedaers"));
    expect(unknown?.message).toBe("hook `http`: unknown option `hedaers`; did you mean `headers`?");
    expect(unknown?.hint).toContain("headers");
    expect(unknown?.column).toBe(9);
    expect(d.find((x) => x.line === lineOf(text, "retries: many"))?.message).toBe(
      "hook `http`: option `retries` must be integer",
    );
    expect(d.find((x) => x.line === lineOf(text, "with: { method: GET }"))?.message).toBe(
      "hook `http`: missing required option `url`",
    );
  });

  it("checks a notify entry's options and its `on:` events", async () => {
    const dir = tempDir();
    const text = runbook(
      "  - notify: hi\n",
      `notify:\n  - use: file\n    with: { path: 3 }\n    on: [run.started, step.fail]\n`,
    );
    const d = await lint(dir, text);
    expect(d.map((x) => x.at).sort()).toEqual(
      [`notify-event@${lineOf(text, "on: [")}`, `plugin-options@${lineOf(text, "path: 3")}`].sort(),
    );
    expect(d.find((x) => x.rule === "notify-event")?.hint).toContain("Did you mean `step.failed`");
    expect(d.find((x) => x.rule === "notify-event")?.column).toBe(
      text.split("\n")[lineOf(text, "on: [") - 1]!.indexOf("step.fail") + 1,
    );
  });

  it("never prints a secret: option values from `${env.*}` are redacted in findings", async () => {
    const dir = tempDir();
    const secret = "xoxb-PLANTED-SECRET-42";
    const text = runbook(
      `  - hook: { use: "\${env.SECRET}", with: { url: "\${env.SECRET}" } }\n  - hook: { use: http, with: { url: "\${env.SECRET}", hedaers: "\${env.SECRET}" } }\n`,
    );
    const d = await lint(dir, text, { SECRET: secret });
    expect(d.map((x) => x.rule)).toEqual(["plugin-unknown", "plugin-options"]);
    expect(d[0]!.message).toBe("unknown hook `***`");
    expect(JSON.stringify(d)).not.toContain(secret);
  });
});

describe("plugin-load", () => {
  it("a bad plugin file is an error at its `plugins:` entry, one per entry", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "plugins/syntax.ts": "export default definePlugin({ name: 'x', hooks: { a: () => {} }\n",
      "plugins/nodefault.mjs": "export const plugin = { name: 'x', hooks: { a() {} } };\n",
      "plugins/shape.ts": "export default { name: 'shape', hooks: { a: 42 } };\n",
      "plugins/noname.js": "export default { hooks: { a() {} } };\n",
      "plugins/throws.mjs": "throw new Error('cannot reach the flag service');\nexport default {};\n",
      "plugins/readme.md": "# no\n",
    });
    const text = runbook(
      "  - notify: hi\n",
      `plugins:
  - ./plugins/syntax.ts
  - ./plugins/nodefault.mjs
  - ./plugins/shape.ts
  - ./plugins/noname.js
  - ./plugins/throws.mjs
  - ./plugins/missing.ts
  - ./plugins/readme.md
  - syncbook-plugin-not-installed
`,
    );
    const d = await lint(dir, text);
    const entries = [
      "syntax.ts",
      "nodefault.mjs",
      "shape.ts",
      "noname.js",
      "throws.mjs",
      "missing.ts",
      "readme.md",
      "syncbook-plugin-not-installed",
    ];
    expect(d.map((x) => x.at)).toEqual(entries.map((e) => `plugin-load@${lineOf(text, e)}`));
    for (const x of d) expect(x.column).toBe(5);
    const msg = (e: string) => d[entries.indexOf(e)]!.message;
    expect(msg("syntax.ts")).toMatch(
      /plugin file \.\/plugins\/syntax\.ts failed to load: .*(Expected|SyntaxError|Unexpected)/,
    );
    expect(msg("nodefault.mjs")).toBe("plugin file ./plugins/nodefault.mjs has no default export");
    expect(msg("shape.ts")).toContain("hooks.a must be a function or an object with a run function");
    expect(msg("noname.js")).toContain("the plugin has no `name`");
    expect(msg("throws.mjs")).toContain("cannot reach the flag service");
    expect(msg("missing.ts")).toContain("not found");
    expect(msg("readme.md")).toContain("not a TypeScript or JavaScript file");
    expect(msg("syncbook-plugin-not-installed")).toContain("is not installed");
    expect(d[entries.indexOf("syncbook-plugin-not-installed")]!.hint).toContain(
      "npm install syncbook-plugin-not-installed",
    );
  });

  it("two plugins with the same `use:` name, or one redefining a built-in, are plugin-duplicate", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "a.mjs": "export default { name: 'a', hooks: { flip() {} } };\n",
      "b.mjs": "export default { name: 'b', hooks: { flip() {} } };\n",
      "c.mjs": "export default { name: 'c', notifiers: { chat() {} } };\n",
    });
    const text = runbook("  - hook: { use: flip }\n", "plugins: [./a.mjs, ./b.mjs, ./c.mjs]\n");
    const d = await lint(dir, text);
    expect(d.map((x) => x.rule)).toEqual(["plugin-duplicate", "plugin-duplicate"]);
    expect(d[0]!.message).toContain("hook flip (also in plugin a)");
    expect(d[1]!.message).toContain("chat (a built-in: chat)");
    const line = text.split("\n")[lineOf(text, "plugins:") - 1]!;
    expect(d.map((x) => `${x.line}:${x.column}`)).toEqual([
      `${lineOf(text, "plugins:")}:${line.indexOf("./b.mjs") + 1}`,
      `${lineOf(text, "plugins:")}:${line.indexOf("./c.mjs") + 1}`,
    ]);
  });
});

describe("local and npm plugins", () => {
  it("loads a TypeScript and a JavaScript plugin relative to the runbook, and checks options with their schemas", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "ops/flags.ts": `import { definePlugin } from ${JSON.stringify(API)};
interface O { flag: string; value?: boolean }
const n: number = 1;
export default definePlugin<O>({
  name: "flags",
  optionsSchema: { type: "object", additionalProperties: false, required: ["flag"], properties: { flag: { type: "string", description: "Flag" }, value: { type: "boolean", description: "Value" } } },
  hooks: { "flag-set": async (ctx) => { ctx.log.info("flag " + ctx.options.flag + n); return { undo: async () => {} }; } },
});
`,
      "ops/ticket.js":
        "export default { name: 'ticket', notifiers: { ticket: { optionsSchema: { type: 'object', required: ['queue'], properties: { queue: { type: 'string' } } }, send() {} } } };\n",
    });
    const text = runbook(
      `  - stopWrites: { use: flag-set, with: { flag: sales-writes, value: false } }
  - hook: { use: flag-set, with: { value: "no" } }
`,
      `plugins: [./ops/flags.ts, ./ops/ticket.js]
notify:
  - { use: ticket, with: { queue: 7 }, on: [step.failed] }
`,
    );
    const file = join(dir, "rb.yaml");
    writeFiles(dir, { "rb.yaml": text });
    const { registry, diagnostics } = await loadRunbookPlugins(loadedFromYaml(file, text), {
      callKinds: PLUGIN_CALL_KINDS,
    });
    expect(registry.hook("flag-set")?.plugin).toBe("flags");
    expect(registry.hook("flag-set")?.source).toEqual({ kind: "file", path: join(dir, "ops/flags.ts") });
    expect(registry.notifier("ticket")?.plugin).toBe("ticket");
    expect(diagnostics.map((x) => `${x.rule}@${x.line}`).sort()).toEqual(
      [
        `plugin-options@${lineOf(text, "with: { value")}`,
        `plugin-options@${lineOf(text, 'value: "no"')}`,
        `plugin-options@${lineOf(text, "queue: 7")}`,
      ].sort(),
    );
  });

  it("resolves an npm package from the runbook's folder upwards (exports import condition)", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "node_modules/@site/syncbook-lb/package.json": JSON.stringify({
        name: "@site/syncbook-lb",
        type: "module",
        exports: { ".": { import: "./dist/index.js", require: "./nope.cjs" } },
      }),
      "node_modules/@site/syncbook-lb/dist/index.js":
        "export default { name: 'lb', hooks: { 'lb-drain': () => ({ summary: 'drained' }) } };\n",
      "cutovers/rb.yaml": "",
    });
    const text = runbook("  - stopWrites: { use: lb-drain }\n", "plugins: ['@site/syncbook-lb']\n");
    const file = join(dir, "cutovers/rb.yaml");
    writeFiles(dir, { "cutovers/rb.yaml": text });
    const { registry, diagnostics } = await loadRunbookPlugins(loadedFromYaml(file, text), {
      callKinds: PLUGIN_CALL_KINDS,
    });
    expect(diagnostics).toEqual([]);
    expect(registry.hook("lb-drain")?.source.kind).toBe("package");
  });

  it("a plugin whose own optionsSchema is broken is reported as the plugin's fault", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "p.mjs": "export default { name: 'p', optionsSchema: { type: 'strnig' }, hooks: { p() {} } };\n",
    });
    const text = runbook("  - hook: { use: p, with: { a: 1 } }\n", "plugins: [./p.mjs]\n");
    const d = await lint(dir, text);
    expect(d.map((x) => x.at)).toEqual([`plugin-options@${lineOf(text, "with: { a: 1 }")}`]);
    expect(d[0]!.message).toContain("the plugin's optionsSchema is not a valid JSON Schema: type must be JSONType");
    expect(d[0]!.hint).toBe("This is a bug in the plugin: tell its author.");
  });

  it("loads only the built-ins a runbook uses", async () => {
    const dir = tempDir();
    // a plain-string notify is the runner's own line: nothing to load
    const plain = await loadRunbookPlugins(loadedFromYaml(join(dir, "rb.yaml"), runbook("  - notify: hi\n")), {
      callKinds: PLUGIN_CALL_KINDS,
    });
    expect(plain.registry.plugins.map((p) => p.name)).toEqual([]);
    const text = runbook("  - notify: { use: stdout, with: { text: hi } }\n");
    const { registry } = await loadRunbookPlugins(loadedFromYaml(join(dir, "rb2.yaml"), text), {
      callKinds: PLUGIN_CALL_KINDS,
    });
    expect(registry.plugins.map((p) => p.name)).toEqual(["stdout"]);
  });
});
