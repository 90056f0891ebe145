/**
 * Issue 27, point 7: the import circle lint → steps → preflight → lint. Preflight reads the
 * runbook view, YAML paths, diagnostic order, a URI's password, the filter language and version
 * comparison from where they live (runbook/, diagnostics.ts, redact.ts, api/), never from lint.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../../src/", import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const importsOf = (file: string): string[] =>
  [...readFileSync(file, "utf8").matchAll(/^(?:import|export)[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1] ?? "");

describe("preflight sits below lint", () => {
  it("no module of src/preflight imports src/lint", () => {
    const offending = files(join(src, "preflight")).flatMap((f) =>
      importsOf(f)
        .filter((i) => /(^|\/)lint\//.test(i))
        .map((i) => `${f.slice(src.length)} → ${i}`),
    );
    expect(offending).toEqual([]);
  });
});
