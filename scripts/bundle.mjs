// The command-line entry as one CommonJS bundle run with a V8 code cache made at build time.
//
//   dist/cli/syncbook.cjs                the `bin`: a small loader (template: scripts/cli-loader.cjs)
//   dist/cli/syncbook.<hash>.cjs         src/cli.ts and everything it imports (esbuild)
//   dist/cli/syncbook.<hash>.cjs.v8cache V8's code cache, written after `syncbook lint runbooks`
//
// Why: on Node 20 (no compile cache) `syncbook lint` spent most of its start-up first resolving
// hundreds of small modules, then compiling the code. A bundle removes the first; the code
// cache the second (see scripts/cli-loader.cjs). Commands still import their code lazily, so
// `syncbook lint` runs none of the runner's code. dist/src (tsc) stays the library and its
// types. Packages used only while running a cutover (undici, listr2, inquirer), and tsx (loads
// TypeScript plugins), stay external: they load from node_modules when first imported.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = `${root}dist/cli`;
rmSync(out, { recursive: true, force: true });
const common = { absWorkingDir: root, bundle: true, format: "cjs", platform: "node", target: "node20", logLevel: "warning" };
// The sources are ESM: import.meta.url becomes the bundle's own URL (dist/cli, so node_modules
// resolves from there as it does from src/).
const esm = {
  define: { "import.meta.url": "__syncbookModuleUrl" },
  banner: { js: "const __syncbookModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
};
// src/runtime-import.ts is a file of its own, loaded by Node's CommonJS loader: import() does not
// work from a script restored from a code cache on Node 20 (see that module).
await build({ ...common, entryPoints: ["src/runtime-import.ts"], outfile: "dist/cli/runtime-import.cjs" });
/** @type {import("esbuild").Plugin} */
const runtimeImportOutside = {
  name: "runtime-import-outside",
  setup(b) {
    b.onResolve({ filter: /\/runtime-import\.js$/ }, () => ({ path: "./runtime-import.cjs", external: true }));
  },
};
await build({
  ...common,
  ...esm,
  entryPoints: ["src/cli.ts"],
  outfile: "dist/cli/syncbook.bundle.cjs",
  external: ["tsx", "undici", "listr2", "@inquirer/*", "@listr2/*"],
  plugins: [runtimeImportOutside],
});

// Content-addressed name: a code cache is only ever read beside the exact bundle it was made for.
// The hashbang esbuild keeps from src/cli.ts would be a syntax error inside the wrapper.
const code = readFileSync(`${out}/syncbook.bundle.cjs`, "utf8").replace(/^#!.*\n/, "");
const bundle = `syncbook.${createHash("sha256").update(code).digest("hex").slice(0, 12)}.cjs`;
writeFileSync(`${out}/${bundle}`, code);
rmSync(`${out}/syncbook.bundle.cjs`);
const loader = readFileSync(`${root}scripts/cli-loader.cjs`, "utf8").replace(`"__BUNDLE__"`, JSON.stringify(bundle));
writeFileSync(`${out}/syncbook.cjs`, loader);
chmodSync(`${out}/syncbook.cjs`, 0o755);

// Train the cache: lint the example runbooks (the start-up budget is lint's) in a fresh process.
const train = spawnSync(process.execPath, ["-e", "require(process.argv[1]).trainCodeCache(['lint', 'runbooks'])", `${out}/syncbook.cjs`], {
  cwd: root,
  stdio: ["ignore", "ignore", "inherit"],
});
if (train.status !== 0) {
  process.stderr.write(`scripts/bundle.mjs: training the code cache (syncbook lint runbooks) exited ${train.status}\n`);
  process.exit(1);
}
