/**
 * Lint gates every start field and value on `serviceVersion`, from the one table of the service
 * by version (src/api/versions.ts), and its version-dependent rules follow the version. Each test
 * quotes the line of spec/service-facts.md it checks ("start body, by version").
 */
import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/diagnostics.js";
import { fileURLToPath } from "node:url";
import { COMMIT, READY, STOP, lintFile, lintYaml, notAside } from "../support/lint.js";

/** A runbook of one replica set to another at `version` (none: no serviceVersion), with `start` fields added. */
function at(version: string | undefined, start: string, opts: { source?: string; steps?: string } = {}): string {
  return `runbook: 1
name: t
${version === undefined ? "" : `serviceVersion: "${version}"\n`}clusters:
  cluster0: { topology: replicaSet, serverVersion: "${opts.source ?? "7.0"}" }
  cluster1: { topology: replicaSet, serverVersion: "7.0" }
instances: [http://127.0.0.1:27182]
verifier: http://127.0.0.1:27020
steps:
  - start:
      source: cluster0
      destination: cluster1
${start
  .split("\n")
  .filter(Boolean)
  .map((l) => `      ${l}`)
  .join("\n")}
${opts.steps ?? READY + STOP + COMMIT}`;
}

async function lint(yaml: string): Promise<{ loader: Diagnostic[]; rules: Diagnostic[] }> {
  return lintYaml(yaml);
}
const ids = (ds: readonly Diagnostic[], severity?: string): string[] =>
  ds.filter((d) => severity === undefined || d.severity === severity).map((d) => d.rule);

describe("every start field and value, gated on serviceVersion", () => {
  // "| `buildIndexes` | 1.3 | `beforeDataCopy` (default), `never` (1.3); `excludeHashed` (1.14); `afterDataCopy`, `excludeHashedAfterCopy` (1.16)"
  it("buildIndexes: afterDataCopy at 1.8 is an error; excludeHashed (1.14) is a value the format accepts", async () => {
    const old = await lint(at("1.8.0", "buildIndexes: afterDataCopy"));
    expect(old.loader).toEqual([]);
    const f = old.rules.find((d) => d.rule === "version-feature");
    expect(f?.message).toBe("buildIndexes `afterDataCopy` needs service 1.16 or newer; serviceVersion is `1.8.0`.");
    expect(f?.hint).toContain("At 1.8.0: `beforeDataCopy`, `never`");
    expect(ids((await lint(at("1.16.0", "buildIndexes: afterDataCopy"))).rules, "error")).toEqual([]);

    const hashed = await lint(at("1.14.0", "buildIndexes: excludeHashed"));
    expect(hashed.loader).toEqual([]);
    expect(ids(hashed.rules, "error")).toEqual([]);
    expect(ids((await lint(at("1.13.2", "buildIndexes: excludeHashed"))).rules, "error")).toEqual(["version-feature"]);
  });

  // "`enableUserWriteBlocking` | 0.9 | boolean; strings `"destinationOnly"` (1.11), `"sourceAndDestination"` (= true) and `"none"` (= false) (1.12); … **removed in 1.20**"
  it("enableUserWriteBlocking: its strings by version, and an error from 1.20", async () => {
    expect(ids((await lint(at("1.10.0", "enableUserWriteBlocking: destinationOnly"))).rules, "error")).toEqual([
      "version-feature",
    ]);
    expect(ids((await lint(at("1.11.0", "enableUserWriteBlocking: destinationOnly"))).rules, "error")).toEqual([]);
    expect(ids((await lint(at("1.11.0", "enableUserWriteBlocking: none"))).rules, "error")).toEqual([
      "version-feature",
    ]);
    const gone = await lint(at("1.20.0", "enableUserWriteBlocking: true"));
    const f = gone.rules.find((d) => d.rule === "version-feature");
    expect(f?.severity).toBe("error");
    expect(f?.message).toMatch(
      /enableUserWriteBlocking was removed from start in service 1\.20; serviceVersion is `1\.20\.0`\. Never send it to a 1\.20\+ service/,
    );
  });

  // facts: "| `copyInNaturalOrder` | 1.16 | **array of documents**, each a database and its collections:
  // `[{ database, collections: [...] }]` [start page]"
  it("copyInNaturalOrder: a boolean is an error at the field", async () => {
    const r = await lint(at("1.16.0", "copyInNaturalOrder: true"));
    expect(r.loader.length).toBeGreaterThan(0);
    expect(r.loader[0]!.message).toMatch(/copyInNaturalOrder|array/);
  });

  // "| `preExistingDestinationData` | 1.15 | boolean" … "| `skipDiskSpaceCheck` | 1.22 | boolean"
  it.each([
    ["preExistingDestinationData: false", "1.15"],
    ["copyInNaturalOrder: [{ database: sales, collections: [orders] }]", "1.16"],
    ["detectRandomId: true", "1.18"],
    ["skipDiskSpaceCheck: true", "1.22"],
    ["verification: { enabled: false }", "1.9"],
    ["excludeNamespaces: [{ database: tmp }]", "1.6"],
  ])("%s is first-class from %s, an error before", async (field, since) => {
    const ok = await lint(at(`${since}.0`, field));
    expect(ok.loader).toEqual([]);
    expect(ids(ok.rules, "error")).toEqual([]);
    const [major, minor] = since.split(".").map(Number) as [number, number];
    const before = await lint(at(`${major}.${minor - 1}.9`, field));
    expect(before.loader).toEqual([]);
    expect(ids(before.rules, "error")).toEqual(["version-feature"]);
    expect(before.rules.find((d) => d.rule === "version-feature")?.message).toContain(
      `needs service ${since} or newer`,
    );
  });

  it("a boolean option that is not a boolean is a schema error, with its version in the hint", async () => {
    const r = await lint(at("1.22.0", "skipDiskSpaceCheck: yes please"));
    expect(r.loader.map((d) => d.message)).toEqual([
      "`skipDiskSpaceCheck`: expected a boolean, got string `yes please`",
    ]);
    expect(r.loader[0]?.hint).toContain("service 1.22+");
  });

  it("without serviceVersion: one warning that says what the documentation says", async () => {
    const r = await lint(at(undefined, "buildIndexes: excludeHashed\nenableUserWriteBlocking: true\nreversible: true"));
    expect(r.loader).toEqual([]);
    const w = r.rules.filter((d) => d.rule === "service-version-missing");
    expect(w).toHaveLength(1);
    expect(w[0]?.severity).toBe("warning");
    expect(w[0]?.message).toContain('buildIndexes: "excludeHashed" (service 1.14+)');
    expect(w[0]?.message).toContain("enableUserWriteBlocking (service 0.9–1.19 (removed in 1.20))");
    expect(w[0]?.message).toContain("before 1.20 it needs enableUserWriteBlocking on source and destination");
    // and nothing is gated that lint cannot know
    expect(ids(r.rules, "error")).toEqual([]);
  });
});

