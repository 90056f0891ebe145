// The command-line entry as two CommonJS bundles, each run with a V8 code cache made at build time.
//
//   dist/cli/syncbook.cjs                     the `bin`: a small loader (template: scripts/cli-loader.cjs)
//   dist/cli/syncbook.<hash>.cjs              every command: src/cli.ts and everything it imports (esbuild)
//   dist/cli/syncbook-lint.<hash>.cjs         `syncbook lint` alone: src/cli.ts without the other commands'
//                                             modules, and the lint worker thread (src/lint/worker.ts)
//   dist/cli/<bundle>.v8cache                 V8's code cache of each, written after `syncbook lint runbooks`
//   dist/cli/lint-worker.cjs                  the lint worker thread's file: the lint bundle's worker, through the loader
//   dist/cli/runtime-import.cjs               import() from Node's own loader (src/runtime-import.ts)
//
// Why: on Node 20 (no compile cache) `syncbook lint` spent most of its start-up first resolving
// hundreds of small modules, then compiling the code. A bundle removes the first; the code
// cache the second (see scripts/cli-loader.cjs). Commands still import their code lazily, so
// `syncbook lint` runs none of the runner's code. What is left of lint's start-up is mostly
// reading the bundle and its cache (issue 41: on this VM every megabyte of fresh memory costs
// about 3 ms), so lint, the budgeted start-up, has a bundle of its own, without the other
// commands, the runner or the simulator; its worker thread uses the same file and cache.
// dist/src (tsc) stays the library and its types. Packages used only while running a cutover
// (undici, listr2, inquirer), the MongoDB driver (preflight only), and tsx (loads TypeScript
// plugins), stay external: they load from node_modules when first imported.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = `${root}dist/cli`;
rmSync(out, { recursive: true, force: true });
const common = {
  absWorkingDir: root,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  logLevel: "warning",
};
// src/runtime-import.ts is a file of its own, loaded by Node's CommonJS loader, where import()
// works (it does not from the vm script the bundle runs in: see scripts/cli-loader.cjs). The
// bundle requires it at its first call, not as its importers load: a require at load resolved the
// file (reading package.json scopes) at every start, 5-7 ms of lint's, which never calls it (issue 41).
await build({ ...common, entryPoints: ["src/runtime-import.ts"], outfile: "dist/cli/runtime-import.cjs" });
/** @type {import("esbuild").Plugin} */
const runtimeImportOutside = {
  name: "runtime-import-outside",
  setup(b) {
    b.onResolve({ filter: /\/runtime-import\.js$/ }, (args) =>
      args.importer.startsWith(`${root}src/`)
        ? { path: "runtime-import", namespace: "runtime-import-lazy" }
        : undefined,
    );
    b.onResolve({ filter: /^\.\/runtime-import\.cjs$/, namespace: "runtime-import-lazy" }, (args) => ({
      path: args.path,
      external: true,
    }));
    b.onLoad({ filter: /.*/, namespace: "runtime-import-lazy" }, () => ({
      contents:
        'export function runtimeImport(specifier) { return require("./runtime-import.cjs").runtimeImport(specifier); }\n',
      loader: "js",
    }));
  },
};
// yaml reads process.env.LOG_TOKENS for every token it parses and LOG_STREAM for every document
// (its own debug switches): process.env is a slow accessor, and with a folder of runbooks those
// reads were a tenth of lint's time. In the bundle they are off.
const YAML_DEBUG = /node_process\.env\.LOG_(TOKENS|STREAM)/g;
/** @type {import("esbuild").Plugin} */
const yamlDebugOff = {
  name: "yaml-debug-off",
  setup(b) {
    b.onLoad({ filter: /[\\/]yaml[\\/]dist[\\/](parse[\\/]parser|compose[\\/]composer)\.js$/ }, async (args) => {
      const text = await readFile(args.path, "utf8");
      const contents = text.replace(YAML_DEBUG, "false");
      if (contents === text)
        throw new Error(`${args.path}: yaml's LOG_TOKENS/LOG_STREAM switch moved: update scripts/bundle.mjs`);
      return { contents, loader: "js" };
    });
  },
};
// commander requires node:child_process as it loads, for subcommands that are programs of their
// own (syncbook has none): with it come net, dgram and the streams, 2.6 ms of every start-up
// (issue 41). In the bundle it is required when commander first spawns, which it never does.
const COMMANDER_CHILD_PROCESS = "const childProcess = require('node:child_process');";
/** @type {import("esbuild").Plugin} */
const commanderChildProcessLazy = {
  name: "commander-child-process-lazy",
  setup(b) {
    b.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, async (args) => {
      const text = await readFile(args.path, "utf8");
      const uses = text.match(/\bchildProcess\.\w+/g) ?? [];
      if (!text.includes(COMMANDER_CHILD_PROCESS) || uses.some((u) => u !== "childProcess.spawn"))
        throw new Error(`${args.path}: commander's use of node:child_process changed: update scripts/bundle.mjs`);
      const lazy = "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };";
      return { contents: text.replace(COMMANDER_CHILD_PROCESS, lazy), loader: "js" };
    });
  },
};
// The lint bundle: src/cli.ts imports each command's module (src/cli/<command>.ts) lazily; every
// one but lint's is left out, in its place a module that throws. The loader runs this bundle only
// when the command is `lint` (process.argv[2]), where commander calls lint's action and no other.
const OTHER_COMMAND = /^\.\/cli\/[\w-]+\.js$/;
/** @type {import("esbuild").Plugin} */
const otherCommandsOut = {
  name: "other-commands-out",
  setup(b) {
    b.onResolve({ filter: OTHER_COMMAND }, (args) =>
      args.importer === `${root}src/cli.ts` && args.path !== "./cli/lint.js"
        ? { path: args.path, namespace: "not-in-lint-bundle" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "not-in-lint-bundle" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`src/${args.path.slice(2)} is not in the lint bundle (scripts/bundle.mjs), which the loader runs for \`syncbook lint\` only`)});\n`,
      loader: "js",
    }));
  },
};
const external = ["tsx", "undici", "listr2", "@inquirer/*", "@listr2/*", "mongodb"];
// The sources are ESM: import.meta.url becomes the bundle's own URL (dist/cli, so node_modules
// resolves from there as it does from src/). "use strict" first: a directive only counts at the
// very top, and ESM code is strict. Each bundle's entry exports what the loader calls: `cli()`,
// the command line (src/cli.ts reads process.argv), and in the lint bundle `worker()`, a lint
// worker thread. require(), not import(): the module runs at once, as an entry would.
const bundles = {
  cli: { prefix: "syncbook", entry: 'export function cli() { require("./src/cli.ts"); }\n', plugins: [] },
  lint: {
    prefix: "syncbook-lint",
    entry:
      'export function cli() { require("./src/cli.ts"); }\nexport function worker() { require("./src/lint/worker.ts"); }\n',
    plugins: [otherCommandsOut],
  },
};

/**
 * The bundle's text, checked and wrapped as Node wraps a CommonJS file (so the loader compiles
 * the file as it is read: wrapping it at run time made a copy of the whole text, a few ms of
 * start-up), written under its content's name. Returns that name and the bytes.
 */
function finish(prefix, text) {
  // Every import() left in the bundle would fail at run time: refuse to build one. A scan of the
  // output finds them (also in bundled packages); a false alarm from a string or comment that
  // reads `import(` fails safe.
  const lines = text
    .split("\n")
    .flatMap((l, i) => (/(^|[^\w$.])import\s*\(/.test(l) ? [`line ${i + 1}: ${l.trim().slice(0, 120)}`] : []));
  if (lines.length) {
    process.stderr.write(
      `scripts/bundle.mjs: import() left in ${prefix}'s bundle; it fails there at run time. Use runtimeImport() from src/runtime-import.ts.\n${lines.join("\n")}\n`,
    );
    process.exit(1);
  }
  // The loader reads the bundle as latin1, about three times faster than decoding UTF-8 (it is
  // read at every start): so it must be ASCII. esbuild escapes strings, regexes and names; what
  // it leaves is the comments it keeps, whose characters are escaped here (\uXXXX: in a comment, text).
  const COMMENT_LINE = /^(\s*(\*|\/\*\*?)|.*\/\/)/;
  const ascii = text
    .split("\n")
    .map((l) =>
      COMMENT_LINE.test(l)
        ? l.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
        : l,
    )
    .join("\n");
  const left = ascii
    .split("\n")
    .flatMap((l, i) => (/[\u0080-\uffff]/.test(l) ? [`line ${i + 1}: ${l.trim().slice(0, 120)}`] : []));
  if (left.length) {
    process.stderr.write(
      `scripts/bundle.mjs: non-ASCII outside a comment in ${prefix}'s bundle (the loader reads it as latin1):\n${left.join("\n")}\n`,
    );
    process.exit(1);
  }
  // Node's CommonJS wrapper, with the names the bundle expects (`require`, `module`, `__filename`).
  // The hashbang esbuild keeps from src/cli.ts would be a syntax error inside it.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${ascii.replace(/^#!.*\n/, "")}\n});`;
  const code = Buffer.from(wrapped, "latin1");
  // Content-addressed name, so a stale dist/cli never mixes bundles.
  const file = `${prefix}.${createHash("sha256").update(code).digest("hex").slice(0, 12)}.cjs`;
  writeFileSync(`${out}/${file}`, code);
  return { file, code };
}

