/**
 * The built CLI: one CommonJS bundle run from the V8 code cache the build made
 * (scripts/bundle.mjs, scripts/cli-loader.cjs). Issue #2: "The CLI must start fast: ship compiled
 * JavaScript built by `npm ci`", and lint "within 2× the time of `node -e 0`", which rests on
 * the cache being accepted. A cache must never change what the CLI does: a missing or broken one
 * only costs time, and `import()` (plugins, lazily loaded packages) must work from a cached
 * script, which on Node 20 it does only through dist/cli/runtime-import.cjs.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, truncateSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, writeFiles } from "../plugin/helpers.js";

const root = process.cwd();
const distCli = join(root, "dist/cli");
const bin = join(distCli, "syncbook.cjs");

function node(args: string[], cwd = root): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Whether V8 rejects the cache beside the bundle that `loader` runs ("true" / "false"). */
function cacheRejected(loader: string): string {
  const r = node(["-e", "process.stdout.write(String(require(process.argv[1]).compileBundle(true).cachedDataRejected))", loader]);
  expect(r.stderr).toBe("");
  return r.stdout;
}

/** A copy of dist/cli beside a link to node_modules (the bundle resolves packages from its folder). */
function copyOfCli(): string {
  const dir = mkdtempSync(join(tmpdir(), "syncbook-bundle-"));
  cpSync(distCli, join(dir, "dist/cli"), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return join(dir, "dist/cli");
}

describe("the CLI bundle and its code cache", () => {
  it("the build's code cache is accepted by this Node (the start-up budget rests on it)", () => {
    expect(cacheRejected(bin)).toBe("false");
  });

  it("the bundle is named for its content, so a cache never meets another bundle", () => {
    const names = readdirSync(distCli);
    const bundles = names.filter((n) => /^syncbook\.[0-9a-f]{12}\.cjs$/.test(n));
    expect(bundles).toHaveLength(1);
    const bundle = bundles[0]!;
    const hash = createHash("sha256").update(readFileSync(join(distCli, bundle), "utf8")).digest("hex").slice(0, 12);
    expect(bundle).toBe(`syncbook.${hash}.cjs`);
    expect(names).toContain(`${bundle}.v8cache`);
    expect(readFileSync(bin, "utf8")).toContain(JSON.stringify(bundle));
  });

  it("a missing or truncated cache only costs time: same output, same exit code", () => {
    const expected = node([bin, "lint", "runbooks", "test/fixtures/lint/sharding-required.yaml"]);
    expect(expected.code).toBe(1);
    const copy = copyOfCli();
    const loader = join(copy, "syncbook.cjs");
    const cache = readdirSync(copy).find((n) => n.endsWith(".v8cache"))!;

    truncateSync(join(copy, cache), Math.floor(statSync(join(copy, cache)).size / 2));
    expect(cacheRejected(loader)).toBe("true");
    expect(node([loader, "lint", "runbooks", "test/fixtures/lint/sharding-required.yaml"])).toEqual(expected);

    rmSync(join(copy, cache));
    expect(node([loader, "lint", "runbooks", "test/fixtures/lint/sharding-required.yaml"])).toEqual(expected);
  });

  it("plugins load from the cached bundle, JavaScript and TypeScript, with nothing on stderr", () => {
    const dir = tempDir("syncbook-bundle-plugins-");
    writeFiles(dir, {
      "package.json": '{ "type": "module" }\n',
      "plugins/flip.mjs": "export default { name: 'flip', hooks: { flip() {} } };\n",
      "plugins/flop.ts": "const name: string = 'flop';\nexport default { name, hooks: { flop(): void {} }, optionsSchema: { type: 'object', properties: { n: { type: 'integer', description: 'n' } }, additionalProperties: false } };\n",
      "rb.yaml": `runbook: 1
name: t
clusters:
  cluster0: { topology: replicaSet }
  cluster1: { topology: replicaSet }
instances: [http://127.0.0.1:27182]
plugins: [./plugins/flip.mjs, ./plugins/flop.ts]
steps:
  - hook: { use: flip }
  - hook: { use: flop, with: { n: many } }
`,
    });
    const r = node([bin, "lint", join(dir, "rb.yaml"), "--format", "json"]);
    expect(r.stderr).toBe("");
    const plugin = (JSON.parse(r.stdout) as { diagnostics: { rule: string; message: string }[] }).diagnostics.filter((d) => d.rule.startsWith("plugin-"));
    // both files loaded (no plugin-load), and the TypeScript plugin's own schema judged its options
    expect(plugin.map((d) => d.rule)).toEqual(["plugin-options"]);
    expect(plugin[0]!.message).toContain("option `n` must be integer");
  });
});
