/**
 * Issue 27, point 9: the built-in plugins are written against the package's public API only, so a
 * third party could write `shell` or `http` as they stand; that API is one list
 * (src/plugin/public.ts), all of it exported from the package root.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as root from "../../src/index.js";
import * as pub from "../../src/plugin/public.js";
// the documented type a hook's `writes` returns is the package's too (a compile-time check)
import type { WritesEffect } from "../../src/index.js";

const plugins = fileURLToPath(new URL("../../plugins/", import.meta.url));
const files = [
  ...readdirSync(plugins).filter((f) => f.endsWith(".ts")),
  ...readdirSync(join(plugins, "examples")).map((f) => join("examples", f)),
].filter((f) => f.endsWith(".ts"));

describe("the plugin API", () => {
  it("every built-in and example plugin imports syncbook only through src/plugin/public.ts", () => {
    const offending: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(plugins, f), "utf8");
      for (const m of text.matchAll(/^import[^;]*?from\s+"([^"]+)"/gms)) {
        const from = m[1] ?? "";
        if (from.startsWith("node:") || !from.startsWith(".")) continue;
        if (!/^(\.\.\/)+src\/plugin\/public\.js$/.test(from)) offending.push(`${f} → ${from}`);
      }
    }
    expect(files.length).toBeGreaterThan(5);
    expect(offending).toEqual([]);
  });

  it("the package root exports every value of it", () => {
    const missing = Object.keys(pub).filter(
      (k) => (root as Record<string, unknown>)[k] !== (pub as Record<string, unknown>)[k],
    );
    expect(missing).toEqual([]);
    const effect: WritesEffect = () => "off";
    expect(effect({})).toBe("off");
  });
});
