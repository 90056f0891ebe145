#!/usr/bin/env node
"use strict";
/**
 * The `syncbook` command (template: scripts/bundle.mjs writes it to dist/cli/syncbook.cjs with
 * the bundle's file name in place of __BUNDLE__).
 *
 * It runs the CLI bundle, one CommonJS file, through node:vm with the V8 code cache that the
 * build made by running `syncbook lint` on the example runbooks. Why: Node 20 has no compile
 * cache (`module.enableCompileCache` is Node 22), and compiling the code was half of `syncbook
 * lint`'s start-up. `v8-compile-cache` makes its cache right after the top-level compile, before
 * the functions a command calls are compiled, and writes it to the temp folder at run time; this
 * cache is made once at build time, after the lint ran, and is only ever read.
 *
 * Safety: the bundle's name carries a hash of its content, so a cache never meets another
 * bundle. V8 checks its version, flags and the source length, and rejects a cache that does
 * not fit (another Node, a truncated file); then the bundle is compiled as usual: slower, never
 * wrong.
 */
const { readFileSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");
const Module = require("node:module");
const vm = require("node:vm");

const BUNDLE = join(__dirname, "__BUNDLE__");
const CACHE = `${BUNDLE}.v8cache`;

/** The bundle as a script, with the build's code cache when there is one. */
function compileBundle(useCache) {
  let cachedData;
  if (useCache) {
    try {
      cachedData = readFileSync(CACHE);
    } catch {
      // no cache: compile as usual
    }
  }
  // Module.wrap: the wrapper Node gives a CommonJS file, so `require`, `module` and `__filename`
  // mean what the bundle expects. No `import()` in here: a script restored from a code cache
  // loses what it needs on Node 20; the bundle imports through runtime-import.cjs instead.
  return new vm.Script(Module.wrap(readFileSync(BUNDLE, "utf8")), { filename: BUNDLE, cachedData });
}

/** Run the bundle (the CLI reads process.argv); returns the compiled script. */
function runBundle(script) {
  const mod = { exports: {}, filename: BUNDLE, id: BUNDLE };
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(BUNDLE), mod, BUNDLE, __dirname);
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
