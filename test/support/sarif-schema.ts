/**
 * The official SARIF 2.1.0 JSON Schema (OASIS, sarif-spec `Schemata/sarif-schema-2.1.0.json`,
 * draft-07), for validating `syncbook lint --format sarif` in tests.
 *
 * Where it comes from: no npm package ships that file as JSON, so it is read from the dev
 * dependency `@datadog/datadog-ci-plugin-sarif` (Apache-2.0; pinned exactly in package.json),
 * whose bundle inlines the schema verbatim as one object literal (that tool validates SARIF
 * before uploading it). The literal is evaluated in an empty VM context, and its `$id` and title
 * are checked, so a package update that moves or changes it fails loudly here, not silently.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, dirname } from "node:path";
import { runInNewContext } from "node:vm";

const SCHEMA_ID = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json";

export function sarifSchema(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve("@datadog/datadog-ci-plugin-sarif/package.json"));
  const bundle = readFileSync(join(pkg, "dist/bundle.js"), "utf8");
  const start = bundle.indexOf("var sarif_schema_2_1_0_default = {");
  const end = bundle.indexOf("\n};\n", start);
  if (start < 0 || end < 0)
    throw new Error("the SARIF 2.1.0 schema is no longer inlined in @datadog/datadog-ci-plugin-sarif");
  const literal = bundle.slice(bundle.indexOf("{", start), end + 2);
  const schema = runInNewContext(`(${literal})`, {}, { timeout: 2000 }) as Record<string, unknown>;
  if (schema.$id !== SCHEMA_ID || schema.title !== "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema")
    throw new Error(`unexpected schema ${String(schema.$id)}`);
  // the object was made in another realm: copy it into this one for ajv
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}
