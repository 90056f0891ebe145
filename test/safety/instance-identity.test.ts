/**
 * Issue 40, point 1: one answer to "are these two instance URLs one service?"
 * (src/instance-identity.ts), held against every one of its askers with every spelling. A check
 * that keeps runs or entries apart (the fleet lock, lint's duplicates, wave lint) reads two
 * loopback spellings at one port ("maybe") as one service; a check that a run goes on with its
 * fleet (`--resume`, the report joining runs, `--only`) reads them as another: each refuses
 * rather than lets through.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { isLoopbackHost, sameService, serviceKey, type Sameness } from "../../src/instance-identity.js";
import { instanceLockName } from "../../src/journal/fleet-lock.js";
import { reconcile } from "../../src/journal/reconcile.js";
import { buildReport } from "../../src/report/index.js";
import { instanceTargets } from "../../src/run/plan.js";
import type { Runbook } from "../../src/runbook/types.js";
import { lintWave } from "../../src/wave/lint.js";
import { lintYaml } from "../support/lint.js";
import { RB, state } from "../support/reconcile-fixtures.js";

/** Every spelling the issue names, each pair with what it is. */
const PAIRS: [string, string, Sameness, string][] = [
  ["http://sync.example:27182", "http://SYNC.EXAMPLE:27182", "same", "case"],
  ["http://sync.example", "http://sync.example:80", "same", "http's default port"],
  ["https://sync.example", "https://sync.example:443/", "same", "https' default port, trailing slash"],
  ["http://sync.example:27182/", "http://sync.example:27182", "same", "trailing slash"],
  ["http://sync.example:27182/base//", "http://sync.example:27182/base", "same", "trailing slashes of a path"],
  ["http://admin:pw@sync.example:27182", "http://sync.example:27182", "same", "user info"],
  ["http://sync.example.:27182", "http://sync.example:27182", "same", "a trailing dot"],
  ["http://127.0.0.1:27182", "http://127.0.0.1:27182/", "same", "loopback, trailing slash"],
  ["http://LOCALHOST:27182", "http://localhost:27182/", "same", "localhost's case"],
  ["http://localhost:27182", "http://127.0.0.1:27182", "maybe", "localhost and 127.0.0.1"],
  ["http://127.0.0.2:27182", "http://127.0.0.1:27182", "maybe", "127.0.0.0/8"],
  ["http://127.1:27182", "http://127.0.0.1:27182", "same", "127.1 is 127.0.0.1 to the URL parser"],
  ["http://[::1]:27182", "http://localhost:27182", "maybe", "[::1] and localhost"],
  ["http://sync0.localhost:27182", "http://127.0.0.1:27182", "maybe", "*.localhost"],
  ["http://u:p@sync1.LOCALHOST:27182/", "http://[::1]:27182", "maybe", "*.localhost, user info, case"],
  ["http://[::ffff:127.0.0.1]:27182", "http://localhost:27182", "maybe", "IPv4-mapped 127.0.0.1"],
  ["http://0.0.0.0:27182", "http://127.0.0.1:27182", "maybe", "0.0.0.0 reaches this machine"],
  ["http://localhost:27182", "http://localhost:27183", "different", "another port"],
  ["http://127.0.0.1:27182", "https://127.0.0.1:27182", "different", "another scheme"],
  ["http://sync.example:27182/a", "http://sync.example:27182/b", "different", "another path"],
  ["http://a.example:27182", "http://b.example:27182", "different", "another host"],
  ["http://localhost.example.com:27182", "http://localhost:27182", "different", "not a .localhost name"],
  ["http://127.0.0.1.nip.io:27182", "http://127.0.0.1:27182", "different", "a DNS name, not loopback"],
  ["http://10.0.0.1:27182", "http://127.0.0.1:27182", "different", "a LAN address"],
];

const alike = (s: Sameness): boolean => s !== "different";

