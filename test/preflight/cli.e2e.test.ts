/**
 * `syncbook preflight` as shipped (the built bundle, dist/cli/syncbook.cjs) against the wire-level
 * test server: lint's formats, exit codes, --list-namespaces, and no secret in any output.
 * The CLI runs as a child process, asynchronously: the test servers answer from this process.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Ajv from "ajv/dist/ajv.js";
import { lintRunbook } from "../../src/lint/index.js";
import { sarifSchema } from "../support/sarif-schema.js";
import { startFakeCluster, startShardedCluster, type FakeCluster } from "../support/mongo-wire/fake-cluster.js";
import { DEST_ROLES, PASSWORD, SOURCE_ROLES, USER, loadText, runbookText, user } from "../support/preflight.js";

const exec = promisify(execFile);
// draft-07, as the SARIF schema declares (formats are not checked: ajv-formats is not a dependency)
const validateSarif = new Ajv.default({ strict: false, allErrors: true, validateFormats: false }).compile(
  sarifSchema(),
);
const bin = join(process.cwd(), "dist/cli/syncbook.cjs");

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

async function syncbook(args: string[], env: Record<string, string>): Promise<Out> {
  try {
    const r = await exec(process.execPath, [bin, ...args], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: undefined, ...env },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Every spelling of a secret that an output format could carry. */
function spellings(secret: string): string[] {
  const xml = secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  return [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), xml, secret.replace(/%/g, "%25")];
}

function expectNoSecret(out: Out, secrets: string[]): void {
  const text = out.stdout + out.stderr;
  for (const s of secrets) for (const form of spellings(s)) expect(text).not.toContain(form);
}

