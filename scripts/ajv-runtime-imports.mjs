// ajv's standalone code (its "esm" output too) calls require() for its runtime helpers
// (ucs2length, equal). scripts/gen.mjs and scripts/gen-plugin-validators.mjs import each instead:
// a require() at run time resolved and compiled ajv's file from node_modules at every start,
// outside the CLI bundle and its code cache (issue 41: about 5 ms of lint's cold start). Bundled
// (esbuild), the default import is the helper; from Node's ESM loader (the library, dist/src), it
// is the CommonJS exports object, whose `default` the helper is.

/** `code` with each `require("ajv/dist/runtime/<name>").default` an imported name, and the imports to put before it. */
export function ajvRuntimeImports(code, out) {
  const helpers = new Map();
  const replaced = code.replace(/require\("ajv\/dist\/runtime\/(\w+)"\)\.default/g, (_, name) => {
    const id = `ajvRuntime_${name}`;
    helpers.set(id, `ajv/dist/runtime/${name}.js`);
    return `(${id}.default ?? ${id})`;
  });
  if (/\brequire\(/.test(replaced))
    throw new Error(
      `${out}: ajv's standalone code calls require() in a way scripts/ajv-runtime-imports.mjs does not import`,
    );
  const imports = [...helpers].map(([id, path]) => `import ${id} from "${path}";\n`).join("");
  return { code: replaced, imports };
}
