// The command-line entry as one ESM bundle with a chunk per lazily loaded command (esbuild,
// code splitting): `syncbook lint` starts by reading a handful of files instead of hundreds of
// small modules (ours, yaml's, ajv's), which is most of its start-up time on Node 20 (no
// compile cache). dist/src (tsc) stays the library and its types; dist/cli is the `bin`.
// Packages that are loaded only while running a cutover (undici, listr2, inquirer), and tsx
// (loads TypeScript plugins), stay external.
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
rmSync(`${root}/dist/cli`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ["src/cli.ts"],
  outdir: "dist/cli",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["tsx", "undici", "listr2", "@inquirer/*", "@listr2/*"],
  // bundled CommonJS packages (yaml, ajv, commander) call require(): give every chunk one
  banner: { js: "import { createRequire as __syncbookRequire } from 'node:module'; const require = __syncbookRequire(import.meta.url);" },
  logLevel: "warning",
});
