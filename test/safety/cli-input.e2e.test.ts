/**
 * Issue 12, item 14: "`syncbook run .`, URLs such as `http://[::1`, `:99999` or userinfo `p%zz`,
 * `--time-scale 0`, `sim --data 5XB` end in 'internal error … please report it' or are silently
 * replaced: each gets a clear error at its line, or a usage error with exit 2. … `lint` must not
 * run a plugin's top-level code when asked to lint only." And item 11, for the CLI: "every
 * failure path ends the run promptly". Against the built CLI (dist/cli/syncbook.cjs).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, tempDir, writeRunbook } from "../support/run.js";

const RUNBOOK = join(process.cwd(), "runbooks", "rs-to-sharded.yaml");

const noInternalError = (all: string): void => {
  expect(all).not.toMatch(/internal error|please report it|\n\s+at /);
};

function urlRunbook(url: string): string {
  return `runbook: 1
name: urls
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: replicaSet }
  cluster1: { topology: replicaSet }
instances:
  - "${url}"
steps:
  - { id: ready, waitFor: { canCommit: true } }
`;
}

describe("usage errors exit 2 with a message of their own, before anything starts", () => {
  it("`run .` and `rehearse .`: a folder is not a runbook (it was an internal EISDIR error)", async () => {
    const dir = tempDir();
    for (const cmd of ["run", "rehearse"]) {
      const r = await cli([cmd, "."], { cwd: dir });
      expect(r.code, r.all).toBe(2);
      expect(r.stderr).toMatch(/\. is a folder: run and rehearse take one runbook file/);
      expect(r.stderr).toMatch(/syncbook lint \./);
      noInternalError(r.all);
    }
  });

  it("a runbook that does not load: every command's hint offers a `syncbook lint` that pastes, its path quoted", async () => {
    const dir = join(tempDir(), "night shift");
    const file = join(dir, "rb $x.yaml");
    mkdirSync(dir);
    writeFileSync(file, "runbook: 1\nname: broken\nsteps: [\n");
    const quoted = `syncbook lint '${file}'`;
    for (const args of [
      ["status", file],
      ["run", file, "--dry-run"],
      ["watch", file],
      ["preflight", file],
      ["sim", "--runbook", file, "--port", "0"],
    ]) {
      const r = await cli(args, { cwd: dir });
      expect(r.code, `${args[0]}: ${r.all}`).not.toBe(0);
      expect(r.stderr, args[0]).toContain(quoted);
      noInternalError(r.all);
    }
  });

  it.each([
    [["--time-scale", "0"], /--time-scale must be a number above 0 to 1000000, got "0"/],
    [["--time-scale", "-1"], /--time-scale must be a number above 0/],
    [["--time-scale", "abc"], /--time-scale must be a number above 0/],
    [["--time-scale", "1e9"], /--time-scale must be a number above 0 to 1000000, got "1e9"/],
    [["--data", "5XB"], /--data: invalid byte size "5XB"/],
    [["--fault", "bogus"], /--fault: invalid fault "bogus"/],
    [["--seed", "x"], /--seed must be an integer from 0 to 4294967295, got "x"/],
  ])("rehearse %j: a usage error, never replaced by the default nor an internal error", async (args, message) => {
    const r = await cli(["rehearse", RUNBOOK, ...args, "--renderer", "simple"], { cwd: tempDir() });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toMatch(message);
    // nothing started: no simulator, no run
    expect(r.all).not.toMatch(/simulator: http|rehearsal verdict/);
    noInternalError(r.all);
  });

  it("sim --data 5XB: the size's own hint, not the fault syntax", async () => {
    const r = await cli(["sim", "--data", "5XB", "--port", "0", "--verifier-port", "0"], { cwd: tempDir() });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toMatch(/--data: invalid byte size "5XB"/);
    expect(r.stderr).toMatch(/hint: A size such as 5GiB/);
    expect(r.stderr).not.toMatch(/faults:/);
  });

  // a missing folder is made (issue 39, point 8: "refuses a missing folder instead of making it");
  // one that cannot be made, a file in its path, is a usage error naming the file
  it("init into a folder that cannot be made: a usage error naming the file", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "blocker"), "a file, not a folder\n");
    const r = await cli(["init", join(dir, "blocker", "runbooks", "rb.yaml")], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toMatch(/cannot write .*rb\.yaml: (ENOTDIR|EEXIST)/);
    expect(r.stderr).toMatch(/A part of its folder path is a file/);
    noInternalError(r.all);
  });
});

describe("instance URLs the client cannot use: an error at their line", () => {
  it.each([
    ["http://[::1", /it is not a valid URL/],
    ["http://127.0.0.1:99999", /its port 99999 is out of range/],
    ["http://user:p%zz@127.0.0.1:27182", /its password has a bad percent-escape/],
  ])("%s: lint reports instance-url at its line (it linted clean); run refuses it with exit 2", async (url, why) => {
    const dir = tempDir();
    const file = writeRunbook(dir, urlRunbook(url));
    const lint = await cli(["lint", file], { cwd: dir });
    expect(lint.code, lint.all).toBe(1);
    expect(lint.all).toMatch(/error\[instance-url\]/);
    expect(lint.all).toMatch(/rb\.yaml:8:/);
    expect(lint.all).toMatch(why);
    const run = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(run.code, run.all).toBe(2);
    expect(run.all).toMatch(/instance-url/);
    noInternalError(run.all);
  });

  it("a password from ${env.*} with # / ? in it: refused at its line, the password never printed", async () => {
    const dir = tempDir();
    const file = writeRunbook(dir, urlRunbook("http://u:${env.SYNC_PW}@127.0.0.1:27182"));
    const pw = "s3#cr/et?x";
    const run = await cli(["run", file, "--renderer", "simple"], { cwd: dir, env: { SYNC_PW: pw } });
    expect(run.code, run.all).toBe(2);
    expect(run.all).toMatch(/instance-url/);
    expect(run.all).not.toContain(pw);
    expect(run.all).not.toContain("s3#cr");
    noInternalError(run.all);
    // lint, without the secret, cannot judge the URL: no finding
    const lint = await cli(["lint", file], { cwd: dir });
    expect(lint.code, lint.all).toBe(0);
  });
});

describe("lint runs no plugin code unless asked", () => {
  const PLUGIN = `import { writeFileSync } from "node:fs";
writeFileSync(new URL("./RAN", import.meta.url), "top-level code ran\\n");
export default { name: "flags", hooks: { "flag-off": { optionsSchema: { type: "object", additionalProperties: false, properties: { flag: { type: "string", description: "the flag" } } }, run: async () => ({}) } } };
`;
  const RB = `runbook: 1
name: p
instances: [http://127.0.0.1:27182]
plugins: [./p.mjs, ./missing.mjs]
steps:
  - hook: { use: flag-off, with: { flg: x } }
`;

  it("`syncbook lint` does not import a runbook's plugin (its top-level code ran), says so, and still finds a missing one", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "p.mjs"), PLUGIN);
    const file = writeRunbook(dir, RB);
    const r = await cli(["lint", file, "--format", "json"], { cwd: dir });
    expect(existsSync(join(dir, "RAN"))).toBe(false);
    const d = (JSON.parse(r.stdout) as { diagnostics: { rule: string; severity: string; line: number }[] }).diagnostics;
    expect(d.map((x) => `${x.rule}:${x.severity}`).sort()).toEqual(["plugin-load:error", "plugin-not-loaded:info"]);
    expect(r.code).toBe(1);
  });

  it("`syncbook lint --load-plugins` imports it (the code runs, as the flag says) and checks its options", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "p.mjs"), PLUGIN);
    const file = writeRunbook(dir, RB);
    const r = await cli(["lint", file, "--format", "json", "--load-plugins"], { cwd: dir });
    expect(existsSync(join(dir, "RAN"))).toBe(true);
    const d = (JSON.parse(r.stdout) as { diagnostics: { rule: string }[] }).diagnostics;
    expect(d.map((x) => x.rule).sort()).toEqual(["plugin-load", "plugin-options"]);
  });
});

describe("item 11: the CLI ends once its command has", () => {
  it("a plugin that leaves an interval running does not keep `syncbook run` alive: it exits, and says why", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "linger.mjs"),
      "setInterval(() => {}, 1000);\nexport default { name: 'linger', hooks: { linger: async () => ({}) } };\n",
    );
    const file = writeRunbook(
      dir,
      `runbook: 1
name: linger
instances: [http://127.0.0.1:9]
plugins: [./linger.mjs]
steps:
  - { id: nap, hook: { use: linger } }
`,
    );
    const t0 = Date.now();
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stderr).toMatch(/the command finished 10s ago but something it started is still running/);
    expect(Date.now() - t0).toBeLessThan(40_000);
  }, 60_000);
});
