#!/usr/bin/env node
"use strict";
/**
 * The `syncbook` command (template: scripts/bundle.mjs writes it to dist/cli/syncbook.cjs, with
 * what it built in place of BUILD below).
 *
 * It runs a CLI bundle, one CommonJS file, through node:vm with the V8 code cache the build
 * made by running `syncbook lint` on the example runbooks. Why: Node 20 has no compile cache
 * (`module.enableCompileCache` is Node 22), and compiling the code was half of `syncbook lint`'s
 * start-up. `v8-compile-cache` makes its cache right after the top-level compile, before the
 * functions a command calls are compiled, and writes it to the temp folder at run time; this
 * cache is made once at build time, after the lint ran, and is only ever read.
 *
 * Two bundles: `cli`, every command, and `lint`, `syncbook lint` alone (and its worker thread,
 * through dist/cli/lint-worker.cjs), whose smaller file and cache are read faster at every
 * start (issue 41: lint's cold start within 2x `node -e 0`). The command is process.argv[2].
 *
 * Safety: V8 checks little of a cache (its own version, its flags, the source's length) and
 * does not checksum the contents: a cache with flipped bytes can crash it, and a bundle edited
 * in place to the same length would run the cached old code. So the cache is used only when the
 * bundle's and the cache's CRC-32 are the ones the build wrote here, on the Node that built it
 * (about 2 ms). Otherwise, or when V8 rejects it (other V8 flags, e.g. from NODE_OPTIONS), the
 * bundle is compiled as usual: slower, same behaviour. SYNCBOOK_DEBUG=1 says why.
 */
const { readFileSync, realpathSync, writeFileSync } = require("node:fs");
const { dirname, join } = require("node:path");
const Module = require("node:module");
const vm = require("node:vm");
const { crc32 } = require("node:zlib");

/** @type {{ node: string, bundles: Record<string, { file: string, crc: number, cacheCrc: number | null }> }} */
const BUILD = { node: "", bundles: {} };
// realpath: with --preserve-symlinks-main, __dirname is the folder of the bin's symlink
const DIR = dirname(realpathSync(__filename));

function debug(message) {
  if (process.env.SYNCBOOK_DEBUG) process.stderr.write(`syncbook: ${message}\n`);
}

/** Where the bundle `name` ("cli" or "lint") and its code cache are. */
function bundlePaths(name) {
  const file = join(DIR, BUILD.bundles[name].file);
  return { file, cache: `${file}.v8cache` };
}

/** The build's code cache of `name`, if it is intact and made for exactly this bundle and this Node. */
function buildCache(name, source) {
  const built = BUILD.bundles[name];
  const { file, cache } = bundlePaths(name);
  if (built.cacheCrc === null) return undefined;
  if (BUILD.node !== process.version)
    return debug(`code cache not used: built on Node ${BUILD.node}, this is ${process.version}`);
  if (crc32(source) !== built.crc) return debug(`code cache not used: ${file} changed since the build`);
  let data;
  try {
    data = readFileSync(cache);
  } catch (err) {
    return debug(`code cache not used: ${err.message}`);
  }
  if (crc32(data) !== built.cacheCrc) return debug(`code cache not used: ${cache} changed since the build`);
  return data;
}

/** The bundle `name` as a script, with the build's code cache when it may be used. */
function compileBundle(name, useCache) {
  const { file } = bundlePaths(name);
  const source = readFileSync(file);
  const cachedData = useCache ? buildCache(name, source) : undefined;
  // The build wrapped the bundle as Node wraps a CommonJS file, so `require`, `module` and
  // `__filename` mean what it expects. No `import()` in the bundle: a vm script has none without
  // an `importModuleDynamically` hook, and on Node 20 a script restored from a code cache loses
  // even that; the bundle imports through runtime-import.cjs instead (the build checks it).
  // latin1: the build made the bundle ASCII, and this decodes it about three times faster than utf8
  const script = new vm.Script(source.toString("latin1"), { filename: file, cachedData });
  if (cachedData && script.cachedDataRejected)
    debug("code cache rejected by V8 (other V8 flags, e.g. from NODE_OPTIONS?)");
  return script;
}

/** Run the bundle `name`'s module code; returns its exports (`cli()`, and the lint bundle's `worker()`). */
function runBundle(name, script) {
  const { file } = bundlePaths(name);
  const mod = { exports: {}, filename: file, id: file };
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, dirname(file));
  return mod.exports;
}

/** The bundle for the command in process.argv: `lint` has one of its own. */
function bundleFor(argv) {
  return argv[2] === "lint" ? "lint" : "cli";
}

/**
 * Build only (scripts/bundle.mjs): run the bundle `name`'s CLI with `argv`, then write its code
 * cache as the process exits, so it holds every function that command compiled.
 */
function trainCodeCache(name, argv) {
  process.argv = [process.argv[0], __filename, ...argv];
  const script = compileBundle(name, false);
  runBundle(name, script).cli();
  process.on("exit", () => writeFileSync(bundlePaths(name).cache, script.createCachedData()));
}

/** In a lint worker thread (dist/cli/lint-worker.cjs): the lint bundle's worker. */
function runLintWorker() {
  runBundle("lint", compileBundle("lint", true)).worker();
}

if (require.main === module) {
  const name = bundleFor(process.argv);
  runBundle(name, compileBundle(name, true)).cli();
} else module.exports = { bundleFor, bundlePaths, compileBundle, runLintWorker, trainCodeCache };
