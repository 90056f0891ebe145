/**
 * The built CLI: two CommonJS bundles, each run from the V8 code cache the build made
 * (scripts/bundle.mjs, scripts/cli-loader.cjs): `cli`, every command, and `lint`, `syncbook lint`
 * alone and its worker thread (issue 41: a smaller file and cache to read at every start).
 * Issue #2: "The CLI must start fast: ship compiled JavaScript built by `npm ci`", and lint
 * "within 2× the time of `node -e 0`", which rests on the cache being accepted. A cache must
 * never change what the CLI does: a missing or broken one only costs time, and `import()`
 * (plugins, lazily loaded packages) must work from a cached script, which on Node 20 it does
 * only through dist/cli/runtime-import.cjs.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  cpSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { WORKER_FROM_FILES } from "../../src/lint/run.js";
import { runbook, tempDir, writeFiles } from "../support/plugin.js";

const root = process.cwd();
const distCli = join(root, "dist/cli");
const bin = join(distCli, "syncbook.cjs");

function node(
  args: string[],
  cwd = root,
  env: Record<string, string> = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: undefined, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Bundle = "cli" | "lint";
const BUNDLE_NAME: Record<Bundle, RegExp> = {
  cli: /^syncbook\.[0-9a-f]{12}\.cjs$/,
  lint: /^syncbook-lint\.[0-9a-f]{12}\.cjs$/,
};

/** Whether the loader at `loader` compiles the bundle `name` from the build's code cache (SYNCBOOK_DEBUG says why not). */
function cacheUsed(
  loader: string,
  env: Record<string, string> = {},
  name: Bundle = "cli",
): { used: boolean; why: string } {
  const r = spawnSync(
    process.execPath,
    [
      "-e",
      "process.stdout.write(String(require(process.argv[1]).compileBundle(process.argv[2], true).cachedDataRejected === false))",
      loader,
      name,
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

/** Folders the tests made, removed after them. */
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A copy of dist/cli beside a link to node_modules (the bundle resolves packages from its folder). */
function copyOfCli(): string {
  const dir = mkdtempSync(join(tmpdir(), "syncbook-bundle-"));
  made.push(dir);
  cpSync(distCli, join(dir, "dist/cli"), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return join(dir, "dist/cli");
}

describe("the CLI bundles and their code caches", () => {
  it.each(["cli", "lint"] as const)(
    "the build's code cache of the %s bundle is used on this Node (the start-up budget rests on it)",
    (name) => {
      expect(cacheUsed(bin, {}, name)).toEqual({ used: true, why: "" });
    },
  );

  it.each(["cli", "lint"] as const)(
    "the %s bundle is named for its content and runs in strict mode, as its ESM sources did",
    (name) => {
      const names = readdirSync(distCli);
      const bundles = names.filter((n) => BUNDLE_NAME[name].test(n));
      expect(bundles).toHaveLength(1);
      const bundle = bundles[0]!;
      const code = readFileSync(join(distCli, bundle), "utf8");
      expect(bundle).toBe(
        `${name === "cli" ? "syncbook" : "syncbook-lint"}.${createHash("sha256").update(code).digest("hex").slice(0, 12)}.cjs`,
      );
      expect(names).toContain(`${bundle}.v8cache`);
      expect(readFileSync(bin, "utf8")).toContain(JSON.stringify(bundle));
      // wrapped as Node wraps a CommonJS file; a directive counts only first in the function
      // (a banner before it would make all of src/ sloppy)
      expect(code.startsWith('(function (exports, require, module, __filename, __dirname) { "use strict";')).toBe(true);
    },
  );

  it("`syncbook lint` runs the lint bundle, every other command the full one", () => {
    const { bundleFor } = createRequire(import.meta.url)(bin) as { bundleFor: (argv: string[]) => string };
    expect(bundleFor(["node", bin, "lint", "runbooks"])).toBe("lint");
    for (const argv of [["run", "x.yaml"], ["wave", "lint", "w.yaml"], ["--help"], ["--version"], [], ["rehearse"]])
      expect(bundleFor(["node", bin, ...argv]), argv.join(" ")).toBe("cli");
    // and each bundle is what its commands run: an edit to one shows in its commands only
    const dir = copyOfCli();
    const file = (name: Bundle): string =>
      join(
        dir,
        readdirSync(dir).find((n) => BUNDLE_NAME[name].test(n))!,
      );
    const edit = (name: Bundle, from: string, to: string): void => {
      const code = readFileSync(file(name), "latin1");
      expect(code, name).toContain(from);
      writeFileSync(file(name), code.replace(from, to), "latin1");
    };
    edit("cli", "linted: no problems", "linted: FULL BUNDLE");
    edit("cli", "dry run: nothing is sent", "DRY RUN: nothing is sent");
    edit("lint", "linted: no problems", "linted: LINT BUNDLE");
    const loader = join(dir, "syncbook.cjs");
    expect(node([loader, "lint", "runbooks"]).stdout).toContain("linted: LINT BUNDLE");
    expect(node([loader, "run", "runbooks/rs-to-sharded.yaml", "--dry-run"]).stdout).toContain(
      "DRY RUN: nothing is sent",
    );
    // the lint bundle holds no other command
    expect(readFileSync(file("lint"), "latin1")).not.toContain("dry run: nothing is sent");
  });

  it("`syncbook lint` into pipes or a file never creates process.stdout or process.stderr (their net and tty modules are start-up time)", () => {
    // issue 41: the cursor shown at every start (src/ui/cursor.ts) created both streams, ~6 ms of
    // lint's cold start on Node 22; a terminal is now ruled out with fstat first
    const dir = tempDir("syncbook-lint-modules-");
    made.push(dir);
    const preload = join(dir, "modules.cjs");
    writeFileSync(
      preload,
      'process.on("exit", () => require("node:fs").writeFileSync(process.env.MODULES_OUT, process.moduleLoadList.join("\\n")));\n',
    );
    const loaded = (stdout: "pipe" | number): string[] => {
      const out = join(dir, `modules-${String(stdout)}.txt`);
      const r = spawnSync(process.execPath, ["-r", preload, bin, "lint", "runbooks/rs-to-sharded.yaml"], {
        cwd: root,
        stdio: ["ignore", stdout, "pipe"],
        env: { ...process.env, MODULES_OUT: out },
      });
      expect(r.status, String(r.stderr)).toBe(0);
      return readFileSync(out, "utf8").split("\n");
    };
    const file = join(dir, "out.txt");
    const fd = openSync(file, "w");
    try {
      for (const list of [loaded("pipe"), loaded(fd)]) {
        expect(list).toContain("NativeModule vm"); // the loader ran, and the list is the process's
        expect(list).not.toContain("NativeModule net");
        expect(list).not.toContain("NativeModule tty");
        // process.stdout or process.stderr on a file (or /dev/null) is a SyncWriteStream
        expect(list).not.toContain("NativeModule internal/fs/sync_write_stream");
      }
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(file, "utf8")).toContain("no problems");
  });

  it("the lint worker thread (lint of many files) runs the lint bundle from its cache too; a damaged cache: same output", () => {
    const many = tempDir("syncbook-bundle-many-");
    made.push(many);
    const text = readFileSync(join(root, "runbooks/rs-to-sharded.yaml"), "utf8");
    for (let i = 0; i < WORKER_FROM_FILES + 10; i++)
      writeFileSync(
        join(many, `rb-${String(i).padStart(4, "0")}.yaml`),
        text.replace(/^name: .*$/m, `name: many-${i}`),
      );
    const argv = ["lint", many, "--format", "json"];
    const debug = { SYNCBOOK_DEBUG: "1" };
    const good = node([bin, ...argv], root, debug);
    expect(good.code).toBe(0);
    expect(good.stderr).toBe(""); // neither thread had a reason not to use the cache
    const dir = copyOfCli();
    const cache = join(dir, `${readdirSync(dir).find((n) => BUNDLE_NAME.lint.test(n))!}.v8cache`);
    const data = readFileSync(cache);
    for (let i = 400_000; i < 400_064 && i < data.length; i++) data[i] = data[i]! ^ 0xff;
    writeFileSync(cache, data);
    const damaged = node([join(dir, "syncbook.cjs"), ...argv], root, debug);
    expect(damaged.stdout).toBe(good.stdout);
    expect(damaged.code).toBe(0);
    // this thread and the worker each checked it
    expect(damaged.stderr.match(/code cache not used: .*changed since the build/g)).toHaveLength(2);
  });

  describe.each([
    // lint: the budgeted start-up; run --dry-run: a command of the full bundle
    { name: "lint" as const, argv: ["lint", "runbooks", "test/fixtures/lint/sharding-required.yaml"], code: 1 },
    { name: "cli" as const, argv: ["run", "runbooks/rs-to-sharded.yaml", "--dry-run"], code: 0 },
  ])(
    "a cache of the $name bundle that does not fit is not used: same output, same exit code, only slower",
    ({ name, argv, code: exitCode }) => {
      let expected: ReturnType<typeof node>;
      const copy = (): { dir: string; loader: string; bundle: string; cache: string } => {
        expected ??= node([bin, ...argv]);
        expect(expected.code).toBe(exitCode);
        const dir = copyOfCli();
        const bundle = readdirSync(dir).find((n) => BUNDLE_NAME[name].test(n))!;
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
        expect(cacheUsed(c.loader, {}, name)).toMatchObject({
          used: false,
          why: expect.stringContaining("changed since the build"),
        });
        expect(node([c.loader, ...argv])).toEqual(expected);
        rmSync(c.cache);
        expect(cacheUsed(c.loader, {}, name)).toMatchObject({
          used: false,
          why: expect.stringContaining("no such file"),
        });
        expect(node([c.loader, ...argv])).toEqual(expected);
      });

      it("damaged in place, same size (V8 does not checksum a cache: it would crash)", () => {
        const c = copy();
        const data = readFileSync(c.cache);
        for (let i = 400_000; i < 400_064 && i < data.length; i++) data[i] = data[i]! ^ 0xff;
        writeFileSync(c.cache, data);
        expect(cacheUsed(c.loader, {}, name)).toMatchObject({
          used: false,
          why: expect.stringContaining("changed since the build"),
        });
        expect(node([c.loader, ...argv])).toEqual(expected);
      });

      it("the bundle edited in place to the same length: the edit runs, not the cached old code", () => {
        const c = copy();
        const [from, to, command] =
          name === "lint"
            ? ["linted: no problems", "linted: NO PROBLEMS", ["lint", "runbooks"]]
            : ["dry run: nothing is sent", "DRY RUN: nothing is sent", argv];
        const code = readFileSync(c.bundle, "latin1");
        expect(code).toContain(from);
        writeFileSync(c.bundle, code.replace(from, to), "latin1");
        expect(cacheUsed(c.loader, {}, name)).toMatchObject({
          used: false,
          why: expect.stringContaining("changed since the build"),
        });
        expect(node([c.loader, ...command]).stdout).toContain(to);
      });

      it("built on another Node (V8 checks its own version, not Node's)", () => {
        const c = copy();
        writeFileSync(
          c.loader,
          readFileSync(c.loader, "utf8").replace(`"node":"${process.version}"`, '"node":"v20.0.0-other"'),
        );
        expect(cacheUsed(c.loader, {}, name)).toMatchObject({
          used: false,
          why: expect.stringContaining("built on Node v20.0.0-other"),
        });
        expect(node([c.loader, ...argv])).toEqual(expected);
      });

      // --stack-trace-limit changes V8's flag hash on Node 20, 22 and 24; heap sizes
      // (--max-old-space-size) do so only up to Node 22 (docs/design-notes.md)
      it("other V8 flags (NODE_OPTIONS): V8 rejects it, and SYNCBOOK_DEBUG says so", () => {
        expect(cacheUsed(bin, { NODE_OPTIONS: "--stack-trace-limit=20" }, name)).toMatchObject({
          used: false,
          why: expect.stringContaining("rejected by V8"),
        });
      });
    },
  );

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