const built = {};
for (const [name, b] of Object.entries(bundles)) {
  const { outputFiles } = await build({
    ...common,
    stdin: { contents: b.entry, resolveDir: root, sourcefile: `${b.prefix}-entry.js`, loader: "js" },
    write: false,
    minifyWhitespace: true,
    outfile: `dist/cli/${b.prefix}.bundle.cjs`,
    define: { "import.meta.url": "__syncbookModuleUrl" },
    banner: {
      js: "\"use strict\";\nconst __syncbookModuleUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    external,
    plugins: [runtimeImportOutside, yamlDebugOff, commanderChildProcessLazy, ...b.plugins],
  });
  built[name] = finish(b.prefix, outputFiles[0].text);
}

// The lint worker thread's file (src/lint/run.ts starts it beside the bundle that runs lint): the
// lint bundle's `worker()`, compiled by the loader with the bundle's code cache.
writeFileSync(
  `${out}/lint-worker.cjs`,
  `"use strict";\n// A lint worker thread (src/lint/worker.ts, started by src/lint/run.ts): the lint bundle's, from its code cache.\nrequire("./syncbook.cjs").runLintWorker();\n`,
);

const template = readFileSync(`${root}scripts/cli-loader.cjs`, "utf8");
const BUILD_LINE = 'const BUILD = { node: "", bundles: {} };';
if (!template.includes(BUILD_LINE)) throw new Error("scripts/cli-loader.cjs: the BUILD line is missing");
const writeLoader = (cacheCrc) => {
  const bundlesBuilt = Object.fromEntries(
    Object.entries(built).map(([name, b]) => [
      name,
      { file: b.file, crc: crc32(b.code), cacheCrc: cacheCrc?.[name] ?? null },
    ]),
  );
  const build = { node: process.version, bundles: bundlesBuilt };
  writeFileSync(`${out}/syncbook.cjs`, template.replace(BUILD_LINE, `const BUILD = ${JSON.stringify(build)};`));
  chmodSync(`${out}/syncbook.cjs`, 0o755);
};
writeLoader(undefined);

// Train each cache: lint the example runbooks (the start-up budget is lint's; run and rehearse
// lint first too) in a fresh process, without NODE_OPTIONS: V8 flags (e.g. --max-old-space-size)
// would make every other run reject it.
const env = { ...process.env };
delete env.NODE_OPTIONS;
const cacheCrc = {};
for (const [name, b] of Object.entries(built)) {
  const train = spawnSync(
    process.execPath,
    [
      "-e",
      "require(process.argv[1]).trainCodeCache(process.argv[2], ['lint', 'runbooks'])",
      `${out}/syncbook.cjs`,
      name,
    ],
    { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] },
  );
  if (train.status !== 0) {
    process.stderr.write(
      `scripts/bundle.mjs: training ${b.file}'s code cache (syncbook lint runbooks) exited ${train.status}\n`,
    );
    process.exit(1);
  }
  cacheCrc[name] = crc32(readFileSync(`${out}/${b.file}.v8cache`));
}
writeLoader(cacheCrc);
