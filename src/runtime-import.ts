/**
 * `import()` of a module loaded at run time on purpose: a plugin's file, or a package or Node
 * module kept out of `syncbook lint`'s start-up (child_process, undici, tsx).
 *
 * Every such import goes through here, because the CLI bundle runs inside node:vm with a V8
 * code cache (scripts/cli-loader.cjs), and on Node 20 a script restored from a code cache loses
 * the host options `import()` needs. So scripts/bundle.mjs builds this one module as a file of
 * its own, `dist/cli/runtime-import.cjs`, loaded by Node's own CommonJS loader, where `import()`
 * works; the bundle calls it through `require`. An ESLint rule keeps other `import()` of
 * non-relative specifiers out of src/.
 */
export function runtimeImport<M>(specifier: string): Promise<M> {
  return import(specifier) as Promise<M>;
}