describe("syncbook preflight (the built CLI)", () => {
  let src: FakeCluster;
  let dst: { mongos: FakeCluster; close(): Promise<void> };
  let dir: string;
  let env: Record<string, string>;
  let secrets: string[];

  beforeAll(async () => {
    src = await startFakeCluster({
      kind: "replicaSet",
      users: user(SOURCE_ROLES),
      databases: {
        sales: { orders: { count: 1200, size: 3_000_000, indexes: [{ name: "cust_1", key: { customerId: 1 } }] } },
        crm: { customers: { count: 7, size: 900 }, notes: { count: 1, size: 10 } },
      },
      oplog: { first: 0, last: 30 * 86_400 },
    });
    dst = await startShardedCluster({ users: user(DEST_ROLES) }, [
      { id: "shA", node: {} },
      { id: "shB", node: {} },
    ]);
    dir = mkdtempSync(join(tmpdir(), "syncbook-preflight-"));
    env = {
      SOURCE_URI: src.uri({ user: USER, password: PASSWORD }),
      DEST_URI: dst.mongos.uri({ user: USER, password: PASSWORD }),
    };
    secrets = [PASSWORD, env.SOURCE_URI!, env.DEST_URI!];
    const clean = runbookText({
      destination: "sharded",
      start: `includeNamespaces: [{ database: sales, collections: [orders] }, { database: crm, collectionsRegex: { pattern: "^cust" } }]
sharding: { shardingEntries: [{ database: sales, collection: orders, shardCollection: { key: [{ customerId: 1 }] } }] }`,
    });
    writeFileSync(join(dir, "clean.yaml"), clean);
    writeFileSync(
      join(dir, "typo.yaml"),
      clean.replace("collections: [orders]", "collections: [ordres]").replace('"^cust"', '"^Cust"'),
    );
  });
  afterAll(async () => {
    await src.close();
    await dst.close();
  });

  it("clean: exit 0, a pretty report of what was read, the namespace set on request", async () => {
    const r = await syncbook(["preflight", join(dir, "clean.yaml"), "--list-namespaces"], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("info[preflight-cluster]: `cluster0` (source): replica set `rs0`");
    expect(r.stdout).toContain("✔ preflight of 1 file: no problems (2 infos)");
    expect(r.stdout).toMatch(/crm\.customers\s+collection\s+7\s+900\n/);
    expect(r.stdout).toMatch(/sales\.orders\s+collection\s+1200\s+3000000\s+\[\{"customerId":1\}\]/);
    expectNoSecret(r, secrets);
  });

  it("--list-namespaces --format json: lint's keys plus the documented namespaces document", async () => {
    const r = await syncbook(["preflight", join(dir, "clean.yaml"), "--list-namespaces", "--format", "json"], env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(["diagnostics", "errors", "warnings", "namespaces"]);
    expect(doc.namespaces).toEqual({
      format: 1,
      source: "cluster0",
      destination: "cluster1",
      readAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      complete: true,
      totals: { collections: 2, documents: 1207, bytes: 3_000_900 },
      namespaces: [
        { database: "crm", collection: "customers", type: "collection", documents: 7, bytes: 900, shardKey: null },
        {
          database: "sales",
          collection: "orders",
          type: "collection",
          documents: 1200,
          bytes: 3_000_000,
          shardKey: [{ customerId: 1 }],
        },
      ],
    });
    expectNoSecret(r, secrets);
  });

  // issue 17, point 3: a rehearsal takes the namespace set preflight found
  it("rehearse --namespaces copies the shape preflight read; a file that is not one is a usage error", async () => {
    const r = await syncbook(["preflight", join(dir, "clean.yaml"), "--list-namespaces", "--format", "json"], env);
    const ns = join(dir, "namespaces.json");
    writeFileSync(ns, r.stdout);
    const reh = await syncbook(["rehearse", join(dir, "clean.yaml"), "--namespaces", ns, "--renderer", "simple"], env);
    expect(reh.stderr).toContain(`namespaces: 2 collection(s), 3000900 bytes, as preflight read them (${ns})`);
    expect(reh.stdout + reh.stderr).toMatch(/rehearsal/i);
    writeFileSync(join(dir, "bad.json"), "{ nope");
    const bad = await syncbook(["rehearse", join(dir, "clean.yaml"), "--namespaces", join(dir, "bad.json")], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bad.json: not JSON");
    expect(bad.stderr).toContain(
      "hint: Give the output of `syncbook preflight <runbook> --list-namespaces --format json`",
    );
  });

  it.each(["pretty", "json", "github", "junit", "sarif"])(
    "typos are errors with lines and hints in %s; exit 1; no secret",
    async (format) => {
      const r = await syncbook(["preflight", join(dir, "typo.yaml"), "--format", format], env);
      expect(r.code).toBe(1);
      expectNoSecret(r, secrets);
      const file = join(dir, "typo.yaml");
      if (format === "json") {
        const doc = JSON.parse(r.stdout);
        expect(doc.errors).toBe(3);
        expect(
          doc.diagnostics
            .filter((d: { severity: string }) => d.severity === "error")
            .map((d: { rule: string; line: number }) => `${d.rule}@${d.line}`),
        ).toEqual([
          "preflight-nothing-synced@11",
          "preflight-namespace-missing@14",
          "preflight-filter-matches-nothing@14",
        ]);
      } else if (format === "github") {
        expect(r.stdout).toContain(`::error file=${file},line=14,col=`);
        expect(r.stdout).toContain(
          "title=preflight-namespace-missing::`sales.ordres` (includeNamespaces) does not exist",
        );
      } else if (format === "sarif") {
        const log = JSON.parse(r.stdout);
        expect(validateSarif(log), JSON.stringify(validateSarif.errors)).toBe(true);
        const run = log.runs[0];
        const rules = run.tool.driver.rules.map((x: { id: string }) => x.id);
        // the preflight catalogue, not lint's rules
        expect(rules).toContain("preflight-namespace-missing");
        expect(rules).not.toContain("start-twice");
        const missing = run.results.find((x: { ruleId: string }) => x.ruleId === "preflight-namespace-missing");
        expect(missing.locations[0].physicalLocation.region.startLine).toBe(14);
      } else if (format === "junit") {
        expect(r.stdout).toContain('<testsuites name="syncbook preflight"');
        expect(r.stdout).toContain('name="preflight-filter-matches-nothing at 14:');
      } else {
        expect(r.stdout).toContain(
          "error[preflight-filter-matches-nothing]: This includeNamespaces entry matches no namespace",
        );
        expect(r.stdout).toMatch(/= hint: /);
      }
    },
  );

  it("a wrong password and an unreachable cluster: errors naming the cluster, a hint, exit 1, no secret", async () => {
    const wrong = src.uri({ user: USER, password: `${PASSWORD}x` });
    const gone = await startFakeCluster({ kind: "replicaSet" });
    const goneUri = gone.uri({ user: USER, password: PASSWORD }, { tls: "false" });
    await gone.close();
    for (const format of ["pretty", "json", "github", "junit"]) {
      const r = await syncbook(
        ["preflight", join(dir, "clean.yaml"), "--format", format, "--connect-timeout", "500ms"],
        {
          SOURCE_URI: wrong,
          DEST_URI: goneUri,
        },
      );
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("cannot connect to cluster `cluster0`: authentication failed");
      // nothing listens there any more: refused at once (issue 26), not after the timeout
      expect(r.stdout).toContain("cannot connect to cluster `cluster1`: connection refused by its host");
      expectNoSecret(r, [PASSWORD, `${PASSWORD}x`, wrong, goneUri]);
    }
  });

  it("a refused connection fails fast, not after its whole connect timeout", async () => {
    const gone = await startFakeCluster({ kind: "replicaSet" });
    const goneUri = gone.uri({ user: USER, password: PASSWORD }, { tls: "false" });
    await gone.close();
    const t0 = Date.now();
    const r = await syncbook(["preflight", join(dir, "clean.yaml"), "--connect-timeout", "60s"], {
      ...env,
      DEST_URI: goneUri,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("cannot connect to cluster `cluster1`: connection refused by its host");
    expect(r.stdout).toContain("Nothing listens at that host and port");
    expect(Date.now() - t0).toBeLessThan(30_000);
    expectNoSecret(r, [PASSWORD, goneUri]);
  });

  it("a preflight that could check nothing (no cluster has a `uri`) does not pass", async () => {
    const text = readFileSync(join(dir, "clean.yaml"), "utf8").replace(/, uri: "\$\{env\.\w+\}"/g, "");
    expect(text).not.toContain("uri:");
    writeFileSync(join(dir, "no-uri.yaml"), text);
    for (const format of ["pretty", "json", "sarif"]) {
      const r = await syncbook(["preflight", join(dir, "no-uri.yaml"), "--format", format], {});
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("preflight checked nothing: no cluster of");
      expect(r.stderr).toContain("has a `uri`");
    }
  });

  it("--max-warnings, as lint has: more warnings than allowed fail; a bad number is usage", async () => {
    // the destination without a uri: the source is checked, the destination's checks are warnings
    const text = readFileSync(join(dir, "clean.yaml"), "utf8").replace(', uri: "${env.DEST_URI}"', "");
    writeFileSync(join(dir, "half.yaml"), text);
    const free = await syncbook(["preflight", join(dir, "half.yaml")], env);
    expect(free.code).toBe(0);
    expect(free.stdout).toMatch(/warning\[preflight-not-checked\]/);
    const strict = await syncbook(["preflight", join(dir, "half.yaml"), "--max-warnings", "0"], env);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/syncbook: \d+ warnings?, more than --max-warnings 0/);
    expect((await syncbook(["preflight", join(dir, "half.yaml"), "--max-warnings", "-1"], env)).code).toBe(0);
    const bad = await syncbook(["preflight", join(dir, "half.yaml"), "--max-warnings", "some"], env);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("--max-warnings needs a whole number") });
  });

  it("usage: an unset environment variable, an unknown format, --list-namespaces with junit, a bad timeout: exit 2", async () => {
    const unset = await syncbook(["preflight", join(dir, "clean.yaml")], { SOURCE_URI: env.SOURCE_URI! });
    expect(unset.code).toBe(2);
    expect(unset.stdout).toContain("environment variable `DEST_URI` is not set");
    expect(unset.stderr).toContain("does not load, so its clusters were not checked");
    expectNoSecret(unset, secrets);
    expect((await syncbook(["preflight", join(dir, "clean.yaml"), "--format", "bogus"], env)).code).toBe(2);
    const junit = await syncbook(["preflight", join(dir, "clean.yaml"), "--list-namespaces", "--format", "junit"], env);
    expect(junit).toMatchObject({ code: 2, stderr: expect.stringContaining("hint: Use --format json") });
    const timeout = await syncbook(["preflight", join(dir, "clean.yaml"), "--connect-timeout", "soon"], env);
    expect(timeout).toMatchObject({ code: 2, stderr: expect.stringContaining("is not a duration") });
  });

  it("`syncbook lint` neither needs the environment nor loads the driver", async () => {
    const r = await syncbook(["lint", join(dir, "clean.yaml")], {});
    expect(r.code).toBe(0);
    // the driver is not in the bundle: it loads from node_modules, through runtimeImport, in preflight only
    const bundle = readdirSync(join(process.cwd(), "dist/cli")).find((n) => /^syncbook\.[0-9a-f]{12}\.cjs$/.test(n))!;
    const code = readFileSync(join(process.cwd(), "dist/cli", bundle), "utf8");
    expect(code).not.toContain("node_modules/mongodb/");
    expect(code).toMatch(/runtimeImport\)?\("mongodb"\)/);
  });
});

describe("lint: uri-literal-password", () => {
  it("accepts `${env.*}` references (whole or for the password) and a connection string without password", async () => {
    const text = runbookText().replace(
      'uri: "${env.DEST_URI}"',
      'uri: "mongodb://sync:${env.DEST_PASSWORD}@db.example/?authSource=admin"',
    );
    for (const t of [
      text,
      text.replace(/uri: "mongodb:[^"]*"/, 'uri: "mongodb://db.example/?authMechanism=MONGODB-X509"'),
    ]) {
      const loaded = await loadText(t, { SOURCE_URI: "mongodb://u:verysecret@h/", DEST_PASSWORD: "pw-123" });
      expect(lintRunbook(loaded).filter((d) => d.rule === "uri-literal-password")).toEqual([]);
    }
  });
});
