/**
 * Exit codes are a contract with wrappers (README "Exit codes"): the table in the README, the one
 * `--help` prints and `ExitCode` agree, and "stopped by an interlock" (3) is what the built CLI
 * returns when an interlock refuses, told apart from a failed step (1).
 */
import { rmSync } from "node:fs";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ExitCode } from "../../src/errors.js";
import { FORCE_CHECKS } from "../../src/steps/index.js";
import { spawnSync } from "node:child_process";
import { CLI, cli, tempDir } from "../support/run.js";

const root = process.cwd();
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dir = (): string => {
  const d = tempDir();
  dirs.push(d);
  return d;
};

describe("exit codes", () => {
  it("README's table, --help and ExitCode list the same codes", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const table = readme.slice(readme.indexOf("Exit codes"), readme.indexOf("Why 3 is apart"));
    const documented = [...table.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    const codes = Object.values(ExitCode).sort((a, b) => a - b);
    expect(documented).toEqual(codes);
    expect(ExitCode.interlock).toBe(3);
    for (const args of [["--help"], ["lint", "--help"], ["run", "--help"], ["rehearse", "--help"]]) {
      const r = await cli(args, { cwd: root });
      expect(r.code, args.join(" ")).toBe(0);
      const listed = [...r.stdout.slice(r.stdout.indexOf("Exit codes:")).matchAll(/^ {2}(\d+) +\S/gm)].map((m) =>
        Number(m[1]),
      );
      expect(listed, args.join(" ")).toEqual(codes);
      expect(r.stdout).toMatch(/3 +stopped by an interlock: the refused command was not sent/);
      // every check --force takes is named where it is offered (a review: two were missing)
      if (args[0] === "run" || args[0] === "rehearse") {
        const help = r.stdout.replace(/\s+/g, " ");
        const at = help.indexOf("--force <check>");
        const force = help.slice(at, help.indexOf(" --", at + 1));
        for (const c of FORCE_CHECKS)
          expect(force, `${args.join(" ")}: --force ${c}`).toMatch(new RegExp(`\\b${c}\\b`));
      }
    }
  });

  it("rehearse stopped by an interlock exits 3 (not 1), says so, and still prints the verdict", async () => {
    // --from commit skips the stop-writes step: the writes-stopped / can-commit interlocks refuse
    const r = await cli(["rehearse", join(root, "runbooks/rs-to-sharded.yaml"), "--from", "commit"], { cwd: dir() });
    expect(r.code, r.all).toBe(3);
    // the refusal is the step's paragraph; the last word names the step and points up to it
    expect(r.stderr).toMatch(/✖ \[\d+\/\d+\] Commit failed in \S+: refused \(/);
    expect(r.stderr).toMatch(
      /stopped by an interlock \(exit 3: the refused command was not sent\): step commit failed \(said above\)/,
    );
    expect(r.stdout).toMatch(/rehearsal verdict: FAILED \(exit \d+[^)]*\)\n {2}committed: +not committed/);
  });
});

// an adversarial run: `syncbook rehearse --help | head` ended in an unhandled EPIPE and its stack
describe("help and the version to a reader that has gone", () => {
  for (const args of [["--help"], ["--version"], ["rehearse", "--help"], ["lint", "--help"], ["status", "--help"]])
    it(`syncbook ${args.join(" ")} | true: exit 0, nothing on stderr`, () => {
      const dir = tempDir();
      const err = join(dir, "stderr.txt");
      // `true` exits at once: the help is written to a pipe nobody reads; the CLI's own exit code is
      // kept in a file (a pipeline's is its last command's)
      spawnSync(
        "sh",
        ["-c", `{ "$0" "$1" ${args.join(" ")} 2>"$2"; echo $? >"$2.code"; } | true`, process.execPath, CLI, err],
        { stdio: "ignore" },
      );
      expect(readFileSync(`${err}.code`, "utf8").trim()).toBe("0");
      expect(readFileSync(err, "utf8")).toBe("");
      rmSync(dir, { recursive: true, force: true });
    });
});
