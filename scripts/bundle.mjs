// The command-line entry as one CommonJS bundle run with a V8 code cache made at build time.
//
//   dist/cli/syncbook.cjs                the `bin`: a small loader (template: scripts/cli-loader.cjs)
//   dist/cli/syncbook.<hash>.cjs         src/cli.ts and everything it imports (esbuild)
//   dist/cli/syncbook.<hash>.cjs.v8cache V8's code cache, written after `syncbook lint runbooks`
//   dist/cli/lint-worker.cjs             src/lint/worker.ts: the second thread of a lint of many files
//
// Why: on Node 20 (no compile cache) `syncbook lint` spent most of its start-up first resolving
// hundreds of small modules, then compiling the code. A bundle removes the first; the code
// cache the second (see scripts/cli-loader.cjs). Commands still import their code lazily, so
// `syncbook lint` runs none of the runner's code. dist/src (tsc) stays the library and its
// types. Packages used only while running a cutover (undici, listr2, inquirer), the MongoDB driver
// (preflight only), and tsx (loads TypeScript plugins), stay external: they load from node_modules
// when first imported.
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
// The sources are ESM: import.meta.url becomes the bundle's own URL (dist/cli, so node_modules
// resolves from there as it does from src/). "use strict" first: a directive only counts at the
// very top, and ESM code is strict.
const esm = {
  define: { "import.meta.url": "__syncbookModuleUrl" },
  banner: { js: "\"use strict\";\nconst __syncbookModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
};
// src/runtime-import.ts is a file of its own, loaded by Node's CommonJS loader, where import()
// works (it does not from the vm script the bundle runs in: see scripts/cli-loader.cjs).
await build({ ...common, entryPoints: ["src/runtime-import.ts"], outfile: "dist/cli/runtime-import.cjs" });
/** @type {import("esbuild").Plugin} */
const runtimeImportOutside = {
  name: "runtime-import-outside",
  setup(b) {
    b.onResolve({ filter: /\/runtime-import\.js$/ }, (args) =>
      args.importer.startsWith(`${root}src/`) ? { path: "./runtime-import.cjs", external: true } : undefined,
    );
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
const { metafile } = await build({
  ...common,
  ...esm,
  entryPoints: ["src/cli.ts"],
  outfile: "dist/cli/syncbook.bundle.cjs",
  external: ["tsx", "undici", "listr2", "@inquirer/*", "@listr2/*", "mongodb"],
  plugins: [runtimeImportOutside, yamlDebugOff],
  metafile: true,
});
// The lint worker (src/lint/worker.ts: lint of many files splits them over two threads) as a file
// of its own beside the bundle, where src/lint/run.ts looks for it. It runs in a worker thread,
// loaded by Node's CommonJS loader (not through the vm), so its import()s are not a concern.
await build({
  ...common,
  ...esm,
  entryPoints: ["src/lint/worker.ts"],
  outfile: "dist/cli/lint-worker.cjs",
  external: ["tsx", "undici", "listr2", "@inquirer/*", "@listr2/*", "mongodb"],
  plugins: [runtimeImportOutside, yamlDebugOff],
});
// Every import() left in the bundle would fail at run time: refuse to build one. The metafile
// names those with a literal specifier; a scan of the output finds the others too (also in
// bundled packages). A false alarm from a string or comment that reads `import(` fails safe.
const dynamic = Object.values(metafile.outputs).flatMap((o) =>
  o.imports.filter((i) => i.kind === "dynamic-import" && i.external).map((i) => i.path),
);
const text = readFileSync(`${out}/syncbook.bundle.cjs`, "utf8");
const lines = text
  .split("\n")
  .flatMap((l, i) => (/(^|[^\w$.])import\s*\(/.test(l) ? [`line ${i + 1}: ${l.trim().slice(0, 120)}`] : []));
if (dynamic.length || lines.length) {
  process.stderr.write(
    `scripts/bundle.mjs: import() left in the bundle${dynamic.length ? ` (of ${dynamic.join(", ")})` : ""}; it fails there at run time. Use runtimeImport() from src/runtime-import.ts.\n${lines.join("\n")}\n`,
  );
  process.exit(1);
}

// The loader reads the bundle as latin1, about three times faster than decoding UTF-8 (it is
// read at every start): so it must be ASCII. esbuild escapes strings, regexes and names; what it
// leaves is the comments it keeps, whose characters are escaped here (\uXXXX: in a comment, text).
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
    `scripts/bundle.mjs: non-ASCII outside a comment in the bundle (the loader reads it as latin1):\n${left.join("\n")}\n`,
  );
  process.exit(1);
}
// Content-addressed name, so a stale dist/cli never mixes bundles. The hashbang esbuild keeps
// from src/cli.ts would be a syntax error inside the wrapper.
const code = Buffer.from(ascii.replace(/^#!.*\n/, ""), "latin1");
const bundle = `syncbook.${createHash("sha256").update(code).digest("hex").slice(0, 12)}.cjs`;
writeFileSync(`${out}/${bundle}`, code);
rmSync(`${out}/syncbook.bundle.cjs`);
const template = readFileSync(`${root}scripts/cli-loader.cjs`, "utf8");
const BUILD_LINE = 'const BUILD = { bundle: "", bundleCrc: 0, cacheCrc: null, node: "" };';
if (!template.includes(BUILD_LINE)) throw new Error("scripts/cli-loader.cjs: the BUILD line is missing");
const writeLoader = (cacheCrc) => {
  const build = { bundle, bundleCrc: crc32(code), cacheCrc, node: process.version };
  writeFileSync(`${out}/syncbook.cjs`, template.replace(BUILD_LINE, `const BUILD = ${JSON.stringify(build)};`));
  chmodSync(`${out}/syncbook.cjs`, 0o755);
};
writeLoader(null);

// Train the cache: lint the example runbooks (the start-up budget is lint's) in a fresh process,
// without NODE_OPTIONS: V8 flags (e.g. --max-old-space-size) would make every other run reject it.
const env = { ...process.env };
delete env.NODE_OPTIONS;
const train = spawnSync(
  process.execPath,
  ["-e", "require(process.argv[1]).trainCodeCache(['lint', 'runbooks'])", `${out}/syncbook.cjs`],
  {
    cwd: root,
    env,
    stdio: ["ignore", "ignore", "inherit"],
  },
);
if (train.status !== 0) {
  process.stderr.write(`scripts/bundle.mjs: training the code cache (syncbook lint runbooks) exited ${train.status}\n`);
  process.exit(1);
}
writeLoader(crc32(readFileSync(`${out}/${bundle}.v8cache`)));
