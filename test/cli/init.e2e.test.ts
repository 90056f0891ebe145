/**
 * Issue 14, point 9: "`syncbook init`'s `$schema` modeline points at a file an editor can open (the
 * installed package's `schemas/`)" and "a `.gitignore` hint (or `init` writes one) for `.syncbook/`".
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const cli = join(process.cwd(), "dist/cli/syncbook.cjs");
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "syncbook-init-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("syncbook init", () => {
  it("the modeline names the installed schema by a path relative to the runbook, which exists", () => {
    mkdirSync(join(dir, "runbooks"));
    const out = execFileSync("node", [cli, "init", "runbooks/cut.yaml"], { cwd: dir }).toString();
    const first = readFileSync(join(dir, "runbooks/cut.yaml"), "utf8").split("\n")[0]!;
    const m = /^# yaml-language-server: \$schema=(.+)$/.exec(first);
    expect(m, first).not.toBeNull();
    expect(m![1]).not.toMatch(/^https?:/);
    const target = resolve(join(dir, "runbooks"), m![1]!);
    expect(existsSync(target), target).toBe(true);
    expect(target).toBe(join(process.cwd(), "schemas/runbook.schema.json"));
    expect(out).toContain("wrote runbooks/.gitignore (journals stay out of git)");
    expect(dirname(target)).toBe(join(process.cwd(), "schemas"));
  });

  it("puts .syncbook/ in the folder's .gitignore once, keeping what was there", () => {
    writeFileSync(join(dir, ".gitignore"), "node_modules/");
    execFileSync("node", [cli, "init", "a.yaml"], { cwd: dir });
    execFileSync("node", [cli, "init", "b.yaml"], { cwd: dir });
    const text = readFileSync(join(dir, ".gitignore"), "utf8");
    expect(text.startsWith("node_modules/\n")).toBe(true);
    expect(text.match(/^\.syncbook\/$/gm)).toHaveLength(1);
  });
});