// facts, "Supported versions": "1.20 is the oldest supported release; all earlier ones are end of life [release
// notes index]. 1.22 is the current stable release (2026-09-09)"
describe("an end-of-life service version", () => {
  const eol = (ds: readonly Diagnostic[]) => ds.filter((d) => d.rule === "service-version-eol");
  it("before 1.20: one warning, at the serviceVersion field, with a hint; however many starts", async () => {
    const yaml = at("1.19.9", "", {
      steps: READY + STOP + COMMIT + "  - start: { source: cluster0, destination: cluster1 }\n",
    });
    const r = await lint(yaml);
    expect(r.loader).toEqual([]);
    const w = eol(r.rules);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ severity: "warning", line: 3, column: 17 });
    expect(w[0]?.message).toBe(
      "serviceVersion `1.19.9` is end of life: 1.20 is the oldest supported release, and every earlier one is end of life (release notes index); the current release is 1.22.",
    );
    expect(w[0]?.hint).toContain("Upgrade every instance to a supported release (1.22 is the current one)");
    expect(w[0]?.hint).toContain("No live upgrade to 1.20 is published");
    for (const v of ["1.0", "1.8", "1.8.0", "1.12.3", "1.19"])
      expect(eol((await lint(at(v, ""))).rules), v).toHaveLength(1);
  });
  it("1.20 and later, or no serviceVersion: none", async () => {
    for (const v of ["1.20", "1.20.0", "1.21.4", "1.22.0", "2.0.0"])
      expect(eol((await lint(at(v, ""))).rules), v).toEqual([]);
    expect(eol((await lint(at(undefined, ""))).rules)).toEqual([]);
  });
});

