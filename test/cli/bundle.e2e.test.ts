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
import {
  cpSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runbook, tempDir, writeFiles } from "../support/plugin.js";

const root = process.cwd();
const distCli = join(root, "dist/cli");
const bin = join(distCli, "syncbook.cjs");

function node(args: string[], cwd = root): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: undefined },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Whether the loader at `loader` compiles its bundle from the build's code cache (SYNCBOOK_DEBUG says why not). */
function cacheUsed(loader: string, env: Record<string, string> = {}): { used: boolean; why: string } {
  const r = spawnSync(
    process.execPath,
    [
      "-e",
      "process.stdout.write(String(require(process.argv[1]).compileBundle(true).cachedDataRejected === false))",
      loader,
    ],
    {
      encoding: "utf8",
      env: { ...process.env, SYNCBOOK_DEBUG: "1", ...env },
    },
  );
  return { used: r.stdout === "true", why: r.stderr };
}

/** A runbook that loads `plugins` and calls each of `hooks` (flow mappings) as a hook step. */
const pluginRunbook = (plugins: string[], hooks: string[]): string =>
  runbook(hooks.map((h) => `  - hook: ${h}\n`).join(""), `plugins: [${plugins.join(", ")}]\n`);

/** A copy of dist/cli beside a link to node_modules (the bundle resolves packages from its folder). */
function copyOfCli(): string {
  const dir = mkdtempSync(join(tmpdir(), "syncbook-bundle-"));
  cpSync(distCli, join(dir, "dist/cli"), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return join(dir, "dist/cli");
}

describe("the CLI bundle and its code cache", () => {
  it("the build's code cache is used on this Node (the start-up budget rests on it)", () => {
    expect(cacheUsed(bin)).toEqual({ used: true, why: "" });
  });

  it("the bundle is named for its content and runs in strict mode, as its ESM sources did", () => {
    const names = readdirSync(distCli);
    const bundles = names.filter((n) => /^syncbook\.[0-9a-f]{12}\.cjs$/.test(n));
    expect(bundles).toHaveLength(1);
    const bundle = bundles[0]!;
    const code = readFileSync(join(distCli, bundle), "utf8");
    expect(bundle).toBe(`syncbook.${createHash("sha256").update(code).digest("hex").slice(0, 12)}.cjs`);
    expect(names).toContain(`${bundle}.v8cache`);
    expect(readFileSync(bin, "utf8")).toContain(JSON.stringify(bundle));
    // a directive counts only first in the script (a banner before it would make all of src/ sloppy)
    expect(code.startsWith('"use strict";\n')).toBe(true);
  });

  describe("a cache that does not fit is not used: same output, same exit code, only slower", () => {
    const LINT = ["lint", "runbooks", "test/fixtures/lint/sharding-required.yaml"];
    let expected: ReturnType<typeof node>;
    const copy = (): { dir: string; loader: string; bundle: string; cache: string } => {
      expected ??= node([bin, ...LINT]);
      expect(expected.code).toBe(1);
      const dir = copyOfCli();
      const bundle = readdirSync(dir).find((n) => /^syncbook\.[0-9a-f]{12}\.cjs$/.test(n))!;
      return {
        dir,
        loader: join(dir, "syncbook.cjs"),
        bundle: join(dir, bundle),
        cache: join(dir, `${bundle}.v8cache`),
      };
    };

    it("truncated, or missing", () => {
      const c = copy();
      truncateSync(c.cache, Math.floor(statSync(c.cache).size / 2));
      expect(cacheUsed(c.loader)).toMatchObject({
        used: false,
        why: expect.stringContaining("changed since the build"),
      });
      expect(node([c.loader, ...LINT])).toEqual(expected);
      rmSync(c.cache);
      expect(cacheUsed(c.loader)).toMatchObject({ used: false, why: expect.stringContaining("no such file") });
      expect(node([c.loader, ...LINT])).toEqual(expected);
    });

    it("damaged in place, same size (V8 does not checksum a cache: it would crash)", () => {
      const c = copy();
      const data = readFileSync(c.cache);
      for (let i = 400_000; i < 400_064 && i < data.length; i++) data[i] = data[i]! ^ 0xff;
      writeFileSync(c.cache, data);
      expect(cacheUsed(c.loader)).toMatchObject({
        used: false,
        why: expect.stringContaining("changed since the build"),
      });
      expect(node([c.loader, ...LINT])).toEqual(expected);
    });

    it("the bundle edited in place to the same length: the edit runs, not the cached old code", () => {
      const c = copy();
      const code = readFileSync(c.bundle, "utf8");
      expect(code).toContain("linted: no problems");
      writeFileSync(c.bundle, code.replace("linted: no problems", "linted: NO PROBLEMS"));
      expect(cacheUsed(c.loader)).toMatchObject({
        used: false,
        why: expect.stringContaining("changed since the build"),
      });
      expect(node([c.loader, "lint", "runbooks"]).stdout).toContain("linted: NO PROBLEMS");
    });

    it("built on another Node (V8 checks its own version, not Node's)", () => {
      const c = copy();
      writeFileSync(
        c.loader,
        readFileSync(c.loader, "utf8").replace(`"node":"${process.version}"`, '"node":"v20.0.0-other"'),
      );
      expect(cacheUsed(c.loader)).toMatchObject({
        used: false,
        why: expect.stringContaining("built on Node v20.0.0-other"),
      });
      expect(node([c.loader, ...LINT])).toEqual(expected);
    });

    // --stack-trace-limit changes V8's flag hash on Node 20, 22 and 24; heap sizes
    // (--max-old-space-size) do so only up to Node 22 (docs/design-notes.md)
    it("other V8 flags (NODE_OPTIONS): V8 rejects it, and SYNCBOOK_DEBUG says so", () => {
      expect(cacheUsed(bin, { NODE_OPTIONS: "--stack-trace-limit=20" })).toMatchObject({
        used: false,
        why: expect.stringContaining("rejected by V8"),
      });
    });
  });

  it("runs through a symlinked bin, also with --preserve-symlinks-main (as npm links it globally)", () => {
    const dir = mkdtempSync(join(tmpdir(), "syncbook-bin-"));
    symlinkSync(bin, join(dir, "syncbook"));
    for (const opts of ["", "--preserve-symlinks-main"]) {
      const r = spawnSync(process.execPath, [join(dir, "syncbook"), "--version"], {
        encoding: "utf8",
        env: { ...process.env, NODE_OPTIONS: opts },
      });
      expect(r.stderr, opts).toBe("");
      expect(r.stdout.trim(), opts).toBe("0.1.0");
    }
  });

  it("plugins load from the cached bundle, JavaScript and TypeScript, with nothing on stderr", () => {
    const dir = tempDir("syncbook-bundle-plugins-");
    writeFiles(dir, {
      "package.json": '{ "type": "module" }\n',
      "plugins/flip.mjs": "export default { name: 'flip', hooks: { flip() {} } };\n",
      "plugins/flop.ts":
        "const name: string = 'flop';\nexport default { name, hooks: { flop(): void {} }, optionsSchema: { type: 'object', properties: { n: { type: 'integer', description: 'n' } }, additionalProperties: false } };\n",
      "rb.yaml": pluginRunbook(
        ["./plugins/flip.mjs", "./plugins/flop.ts"],
        ["{ use: flip }", "{ use: flop, with: { n: many } }"],
      ),
    });
    // --load-plugins: lint imports a runbook's own plugins only when asked (their top-level code runs)
    const r = node([bin, "lint", join(dir, "rb.yaml"), "--format", "json", "--load-plugins"]);
    expect(r.stderr).toBe("");
    const plugin = (JSON.parse(r.stdout) as { diagnostics: { rule: string; message: string }[] }).diagnostics.filter(
      (d) => d.rule.startsWith("plugin-"),
    );
    // both files loaded (no plugin-load), and the TypeScript plugin's own schema judged its options
    expect(plugin.map((d) => d.rule)).toEqual(["plugin-options"]);
    expect(plugin[0]!.message).toContain("option `n` must be integer");
  });

  it("a command whose work never settles (a plugin awaiting forever) fails, instead of exiting 0 in silence", () => {
    const dir = tempDir("syncbook-bundle-hang-");
    writeFiles(dir, {
      "package.json": '{ "type": "module" }\n',
      "plugins/hang.mjs": "await new Promise(() => {});\nexport default { name: 'hang', hooks: { hang() {} } };\n",
      "rb.yaml": pluginRunbook(["./plugins/hang.mjs"], ["{ use: hang }"]),
    });
    for (const args of [
      ["lint", join(dir, "rb.yaml"), "--load-plugins"],
      ["run", join(dir, "rb.yaml"), "--dry-run"],
    ]) {
      const r = node([bin, ...args]);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toContain("the command stopped before it finished");
      expect(r.stderr).toContain("hint:");
    }
  });
});
