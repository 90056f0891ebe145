/**
 * Issue 39, point 4: rehearsals and CI without real secrets. A rehearsal swaps hooks and notifiers
 * for stand-ins, so an `${env.*}` only they use is not asked for (and the rehearsal says which it
 * stood in for); one the rehearsal uses as written still is, with a hint that says why lint (which
 * leaves every `${env.*}` unresolved) cannot see it. Run as CI runs it: the variables unset.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";

const RUNBOOK = (extra = "") => `runbook: 1
name: secrets-in-hooks
serviceVersion: "1.22.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "7.0" }
  cluster1: { topology: replicaSet, serverVersion: "7.0" }
instances:
  - { url: "https://sync.example.com:27182", name: sync0 }
verifier: "https://verifier.example.com:27020"
vars:
  flagToken: "\${env.FLAG_TOKEN}"
defaults: { pollInterval: 50ms, timeout: 2m }
notify:
  - { use: webhook, on: [run.finished], with: { url: "\${env.ALERT_WEBHOOK}" } }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: check, startVerification: {} }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - id: stop-writes
    stopWrites:
      use: http
      with: { method: PUT, url: "https://flags.example.com/w", headers: { Authorization: "Bearer \${vars.flagToken}" }, body: { enabled: false } }
      undo: { use: http, with: { method: PUT, url: "https://flags.example.com/w", headers: { Authorization: "Bearer \${env.FLAG_TOKEN}" }, body: { enabled: true } } }
  - { id: drained, waitFor: { canCommit: true, lagBelow: 3 } }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED } }
  - { id: verify, verify: {} }
  - { id: page, notify: { use: chat, with: { url: "\${env.CHAT_WEBHOOK}", text: "done" } } }
${extra}`;

function write(text: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "syncbook-secrets-"));
  const file = join(dir, "cutover.yaml");
  writeFileSync(file, text);
  return { dir, file };
}

// the variables are unset, as in a CI job without secrets
const run = (args: string[], dir: string) => {
  for (const v of ["FLAG_TOKEN", "ALERT_WEBHOOK", "CHAT_WEBHOOK"]) expect(process.env[v], v).toBeUndefined();
  return cli(args, { cwd: dir });
};

describe("a rehearsal without the secrets only hooks and notifiers use", () => {
  it("lint: 0 errors; rehearse: safe, naming what it stood in for, and never reaching the real hosts", async () => {
    const { dir, file } = write(RUNBOOK());
    const lint = await run(["lint", file], dir);
    expect(lint.code, lint.all).toBe(0);
    const r = await run(["rehearse", file, "--renderer", "simple"], dir);
    expect(r.code, r.all).toBe(0);
    expect(r.all).toContain(
      "rehearsal: not set, and not needed (only hooks or notifiers the rehearsal stands in for use them): ALERT_WEBHOOK, CHAT_WEBHOOK, FLAG_TOKEN",
    );
    expect(r.all).toMatch(/rehearsal verdict: SAFE/);
    expect(r.all).not.toContain("flags.example.com/w answered");
  }, 60_000);

  it("a variable the rehearsal uses as written (a when:, a waitFor) is still required, with a hint that says why lint passed", async () => {
    const { dir, file } = write(RUNBOOK('  - { id: late, sleep: 1s, when: "${env.FLAG_TOKEN}" }\n'));
    const lint = await run(["lint", file], dir);
    expect(lint.code, lint.all).toBe(0);
    const r = await run(["rehearse", file], dir);
    expect(r.code).toBe(2);
    expect(r.all).toContain("environment variable `FLAG_TOKEN` is not set");
    expect(r.all).toContain("`syncbook lint` leaves every ${env.*} unresolved");
    const v = write(RUNBOOK('  - { id: lag, assert: { lagBelow: "${vars.flagToken}" } }\n'));
    const rv = await run(["rehearse", v.file], v.dir);
    expect(rv.code).toBe(2);
    expect(rv.all).toContain(
      "`vars.flagToken` is `${env.FLAG_TOKEN}`, and environment variable `FLAG_TOKEN` is not set",
    );
  }, 60_000);

  it("--keep-hooks runs the runbook's own hooks: their variables are required again (notifiers still are not)", async () => {
    const { dir, file } = write(RUNBOOK());
    const r = await run(["rehearse", file, "--keep-hooks"], dir);
    expect(r.code).toBe(2);
    expect(r.all).toContain(
      "`vars.flagToken` is `${env.FLAG_TOKEN}`, and environment variable `FLAG_TOKEN` is not set",
    );
    expect(r.all).toContain("environment variable `FLAG_TOKEN` is not set");
    expect(r.all).not.toContain("`ALERT_WEBHOOK` is not set");
    expect(r.all).not.toContain("`CHAT_WEBHOOK` is not set");
  }, 60_000);

  // issue 39, point 8: silent means silent; the stand-ins' lines are the renderer's to show
  it("--renderer silent prints no stand-in line; simple does", async () => {
    const { dir, file } = write(RUNBOOK());
    const silent = await run(["rehearse", file, "--renderer", "silent"], dir);
    expect(silent.code, silent.all).toBe(0);
    expect(silent.all).not.toMatch(/not sent/);
    const simple = await run(["rehearse", file, "--renderer", "simple"], dir);
    expect(simple.all).toMatch(/notification through chat not sent/);
  }, 60_000);

  it("run (not a rehearsal) still requires every variable", async () => {
    const { dir, file } = write(RUNBOOK());
    const r = await run(["run", file, "--dry-run"], dir);
    expect(r.code).toBe(2);
    for (const v of ["FLAG_TOKEN", "ALERT_WEBHOOK", "CHAT_WEBHOOK"]) expect(r.all).toContain(`\`${v}\` is not set`);
  });
});
