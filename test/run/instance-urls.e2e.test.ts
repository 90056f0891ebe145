/**
 * Issue 12, item 10: "An instance URL with `${env.PW}` userinfo containing `#`, `/` or `?` printed
 * the password in an internal error; an unnamed instance whose host comes from env keys the journal
 * by `http://***:27182`, so `--resume` can never match it. Key instances by a stable identity that
 * holds no secret, and validate URLs after interpolation with a positioned error."
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { redactUrl } from "../../src/redact.js";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli } from "../support/run.js";
import {
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  cutoverYaml,
  fastSim,
  posts,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const DEFAULTS = "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 2s, retry: { giveUpAfter: 3s } }";

describe("instance URLs filled in from the environment", () => {
  it.each(["se#cret-pw", "se/cret-pw", "se?cret-pw", "p%zzsecret"])(
    "a password %s that breaks the URL: a positioned error, exit 2, the password nowhere, no journal",
    async (pw) => {
      const dir = tempDir();
      const file = join(dir, "rb.yaml");
      writeFileSync(
        file,
        `runbook: 1
name: pw
clusters:
  cluster0: { topology: replicaSet }
  cluster1: { topology: replicaSet }
instances:
  - "http://admin:\${env.PW}@127.0.0.1:9"
steps:
  - { id: ready, waitFor: { canCommit: true } }
`,
      );
      const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir, env: { PW: pw } });
      expect(r.code, r.all).toBe(2);
      expect(r.all).toMatch(/rb\.yaml:7:5/);
      expect(r.all).toMatch(/error\[instance-url\]: Instance URL `[^`]*` cannot be used: /);
      expect(r.all).not.toContain(pw);
      expect(r.all).not.toContain(encodeURIComponent(pw));
      expect(r.all).not.toContain("internal error");
      expect(readdirSync(dir)).toEqual(["rb.yaml"]);
    },
  );

  it("redactUrl hides userinfo even when it makes the URL unparseable", () => {
    expect(redactUrl("http://admin:se#cret@127.0.0.1:9")).toBe("http://***@127.0.0.1:9");
    expect(redactUrl("http://admin:a/b?c@127.0.0.1:9/x")).toBe("http://***@127.0.0.1:9/x");
  });

  it("an unnamed instance whose host is a secret: a run killed after start resumes to COMMITTED, with one start and one commit", async () => {
    s = await fastSim({ instances: 1, timeScale: 100 });
    s.control.addFault("lag-floor=30");
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    const port = new URL(s.instances[0]!.url).port;
    const yaml = cutoverYaml(s, {
      defaults: DEFAULTS,
      // the writes switch through the verifier's port: the instance's own URL is a secret here
      steps: START + READY + stopVia(s.verifierUrl) + DRAINED + COMMIT + COMMITTED,
    }).replace(/instances:\n.*\n/, `instances:\n  - "http://\${env.SYNC_HOST}:${port}"\n`);
    writeFileSync(file, yaml);
    const env = { SYNC_HOST: "127.0.0.1" };
    const run = startCli(["run", file, "--renderer", "simple"], { cwd: dir, env });
    await run.waitFor(/waiting \(ready\)/, 20_000);
    run.child.kill("SIGKILL");
    await run.done;
    s.control.clearFaults();
    const r = await cli(["run", file, "--resume", "--renderer", "simple", "--yes"], { cwd: dir, env });
    expect(r.code, r.all).toBe(0);
    expect(r.all).toContain("skipped: done in an earlier run (journal)");
    expect(posts(s, "start")).toEqual([1]);
    expect(posts(s, "commit")).toEqual([1]);
  });
});
