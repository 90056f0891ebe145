/**
 * `syncbook rehearse` runs the runbook against an in-process simulator "shaped like the runbook"
 * (src/rehearse): the runbook's own instances and verifier — the real fleet — must receive no
 * request at all, whatever their URLs look like. Instance URLs that carry credentials
 * (`http://user:${env.X}@host:port`, the connection-string form ARCHITECTURE allows) included.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.js";
import { cli } from "../support/run.js";
import { tempDir } from "../support/crash-harness.js";

const sims: Simulator[] = [];
afterAll(async () => {
  await Promise.all(sims.map((x) => x.close()));
});

function runbook(real: Simulator, creds: boolean): string {
  const at = (url: string, user: string): string =>
    creds ? url.replace("http://", `http://${user}:\${env.SB_SECRET}@`) : url;
  return `runbook: 1
name: isolation
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: sharded, shards: 2, serverVersion: "6.0" }
  cluster1: { topology: sharded, shards: 2, serverVersion: "6.0" }
instances:
${real.instances.map((i) => `  - { url: "${at(i.url, "ops")}", name: sync${i.index} }`).join("\n")}
verifier: "${at(real.verifierUrl, "verifier")}"
defaults: { pollInterval: 50ms, timeout: 30m, requestTimeout: 2s, retry: { giveUpAfter: 2s } }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED, timeout: 1h } }
`;
}

async function rehearseAgainst(creds: boolean): Promise<void> {
  const real = await startSimulator({
    instances: 2,
    data: "1GiB",
    timeScale: 100,
    clusters: { cluster0: { topology: "sharded", shards: 2 }, cluster1: { topology: "sharded", shards: 2 } },
  });
  sims.push(real);
  const dir = tempDir("syncbook-isolation-");
  const file = join(dir, "rb.yaml");
  writeFileSync(file, runbook(real, creds));
  const r = await cli(["rehearse", file, "--renderer", "simple", "--time-scale", "200", "--data", "1GiB"], {
    cwd: dir,
    env: { SB_SECRET: "s3cret-for-isolation" },
  });
  const counts = real.control.counts();
  const where = `${r.all}\nreal fleet: ${JSON.stringify(real.control.state().instances.map((i) => i.state))}, requests ${JSON.stringify(counts)}`;
  expect(counts.instances, where).toEqual([{}, {}]);
  expect(counts.verifier, where).toEqual({});
  expect(r.code, where).toBe(0);
  expect(r.stdout, where).toMatch(/ {2}committed: +COMMITTED on all 2 instance/);
}

describe("syncbook rehearse never touches the runbook's real fleet", () => {
  it("plain instance URLs", () => rehearseAgainst(false));

  // a regression test: URLs were once rewritten by substring replacement of their origin
  // (`http://127.0.0.1:port`), which a URL with userinfo (`http://ops:***@127.0.0.1:port`) does
  // not contain, so the rehearsal kept the real URLs and POSTed start to the real fleet
  it("instance and verifier URLs with user:password@", () => rehearseAgainst(true));
});
