/**
 * Issue 39, point 6: you can get and run the tool the way the README shows, after `npm ci` in a
 * clone, as a user would, each in a temporary prefix: `npx syncbook` in the clone, a global
 * install of `npm pack`'s tarball, and a dev dependency on the checkout by its path. Each then
 * writes a runbook with `init` in a repository of its own and lints it, and the `$schema` line
 * names a file inside that repository.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = process.cwd();
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
let tmp: string;
// the registry is not needed: every dependency is in npm's cache after `npm ci`
const NPM = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel", "error"];
const run = (cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string =>
  execFileSync(cmd, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "syncbook-install-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A runbooks repository of a team: `init`, then `lint`, with the given command; the modeline names a file in it. */
function teamRepo(name: string, syncbook: (args: string[], cwd: string) => string): string {
  const repo = join(tmp, name);
  mkdirSync(join(repo, ".git"), { recursive: true });
  const said = syncbook(["init", "runbooks/cutover.yaml"], repo);
  expect(said).toContain("wrote runbooks/cutover.yaml");
  const first = readFileSync(join(repo, "runbooks/cutover.yaml"), "utf8").split("\n")[0]!;
  const ref = /\$schema=(.+)$/.exec(first)![1]!;
  const target = resolve(join(repo, "runbooks"), ref);
  expect(target.startsWith(repo + "/"), target).toBe(true);
  expect(existsSync(target), target).toBe(true);
  expect(syncbook(["lint", "runbooks/cutover.yaml", "--format", "json"], repo)).toContain('"diagnostics"');
  return ref;
}

describe("the ways the README gives to get the syncbook command", () => {
  it("npx syncbook in the clone runs the package's own bin", () => {
    // the first npx of the checkout (an empty npx cache: a new machine) links it into that cache
    // and runs its `prepare` (our build) in the checkout: dist/ rewritten under every other test
    // running then ("Cannot find module dist/cli/syncbook.cjs"), and past this test's time; the
    // checkout is built already, as a user's is after `npm ci`
    expect(
      run("npx", ["--no-install", "syncbook", "--version"], root, { npm_config_ignore_scripts: "true" }).trim(),
    ).toBe(version);
  }, 60_000);

  it("a global install of npm pack's tarball into a temporary prefix: syncbook on that PATH", () => {
    const packed = run("npm", ["pack", "--ignore-scripts", "--pack-destination", tmp, ...NPM], root)
      .trim()
      .split("\n")
      .at(-1)!;
    const prefix = join(tmp, "prefix");
    run("npm", ["install", "-g", "--prefix", prefix, join(tmp, packed), ...NPM], tmp);
    const bin = join(prefix, "bin", "syncbook");
    expect(run(bin, ["--version"], tmp).trim()).toBe(version);
    const ref = teamRepo("team-global", (args, cwd) => run(bin, args, cwd));
    // a global install is outside the team's repository: the schema is copied beside the runbook
    expect(ref).toBe("runbook.schema.json");
  }, 180_000);

  it("a dev dependency on the checkout by its path: npx syncbook in the team's repository", () => {
    const repo = join(tmp, "team-dep");
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(repo, "package.json"), JSON.stringify({ name: "team-runbooks", private: true, type: "module" }));
    // --ignore-scripts: npm runs a linked folder's `prepare` (our build) in the checkout itself, which
    // rewrote dist/ under every other test running at that moment ("Cannot find module
    // dist/cli/syncbook.cjs" in the full suite); the checkout is built already
    run("npm", ["install", "--save-dev", "--ignore-scripts", root, ...NPM], repo);
    expect(run("npx", ["--no-install", "syncbook", "--version"], repo).trim()).toBe(version);
    const ref = teamRepo("team-dep", (args, cwd) => run("npx", ["--no-install", "syncbook", ...args], cwd));
    expect(ref).toBe("../node_modules/syncbook/schemas/runbook.schema.json");
  }, 120_000);

  it("the bin by its path, from anywhere", () => {
    expect(run("node", [join(root, "dist/cli/syncbook.cjs"), "--version"], tmp).trim()).toBe(version);
  });
});
