#!/usr/bin/env node
"use strict";
/**
 * The `syncbook` command (template: scripts/bundle.mjs writes it to dist/cli/syncbook.cjs, with
 * what it built in place of BUILD below).
 *
 * It runs the CLI bundle, one CommonJS file, through node:vm with the V8 code cache the build
 * made by running `syncbook lint` on the example runbooks. Why: Node 20 has no compile cache
 * (`module.enableCompileCache` is Node 22), and compiling the code was half of `syncbook lint`'s
 * start-up. `v8-compile-cache` makes its cache right after the top-level compile, before the
 * functions a command calls are compiled, and writes it to the temp folder at run time; this
 * cache is made once at build time, after the lint ran, and is only ever read.
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

/** @type {{ bundle: string, bundleCrc: number, cacheCrc: number | null, node: string }} */
const BUILD = { bundle: "", bundleCrc: 0, cacheCrc: null, node: "" };
// realpath: with --preserve-symlinks-main, __dirname is the folder of the bin's symlink
const BUNDLE = join(dirname(realpathSync(__filename)), BUILD.bundle);
const CACHE = `${BUNDLE}.v8cache`;

function debug(message) {
  if (process.env.SYNCBOOK_DEBUG) process.stderr.write(`syncbook: ${message}\n`);
}

/** The build's code cache, if it is intact and made for exactly this bundle and this Node. */
function buildCache(source) {
  if (BUILD.cacheCrc === null) return undefined;
  if (BUILD.node !== process.version)
    return debug(`code cache not used: built on Node ${BUILD.node}, this is ${process.version}`);
  if (crc32(source) !== BUILD.bundleCrc) return debug(`code cache not used: ${BUNDLE} changed since the build`);
  let data;
  try {
    data = readFileSync(CACHE);
  } catch (err) {
    return debug(`code cache not used: ${err.message}`);
  }
  if (crc32(data) !== BUILD.cacheCrc) return debug(`code cache not used: ${CACHE} changed since the build`);
  return data;
}

/** The bundle as a script, with the build's code cache when it may be used. */
function compileBundle(useCache) {
  const source = readFileSync(BUNDLE);
  const cachedData = useCache ? buildCache(source) : undefined;
  // Module.wrap: the wrapper Node gives a CommonJS file, so `require`, `module` and `__filename`
  // mean what the bundle expects. No `import()` in the bundle: a vm script has none without an
  // `importModuleDynamically` hook, and on Node 20 a script restored from a code cache loses
  // even that; the bundle imports through runtime-import.cjs instead (the build checks it).
  // latin1: the build made the bundle ASCII, and this decodes it about three times faster than utf8
  const script = new vm.Script(Module.wrap(source.toString("latin1")), { filename: BUNDLE, cachedData });
  if (cachedData && script.cachedDataRejected)
    debug("code cache rejected by V8 (other V8 flags, e.g. from NODE_OPTIONS?)");
  return script;
}

/** Run the bundle (the CLI reads process.argv); returns the compiled script. */
function runBundle(script) {
  const mod = { exports: {}, filename: BUNDLE, id: BUNDLE };
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(BUNDLE), mod, BUNDLE, dirname(BUNDLE));
  return script;
}

/**
 * Build only (scripts/bundle.mjs): run the CLI with `argv`, then write the code cache as the
 * process exits, so it holds every function that command compiled.
 */
function trainCodeCache(argv) {
  process.argv = [process.argv[0], __filename, ...argv];
  const script = runBundle(compileBundle(false));
  process.on("exit", () => writeFileSync(CACHE, script.createCachedData()));
}

if (require.main === module) runBundle(compileBundle(true));
else module.exports = { BUNDLE, CACHE, compileBundle, trainCodeCache };
