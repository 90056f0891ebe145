/**
 * Issue 40, point 3: the read model's JSON shape is documented (docs/model.md), as `syncbook
 * watch` serves it as /state.json for others to read. Every field `src/model/contract.ts`
 * declares is named on the page, and the page names the version the code has.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MODEL_VERSION } from "../../src/model/contract.js";

const root = process.cwd();

/** Every property name declared in the contract's types (comments left out). */
export function contractFields(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  const names = new Set<string>();
  for (const m of code.matchAll(/(?:^|[{;,]|\n)\s*([A-Za-z_]\w*)\??:(?!:)/g)) names.add(m[1]!);
  return [...names].sort();
}

describe("docs/model.md", () => {
  const page = readFileSync(join(root, "docs", "model.md"), "utf8");
  const source = readFileSync(join(root, "src", "model", "contract.ts"), "utf8");

  it("reads the contract's fields (the reader itself: nested and optional fields, no comment words)", () => {
    const found = contractFields(source);
    for (const f of [
      "version",
      "cutover",
      "runs",
      "gaps",
      "ended",
      "failing",
      "sinceMs",
      "lagTrend",
      "by",
      "pid",
      "notDelivered",
    ])
      expect(found).toContain(f);
    expect(found).not.toContain("Times");
    expect(found.length).toBeGreaterThan(80);
  });

  it("names every field of src/model/contract.ts", () => {
    const missing = contractFields(source).filter((f) => !page.includes(`\`${f}\``));
    expect(missing).toEqual([]);
  });

  it("names the version the code has", () => {
    expect(page).toContain(`(\`MODEL_VERSION\` ${MODEL_VERSION})`);
  });
});