describe("version-dependent rules follow the version", () => {
  // "before 1.20 `reversible` needed it on source and destination; **removed in 1.20**"
  it("reversible needs write blocking only before 1.20; from 1.20 the field itself is the error", async () => {
    expect(ids((await lint(at("1.19.0", "reversible: true"))).rules, "error")).toEqual([
      "reversible-needs-write-blocking",
    ]);
    expect(ids((await lint(at("1.19.0", "reversible: true\nenableUserWriteBlocking: true"))).rules, "error")).toEqual(
      [],
    );
    expect(ids((await lint(at("1.20.0", "reversible: true"))).rules, "error")).toEqual([]);
    expect(ids((await lint(at("1.22.0", "reversible: true\nenableUserWriteBlocking: true"))).rules, "error")).toEqual([
      "version-feature",
    ]);
  });

  // "from 1.17 `afterDataCopy` is the default for sources on server 6.0+, and `canCommit` then waits for the index builds"
  it("the afterDataCopy default from 1.17 for a 6.0+ source is an info; not before 1.17, not for a 5.0 source", async () => {
    const info = (yaml: string) => lint(yaml).then((r) => r.rules.filter((d) => d.rule === "build-indexes-after-copy"));
    expect(await info(at("1.17.0", ""))).toHaveLength(1);
    expect((await info(at("1.17.0", "")))[0]?.message).toMatch(/canCommit` waits for the index builds/);
    expect(await info(at("1.16.0", ""))).toHaveLength(0);
    expect(await info(at("1.17.0", "", { source: "5.0" }))).toHaveLength(0);
    expect(await info(at("1.17.0", "buildIndexes: beforeDataCopy"))).toHaveLength(0);
    expect(await info(at("1.16.0", "buildIndexes: excludeHashedAfterCopy"))).toHaveLength(1);
  });

  // "| `verification: { enabled }` | 1.9 | embedded verifier, on by default; with `buildIndexes: never` and TTL collections it fails the migration"
  it("buildIndexes never with the embedded verifier on is a warning (from 1.9, unless it is turned off)", async () => {
    const warn = (yaml: string) => lint(yaml).then((r) => ids(r.rules.filter(notAside), "warning"));
    // (and, on 1.9–1.16, the commit with no wait for stream hashing: its own fixture)
    expect(await warn(at("1.9.0", "buildIndexes: never"))).toEqual([
      "build-indexes-never-verifier",
      "commit-without-stream-hashing-wait",
    ]);
    expect(await warn(at("1.8.0", "buildIndexes: never"))).toEqual([]);
    expect(await warn(at("1.9.0", "buildIndexes: never\nverification: { enabled: false }"))).toEqual([]);
  });
});

describe("the format", () => {
  // facts: "There is no `collectionRegex`." … "a misspelt collection selector silently widens an exclude to the whole database"
  it("collectionRegex is an error with 'did you mean collectionsRegex' and why it matters", async () => {
    const r = await lint(at("1.8.0", "excludeNamespaces: [{ database: sales, collectionRegex: { pattern: '^tmp' } }]"));
    expect(r.loader.map((d) => d.message)).toEqual([
      "`collectionRegex` is not a filter entry field; did you mean `collectionsRegex`?",
    ]);
    expect(r.loader[0]?.hint).toMatch(/whole database/);
    const ok = await lint(
      at("1.8.0", "excludeNamespaces: [{ database: sales, collectionsRegex: { pattern: '^tmp' } }]"),
    );
    expect(ok.loader).toEqual([]);
    expect(ids(ok.rules)).not.toContain("regex-field-name");
  });

  // "All of these are top-level fields of the start body"
  it("an x-passthrough field that the format knows is an error; an unknown one is an info", async () => {
    const r = await lint(at("1.22.0", "x-passthrough: { skipDiskSpaceCheck: true, futureOption: 3 }"));
    expect(r.rules.filter((d) => d.severity !== "info" && notAside(d)).map((d) => `${d.rule}: ${d.message}`)).toEqual([
      "passthrough-collision: x-passthrough field `skipDiskSpaceCheck` is a field the format knows; it would bypass its checks.",
    ]);
    expect(ids(r.rules, "info")).toContain("passthrough-unchecked");
  });
});

describe("canWrite on a multi-instance fleet", () => {
  const fleet = (cond: string) => `runbook: 1
name: t
serviceVersion: "1.22.0"
clusters:
  cluster0: { topology: sharded, shards: 2, serverVersion: "6.0" }
  cluster1: { topology: sharded, shards: 2, serverVersion: "7.0" }
instances: [http://127.0.0.1:27182, http://127.0.0.1:27183]
verifier: http://127.0.0.1:27020
steps:
  - start: { source: cluster0, destination: cluster1 }
${READY}${STOP}  - commit: {}
  - waitFor: ${cond}
  - waitFor: { state: COMMITTED }
`;
  // facts, "Not published": "Which configuration controls write blocking from 1.20, and its default on the source:
  // assume source writes are **not** blocked; stopping application writes stays the runbook's job."
  it("a 1.20+ commit still needs its stopWrites: the service's write blocking is not assumed to cover the source", async () => {
    for (const version of ["1.20.0", "1.22.0"]) {
      const r = await lint(at(version, "", { steps: READY + COMMIT }));
      expect(ids(r.rules, "error"), version).toContain("commit-without-stop-writes");
      expect(ids((await lint(at(version, "", { steps: READY + STOP + COMMIT }))).rules, "error"), version).toEqual([]);
    }
  });

  // facts, Multiple instances [multiple mongosyncs page]: "A sharded source runs either **one** instance connected
  // through mongos (no `--id`, no `replicaSet` option) or one instance per source shard (`--id <shardId>`)"; and the
  // corrections: "A sharded source may use **one** instance (connected through mongos, without `--id`) or one per
  // shard. Neither is a mistake."
  it("a sharded source through one instance (mongos) is not warned about; two instances for three shards are", async () => {
    const one = await lintFile(
      fileURLToPath(new URL("../fixtures/instances/sharded-through-mongos.yaml", import.meta.url)),
    );
    expect(one.loader).toEqual([]);
    // (the afterDataCopy default's info note at 1.22 is no warning)
    expect(ids(one.rules.filter((d) => d.severity !== "info"))).toEqual([]);
    const two = one.text.replace(
      "instances:\n  - http://127.0.0.1:27182\n",
      "instances:\n  - http://127.0.0.1:27182\n  - http://127.0.0.1:27183\n",
    );
    expect(two).not.toBe(one.text);
    const d = (await lint(two)).rules.filter((x) => x.rule === "instance-count");
    expect(d.map((x) => x.message)).toEqual([
      "Source `cluster0` has 3 shards but 2 instances are listed: a sharded source runs one instance per source shard, or one instance through mongos.",
    ]);
  });

  // the cutover page (mongodb/docs content/mongosync/current/source/reference/cutover-process.txt): "If you are
  // running multiple mongosync instances, only check that canWrite is true on the first mongosync process. The
  // canWrite status of any subsequent mongosync processes is not valid." Not published: which process is first;
  // the runbook says so (`startedFirst: true` on the instance listed first), or no canWrite is read
  it("canWrite needs a declared first process on a fleet of several; `on` does not change whose value is read", async () => {
    for (const cond of ["{ canWrite: true }", "{ canWrite: true, on: coordinator }", "{ canWrite: true, on: any }"]) {
      const d = (await lint(fleet(cond))).rules.filter((x) => x.rule === "can-write-no-first-process");
      expect(
        d.map((x) => [x.severity, x.line]),
        cond,
      ).toEqual([["error", 14]]);
      expect(d[0]?.message).toBe(
        "This waitFor reads canWrite, but only the first mongosync process's canWrite is valid (the others' \"is not valid\"), and none of the 2 instances is declared the first process the operator starts (`startedFirst: true` on the instance listed first): it could never hold, and after commit it would keep application writes stopped until its timeout.",
      );
      const declared = fleet(cond).replace(
        "instances: [http://127.0.0.1:27182, http://127.0.0.1:27183]",
        "instances: [{ url: http://127.0.0.1:27182, startedFirst: true }, http://127.0.0.1:27183]",
      );
      expect(ids((await lint(declared)).rules, "error"), cond).toEqual([]);
    }
    // `expect` on the canWrite path is the same field
    const byPath = (await lint(fleet("{ expect: [{ path: canWrite, equals: true }] }"))).rules;
    expect(ids(byPath, "error")).toEqual(["can-write-no-first-process"]);
    // the first process is the instance listed first: marking another is an error
    const second = fleet("{ state: COMMITTED }").replace(
      "instances: [http://127.0.0.1:27182, http://127.0.0.1:27183]",
      "instances: [http://127.0.0.1:27182, { url: http://127.0.0.1:27183, startedFirst: true }]",
    );
    expect(ids((await lint(second)).rules, "error")).toEqual(["started-first-not-first"]);
  });
});
