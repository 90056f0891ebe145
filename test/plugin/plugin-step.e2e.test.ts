/**
 * "a plugin may add step kinds": a local plugin file adds `drain-traffic`; lint checks its
 * options at their line, the runner runs it (title from the plugin, undo registered), and a
 * step kind no plugin provides is a positioned lint error.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lintFiles } from "../../src/lint/index.js";
import { cli, runbookFor, sim, START, tempDir, writeRunbook } from "../support/run.js";

const PLUGIN = `
import { appendFileSync } from "node:fs";
export default {
  name: "traffic",
  steps: {
    "drain-traffic": {
      description: "Drain a load balancer pool",
      optionsSchema: { type: "object", additionalProperties: false, required: ["pool"], properties: { pool: { type: "string" } } },
      title: (o) => "Drain pool " + o.pool,
      run: async (ctx) => {
        appendFileSync(ctx.cwd + "/log.txt", "drain " + ctx.options.pool + "\\n");
        return { summary: "drained " + ctx.options.pool, undo: async () => { appendFileSync(ctx.cwd + "/log.txt", "undrain " + ctx.options.pool + "\\n"); } };
      },
    },
  },
};
`;

describe("plugin step kinds", () => {
  it("lint checks a plugin step's options at their line, and flags a step kind no plugin provides", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "traffic.mjs"), PLUGIN);
    const head = "plugins: [./traffic.mjs]\n";
    const good = `runbook: 1\nname: p\ninstances: [http://127.0.0.1:27182]\n${head}steps:\n  - drain-traffic: { pool: web }\n`;
    const bad = `runbook: 1\nname: p\ninstances: [http://127.0.0.1:27182]\n${head}steps:\n  - drain-traffic: { pool: 1 }\n  - drain-trafic: { pool: web }\n`;
    writeFileSync(join(dir, "good.yaml"), good);
    writeFileSync(join(dir, "bad.yaml"), bad);
    // the local plugin is imported only when asked (`lint --load-plugins`): lint runs no plugin code by default
    const load = { importPlugins: true };
    expect((await lintFiles([join(dir, "good.yaml")], load)).diagnostics.filter((d) => d.severity === "error")).toEqual(
      [],
    );
    const found = (await lintFiles([join(dir, "bad.yaml")], load)).diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => `${d.rule}@${d.line}:${d.column}`);
    expect(found).toEqual(["plugin-options@6:28", "plugin-unknown@7:5"]);
  });

  it("the runner runs it with the plugin's title, and undoes it when the run fails before commit", async () => {
    const s = await sim();
    try {
      const dir = tempDir();
      writeFileSync(join(dir, "traffic.mjs"), PLUGIN);
      const steps = `${START}  - { id: drain, drain-traffic: { pool: web } }\n  - { id: boom, hook: { use: shell, with: { command: [node, -e, "process.exit(3)"] } } }\n`;
      const file = writeRunbook(dir, runbookFor(s, steps, "plugins: [./traffic.mjs]\n"));
      const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.all).toContain("Drain pool web");
      const { readFileSync } = await import("node:fs");
      expect(readFileSync(join(dir, "log.txt"), "utf8")).toBe("drain web\nundrain web\n");
    } finally {
      await s.close();
    }
  });
});
