/**
 * Issue 12, item 7, through the built CLI: "A whole-value `${env.R}` placeholder is always a
 * string, so `retries: "${env.R}"` lints clean and fails only after start was sent. … judge every
 * option before the first request; 'a runbook with errors never reaches the fleet' must hold for
 * run-time values too." And item 6 for `--var`.
 */
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, posts, runbookFor, sim, START, tempDir, totalRequests, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const steps = (url: string) =>
  `${START}  - { id: call, hook: { use: http, with: { url: "${url}/sim/state", method: GET, retries: "\${env.R}" } } }\n`;

describe("run-time values are judged before the first request", () => {
  it("retries: ${env.R} with R=three: lint passes (it cannot know), run stops before anything is sent", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, steps(s.instances[0]!.url)));
    const lint = await cli(["lint", file], { cwd: dir, env: { R: "three" } });
    expect(lint.code, lint.all).toBe(0);

    const r = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir, env: { R: "three" } });
    expect(r.code, r.all).toBe(2);
    expect(r.all).toMatch(/option `retries` must be integer\n\s+--> .*rb\.yaml:13:107/);
    expect(r.all).toContain("nothing was sent");
    expect(totalRequests(s)).toBe(0);
  });

  it("retries: ${env.R} with R=2: the hook gets the number and the run goes on", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, steps(s.instances[0]!.url)));
    const r = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir, env: { R: "2" } });
    expect(r.code, r.all).toBe(0);
    expect(posts(s, "start")).toEqual([1]);
    // R is one character: it cannot be redacted, and the run said so before it began
    expect(r.all).toMatch(/secret-too-short/);
  });

  // issue 12, item 9: "Short secrets (under 3 characters) are never redacted: warn at lint that they cannot be protected."
  it("syncbook lint warns about a secret too short to redact, from its length alone", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, `${START}  - { id: say, notify: "pw \${env.PW}" }\n`));
    const r = await cli(["lint", file], { cwd: dir, env: { PW: "x9" } });
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(/warning\[secret-too-short\]: `\$\{env\.PW\}` is 2 characters long/);
    expect(r.all).not.toContain("x9");
    expect((await cli(["lint", file, "--max-warnings", "0"], { cwd: dir, env: { PW: "x9" } })).code).toBe(1);
    expect((await cli(["lint", file], { cwd: dir, env: { PW: "long-enough" } })).all).not.toMatch(/secret-too-short/);
  });

  // a runbook's name is its journal folder's name on disk (`.syncbook/<name>/`, which CI uploads)
  // and is in every report and page: a secret there cannot be redacted
  it("name: sales-${env.TENANT} is refused by run, --dry-run, rehearse and lint: nothing sent, nothing written, the secret nowhere", async () => {
    s = await sim();
    const dir = tempDir();
    const secret = `Tenant7s3cret${Date.now().toString(36)}`;
    const yaml = runbookFor(s, START).replace("name: e2e\n", () => 'name: "sales-${env.TENANT}"\n');
    const file = writeRunbook(dir, yaml);
    const env = { TENANT: secret };
    const outputs: string[] = [];
    for (const args of [
      ["run", file, "--yes"],
      ["run", file, "--dry-run"],
      ["rehearse", file],
    ]) {
      const r = await cli([...args, "--renderer", "simple"], { cwd: dir, env });
      outputs.push(r.all);
      // exit 2, as every runbook the loader refuses
      expect(r.code, r.all).toBe(2);
      expect(r.all).toMatch(/error\[secret-in-name\]: `\$\{env\.TENANT\}` in `name`.*journal folder's name on disk/);
      expect(r.all).toMatch(/--> .*rb\.yaml:2:14/);
      expect(r.all).not.toMatch(/\[schema\]/);
    }
    const lint = await cli(["lint", file], { cwd: dir, env });
    outputs.push(lint.all);
    expect(lint.code, lint.all).toBe(1);
    expect(lint.all).toMatch(/error\[secret-in-name\]/);
    expect(lint.all).not.toMatch(/\[schema\]/);
    expect(totalRequests(s)).toBe(0);
    // no journal folder, no report: nothing beside the runbook
    expect(readdirSync(dir)).toEqual(["rb.yaml"]);
    for (const out of outputs) expect(out).not.toContain(secret.slice(6));
  });

  it("--var __proto__=x is a usage error, not a variable", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START));
    const r = await cli(["run", file, "--dry-run", "--var", "__proto__=x"], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.all).toMatch(/"__proto__" is not a variable name/);
  });
});
