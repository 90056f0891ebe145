/**
 * Issue 40, point 3: one typed catalogue of every rule id (lint's, preflight's, the wave's), each
 * with its metadata, and every id documented in docs/rules.md (as typescript-eslint's docs test
 * checks that each rule has its page): the page's table and the catalogue hold the same ids, with
 * the same tool, severity and description.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CATALOGUE, catalogueEntry } from "../src/rule-catalogue.js";
import { RULE_CATALOGUE } from "../src/lint/catalogue.js";
import { PREFLIGHT_CHECKS } from "../src/preflight/catalogue.js";
import { WAVE_RULES } from "../src/wave/lint.js";

/** docs/rules.md's row of an entry: id, command, severity, what it finds. */
export function ruleRow(r: (typeof CATALOGUE)[number]): string {
  return `| \`${r.id}\` | ${r.tool} | ${r.severity} | ${r.description.replace(/\|/g, "\\|").replace(/\n/g, " ")} |`;
}

describe("the rule catalogue", () => {
  it("holds every id of lint, preflight and the wave once", () => {
    const ids = CATALOGUE.map((r) => r.id);
    expect(new Set(ids).size, "an id is listed twice").toBe(ids.length);
    expect(ids).toEqual([
      ...RULE_CATALOGUE.map((r) => r.id),
      ...PREFLIGHT_CHECKS.map((r) => r.id),
      ...WAVE_RULES.map((r) => r.id),
    ]);
    expect(catalogueEntry("wave-shared-instance")?.tool).toBe("wave");
    expect(catalogueEntry("preflight-privileges")?.tool).toBe("preflight");
    expect(catalogueEntry("instance-duplicate")?.tool).toBe("lint");
    expect(catalogueEntry("no-such-rule")).toBeUndefined();
  });

  it("every id is documented in docs/rules.md, with its command, severity and description, and nothing else is", () => {
    const page = readFileSync(join(process.cwd(), "docs", "rules.md"), "utf8");
    const rows = page.split("\n").filter((l) => /^\| `[^`]+` \|/.test(l));
    expect(rows).toEqual(CATALOGUE.map(ruleRow));
  });
});
