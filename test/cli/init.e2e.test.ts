/**
 * Issue 14, point 9: "`syncbook init`'s `$schema` modeline points at a file an editor can open (the
 * installed package's `schemas/`)" and "a `.gitignore` hint (or `init` writes one) for `.syncbook/`".
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const cli = join(process.cwd(), "dist/cli/syncbook.cjs");
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "syncbook-init-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("syncbook init", () => {
  // issue 39, points 6 and 8: the modeline works in a teammate's clone; a missing folder is made
  it("outside syncbook's checkout: a copy of the schema beside the runbook, named by the modeline, never a path out of the repository", () => {
    mkdirSync(join(dir, ".git"));
    const out = execFileSync("node", [cli, "init", "runbooks/cut.yaml"], { cwd: dir }).toString();
    const first = readFileSync(join(dir, "runbooks/cut.yaml"), "utf8").split("\n")[0]!;
    expect(first).toBe("# yaml-language-server: $schema=runbook.schema.json");
    expect(readFileSync(join(dir, "runbooks/runbook.schema.json"), "utf8")).toBe(
      readFileSync(join(process.cwd(), "schemas/runbook.schema.json"), "utf8"),
    );
    expect(out).toContain("made runbooks\n");
    expect(out).toContain(
      "wrote runbooks/runbook.schema.json (the runbook format, for your editor's `$schema` line: commit it",
    );
    expect(out).toContain("wrote runbooks/.gitignore (journals stay out of git)");
    // a second runbook in the folder shares the copy, and keeps one a team edited
    writeFileSync(join(dir, "runbooks/runbook.schema.json"), "{}");
    const again = execFileSync("node", [cli, "init", "runbooks/other.yaml"], { cwd: dir }).toString();
    expect(again).not.toContain("runbook.schema.json");
    expect(readFileSync(join(dir, "runbooks/runbook.schema.json"), "utf8")).toBe("{}");
    expect(readFileSync(join(dir, "runbooks/other.yaml"), "utf8")).toMatch(
      /^# yaml-language-server: \$schema=runbook.schema.json\n/,
    );
  });

  it("in a repository with syncbook in node_modules: that schema, by a path relative to the runbook", () => {
    mkdirSync(join(dir, ".git"));
    mkdirSync(join(dir, "node_modules/syncbook/schemas"), { recursive: true });
    writeFileSync(join(dir, "node_modules/syncbook/schemas/runbook.schema.json"), "{}");
    execFileSync("node", [cli, "init", "ops/runbooks/cut.yaml"], { cwd: dir });
    const first = readFileSync(join(dir, "ops/runbooks/cut.yaml"), "utf8").split("\n")[0]!;
    expect(first).toBe("# yaml-language-server: $schema=../../node_modules/syncbook/schemas/runbook.schema.json");
    expect(existsSync(join(dir, "ops/runbooks/runbook.schema.json"))).toBe(false);
  });

  it("in syncbook's own checkout: its schemas/, by a path relative to the runbook (a clone has it at the same place)", () => {
    const at = mkdtempSync(join(process.cwd(), "runbooks", ".init-test-"));
    try {
      execFileSync("node", [cli, "init", join(at, "cut.yaml")], { cwd: dir });
      const first = readFileSync(join(at, "cut.yaml"), "utf8").split("\n")[0]!;
      expect(first).toBe("# yaml-language-server: $schema=../../schemas/runbook.schema.json");
    } finally {
      rmSync(at, { recursive: true, force: true });
    }
  });

  it("a folder path through a file is refused with a hint, nothing written", () => {
    writeFileSync(join(dir, "afile"), "");
    let err: { status?: number; stderr?: Buffer } = {};
    try {
      execFileSync("node", [cli, "init", "afile/x.yaml"], { cwd: dir, stdio: "pipe" });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.status).toBe(2);
    expect(String(err.stderr)).toContain("A part of its folder path is a file");
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