describe("the one answer (src/instance-identity.ts)", () => {
  it.each(PAIRS)("%s and %s: %s (%s)", (a, b, want) => {
    expect(sameService(a, b)).toBe(want);
    expect(sameService(b, a)).toBe(want);
    // the key that keeps runs apart is shared exactly when the answer is not "different"
    expect(serviceKey(a) === serviceKey(b)).toBe(alike(want));
  });

  it("a text that is no http(s) URL has no key and is only ever itself", () => {
    expect(serviceKey("${env.URL}")).toBeUndefined();
    expect(serviceKey("mongodb://h:1")).toBeUndefined();
    expect(sameService("${env.URL}", "${env.URL}")).toBe("same");
    expect(sameService("${env.URL}", "${env.OTHER}")).toBe("different");
  });

  it("loopback hosts, as the URL parser writes them", () => {
    for (const h of ["localhost", "sync.localhost", "127.0.0.1", "127.255.0.9", "[::1]", "::1", "0.0.0.0", "[::]"])
      expect(isLoopbackHost(h), h).toBe(true);
    expect(isLoopbackHost(new URL("http://[::ffff:127.0.0.1]").hostname)).toBe(true);
    for (const h of ["localhost.example", "128.0.0.1", "[::2]", "10.0.0.1", "127.0.0.1.nip.io"])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe("the askers that keep runs and entries apart read 'maybe' as one service", () => {
  it.each(PAIRS)("the fleet lock: %s and %s share a lock unless different", (a, b, want) => {
    expect(instanceLockName(a) === instanceLockName(b)).toBe(alike(want));
  });

  it.each(PAIRS)("lint's instance-duplicate: %s and %s (%s)", async (a, b, want) => {
    const { rules } = await lintYaml(
      `runbook: 1\nname: dup\nserviceVersion: "1.22.0"\ninstances:\n  - ${JSON.stringify(a)}\n  - ${JSON.stringify(b)}\nsteps:\n  - start: { source: a, destination: b }\n`,
    );
    const dup = rules.filter((d) => d.rule === "instance-duplicate");
    expect(dup.length, JSON.stringify(dup)).toBe(alike(want) ? 1 : 0);
    if (want === "maybe")
      expect(dup[0]?.message).toMatch(/two spellings of this machine at one port may be one service/);
    if (want === "same") expect(dup[0]?.message).not.toMatch(/two spellings/);
  });

  const dir = mkdtempSync(join(tmpdir(), "syncbook-identity-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it.each(PAIRS)("wave lint's wave-shared-instance: %s and %s (%s)", async (a, b, want) => {
    const k = Math.random().toString(36).slice(2);
    const rb = (name: string, url: string): string =>
      `runbook: 1\nname: ${name}\nserviceVersion: "1.22.0"\ninstances:\n  - ${JSON.stringify(url)}\nsteps:\n  - start: { source: a, destination: b }\n`;
    writeFileSync(join(dir, `a-${k}.yaml`), rb("one", a));
    writeFileSync(join(dir, `b-${k}.yaml`), rb("two", b));
    const wave = join(dir, `wave-${k}.yaml`);
    writeFileSync(wave, `wave: 1\nname: w\nmaxParallel: 2\nrunbooks:\n  - a-${k}.yaml\n  - b-${k}.yaml\n`);
    const r = await lintWave(wave);
    expect(r.diagnostics.filter((d) => d.rule === "wave-shared-instance").length).toBe(alike(want) ? 1 : 0);
  });
});

describe("the askers that check a run goes on with its fleet read 'maybe' as another service", () => {
  it.each(PAIRS)("--resume: the journal's %s, the runbook's %s (%s)", (a, b, want) => {
    const s = state(["ok", "cut"], [], { instances: [{ key: "i0", url: a }] });
    const r = reconcile(s, RB, [{ instance: "i0", url: b, state: "RUNNING" }]);
    expect(r.ok, JSON.stringify(r)).toBe(want === "same");
    if (!r.ok) expect(r.message).toMatch(/not those the journal's run used/);
  });

  it.each(PAIRS)("the report joining runs: %s, then %s (%s)", (a, b, want) => {
    const started = (seq: number, url: string): RunEvent =>
      ({
        type: "run.started",
        seq,
        at: 1000 + seq,
        runbook: "rb",
        file: "rb.yaml",
        mode: seq === 0 ? "run" : "resume",
        instances: [{ url, index: 0 }],
        steps: [],
      }) as unknown as RunEvent;
    const report = buildReport([started(0, a), started(1, b)]);
    const told = report.warnings.filter((w) => /not known to be one service/.test(w));
    expect(told.length).toBe(want === "same" ? 0 : 1);
    expect(report.warnings.join("\n")).not.toMatch(/admin:pw|u:p@/);
  });

  it.each(PAIRS)("--only: the runbook's %s, picked as %s (%s)", (a, b, want) => {
    const runbook = {
      instances: [a, "http://other.example:1"],
      steps: [{ id: "commit", commit: {} }],
    } as unknown as Runbook;
    if (want === "same") expect(instanceTargets(runbook, [b], "commit")).toEqual([0]);
    else expect(() => instanceTargets(runbook, [b], "commit")).toThrow(/no such instance/);
  });
});
