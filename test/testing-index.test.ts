/**
 * docs/testing.md's index ("Where a behaviour is tested") is meant to be complete: a newcomer
 * finds every test file from the behaviour it pins. Every test file under test/ is named by a
 * row (by path, or by a `*` pattern within one folder), and every name a row gives exists.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith(".test.ts") ? [relative(root, p)] : [];
  });
}

/** The test file names (and patterns) the index's table cites, in its second column. */
function indexNames(): string[] {
  const md = readFileSync(join(root, "docs", "testing.md"), "utf8");
  const section = md.split("## Where a behaviour is tested")[1]?.split("\n## ")[0] ?? "";
  const rows = section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| ---"));
  return rows.slice(1).flatMap((row) => {
    const files = row.split(" | ")[1] ?? "";
    return [...files.matchAll(/`(test\/[^`]+\.test\.ts)`/g)].map((m) => m[1]!);
  });
}

const matches = (name: string, file: string): boolean =>
  name.includes("*")
    ? new RegExp(`^${name.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`).test(file)
    : name === file;

describe("docs/testing.md's index of behaviours and test files", () => {
  const files = testFiles(join(root, "test")).sort();
  const names = indexNames();

  it("reads a table (the test would pass on an empty one)", () => {
    expect(names.length).toBeGreaterThan(30);
  });

  it("names every test file", () => {
    expect(files.filter((f) => !names.some((n) => matches(n, f)))).toEqual([]);
  });

  it("names only test files that exist", () => {
    expect(names.filter((n) => !files.some((f) => matches(n, f)))).toEqual([]);
  });
});

describe("the .e2e suffix (docs/testing.md): a newcomer can tell the slow, real tests by name", () => {
  // what starts the simulator or drives the built CLI: the support modules that do it, and the direct ways
  const DRIVES = /support\/(sim|run|crash-harness|rehearsal)\.js|startSimulator|syncbook\.cjs/;

  it("every test file that starts the simulator or drives the built CLI ends in .e2e.test.ts", () => {
    // this file names the patterns, and so matches them
    const files = testFiles(join(root, "test")).filter((f) => f !== "test/testing-index.test.ts");
    const driving = files.filter((f) => DRIVES.test(readFileSync(join(root, f), "utf8")));
    expect(driving.length).toBeGreaterThan(40);
    expect(driving.filter((f) => !f.endsWith(".e2e.test.ts"))).toEqual([]);
  });
});
