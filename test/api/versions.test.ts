/**
 * The runner's one table of the service by version (src/api/versions.ts) against the facts it
 * cites, and the places that must say the same: the format's descriptions and enums, the answer
 * schemas, the state lists. The simulator keeps its own table (src/sim/versions.ts), checked
 * against the same facts by test/sim/versions.e2e.test.ts: the two are never compared with each other.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SYNC_STATES } from "../../src/api/types.js";
import {
  ALL_STATES,
  BEHAVIOUR,
  EXAMPLES_ARE_ANSWERS,
  LIVE_UPGRADES,
  PROGRESS_FIELDS,
  SERVER,
  START_FIELDS,
  STATES,
  START_FIELD_NAMES,
  SUPPORT,
  atLeast,
  compareVersions,
  endOfLife,
  liveUpgradePublished,
  serviceAtLeast,
  startVersionProblems,
  statesOf,
  versionDependentParts,
  versionRange,
  type Cite,
} from "../../src/api/versions.js";

type Json = Record<string, unknown>;
const root = fileURLToPath(new URL("../..", import.meta.url));
const schema = (name: string): Json => JSON.parse(readFileSync(`${root}/schemas/${name}`, "utf8")) as Json;

/**
 * The documents live beside the repository (../shared/spec, as the issues cite them). Where they
 * are not there (a checkout on its own), the quotes cannot be compared with the lines: those
 * tests say so and are skipped; the tests of what each row says from its quote still run.
 */
const SPEC_DIR = fileURLToPath(new URL("../../../shared/spec/", import.meta.url));
const haveSpec = existsSync(`${SPEC_DIR}service-facts.md`) && existsSync(`${SPEC_DIR}sync-service-api.md`);
const lines = (file: Cite["file"]): string[] => readFileSync(`${SPEC_DIR}${file}`, "utf8").split("\n");

const cites: [string, Cite][] = [
  ...START_FIELDS.map((r): [string, Cite] => [`start field ${r.field}`, r.cite]),
  ...PROGRESS_FIELDS.map((r): [string, Cite] => [`progress ${r.fields.join(", ")}`, r.cite]),
  ...STATES.map((r): [string, Cite] => [`state ${r.state}`, r.cite]),
  ...Object.entries(BEHAVIOUR).map(([k, r]): [string, Cite] => [`behaviour ${k}`, r.cite]),
  ...LIVE_UPGRADES.map((r): [string, Cite] => [`live upgrade to ${r.to}`, r.cite]),
  ...Object.entries(SERVER).map(([k, r]): [string, Cite] => [`server ${k}`, r.cite]),
  ...Object.entries(SUPPORT).map(([k, r]): [string, Cite] => [`support ${k}`, r.cite]),
  ["the examples are real answers", EXAMPLES_ARE_ANSWERS],
];

describe.skipIf(!haveSpec)("every row quotes its line of the facts (../shared/spec)", () => {
  it.each(cites)("%s", (_what, cite) => {
    const line = lines(cite.file)[cite.line - 1];
    expect(line, `${cite.file}:${cite.line}`).toContain(cite.text);
  });
});

describe("every row says what its quote says", () => {
  it.each(START_FIELDS.map((r) => [r.field, r] as const))("start field %s", (field, r) => {
    expect(r.cite.text).toContain(r.cite.file === "service-facts.md" ? `\`${field}` : `| ${field} |`);
    if (r.since !== undefined) expect(r.cite.text).toContain(`| ${r.since} |`);
    else expect(r.cite.text).toMatch(/\| (—|string) \|/);
    // a value's version is the first "(x.y)" (or "(x.y default)") after it in the quote
    for (const v of r.values ?? []) {
      if (typeof v.value !== "string") continue;
      const at = r.cite.text.search(new RegExp(`${v.value}"?\``));
      expect(at, `${field}: ${v.value} is quoted`).toBeGreaterThan(0);
      expect(/\((\d+\.\d+)[ )]/.exec(r.cite.text.slice(at))?.[1], `${field}: ${v.value}`).toBe(v.since);
    }
  });
  it("enableUserWriteBlocking: removed in 1.20", () => {
    const r = START_FIELDS.find((x) => x.field === "enableUserWriteBlocking")!;
    expect(r.until).toBe("1.20");
    if (haveSpec) expect(lines(r.cite.file)[r.cite.line - 1]).toContain(`**removed in ${r.until}**`);
  });
  it.each(PROGRESS_FIELDS.map((r) => [r.fields.join(", "), r] as const))("progress %s", (_n, r) => {
    for (const f of r.fields) expect(r.cite.text).toContain(f);
    expect(r.cite.text).toContain(`| ${r.since} |`);
    // omitted where it does not apply exactly when its line of the facts says so in bold
    if (haveSpec)
      expect(r.omitted === true, "omitted").toBe(
        /\*\*(omitted|absent|only)\b/.test(lines(r.cite.file)[r.cite.line - 1]!),
      );
  });
  it("states: INITIALIZING from 1.20 (before IDLE), REVERSING after COMMITTED; the order of the facts", () => {
    expect(ALL_STATES).toEqual(["IDLE", "INITIALIZING", "RUNNING", "PAUSED", "COMMITTING", "COMMITTED", "REVERSING"]);
    for (const s of STATES) expect(s.cite.text).toContain(s.state);
    expect(STATES.find((s) => s.state === "INITIALIZING")!.since).toBe("1.20");
    expect(statesOf("1.19.3")).not.toContain("INITIALIZING");
    expect(statesOf("1.20.0")).toContain("INITIALIZING");
    expect(statesOf(undefined)).toEqual([...ALL_STATES]);
  });
  it.each(Object.entries(BEHAVIOUR))("behaviour %s", (_k, r) => {
    expect(r.cite.text).toContain(r.since);
  });
  it.each(Object.entries(SERVER))("server %s", (_k, r) => {
    expect(r.cite.text).toContain(`server below ${r.server}`);
  });
  it("the servers 1.19 dropped: sources on 4.4 (5.0 the oldest left), destinations on 6.0", () => {
    const r = BEHAVIOUR.oldServersDropped;
    expect(r.cite.text).toContain(`${r.since} dropped sources on 4.4`);
    expect(r.sourceServer).toBe("5.0");
  });
  it("the embedded verifier: replica sets from 1.9, sharded clusters from 1.10", () => {
    const r = BEHAVIOUR.embeddedVerifier;
    expect(r.cite.text).toContain(`replica sets from ${r.since}, for sharded clusters from ${r.shardedSince}`);
  });
  it("supported versions: 1.20 the oldest, every earlier one end of life; 1.22 the current release", () => {
    expect(SUPPORT.oldestSupported.cite.text).toContain(
      `${SUPPORT.oldestSupported.version} is the oldest supported release`,
    );
    expect(SUPPORT.current.cite.text).toContain(`${SUPPORT.current.version} is the current stable release`);
    expect(endOfLife("1.19.9")).toBe(true);
    expect(endOfLife("1.8")).toBe(true);
    expect(endOfLife("1.20")).toBe(false);
    expect(endOfLife("1.20.0")).toBe(false);
    expect(endOfLife("1.22.0")).toBe(false);
  });
  it("live upgrades: 1.12 → 1.13 and to 1.18 only; none to 1.20", () => {
    for (const u of LIVE_UPGRADES) expect(u.cite.text).toContain(`${u.from ? `${u.from} → ` : "to "}${u.to}`);
    expect(liveUpgradePublished("1.12.1", "1.13.0")).toBe(true);
    expect(liveUpgradePublished("1.11.0", "1.13.0")).toBe(false);
    expect(liveUpgradePublished("1.17.2", "1.18.0")).toBe(true);
    expect(liveUpgradePublished("1.9.0", "1.18.1")).toBe(true);
    expect(liveUpgradePublished("1.18.0", "1.18.1")).toBe(false);
    expect(liveUpgradePublished("1.19.0", "1.20.0")).toBe(false);
    expect(liveUpgradePublished("1.20.0", "1.21.0")).toBe(false);
    expect(liveUpgradePublished("1.10.0", "1.11.0")).toBe(false);
  });
});

describe("the places that must say the same", () => {
  const rb = schema("runbook.schema.json");
  const defs = rb.$defs as Json;
  const start = (defs.startRequest as Json).properties as Record<string, Json>;

  it("the format has every start field of the table, first-class, and x-passthrough", () => {
    expect(Object.keys(start).sort()).toEqual([...START_FIELD_NAMES, "x-passthrough"].sort());
  });
  it.each(START_FIELDS.filter((r) => r.since !== undefined || r.until !== undefined).map((r) => [r.field, r] as const))(
    "the format's description of %s gives its versions",
    (field, r) => {
      const d = String(start[field]!.description);
      expect(d).toContain(versionRange(r.since, r.until));
      for (const v of r.values ?? [])
        if (typeof v.value === "string")
          expect(d, `${field}: ${v.value}`).toContain(`\`${v.value}\` (service ${v.since}+`);
    },
  );
  it("the format's values are the table's", () => {
    const values = (f: string) =>
      START_FIELDS.find((r) => r.field === f)!
        .values!.map((v) => v.value)
        .filter((v) => typeof v === "string");
    expect(start.buildIndexes!.enum).toEqual(values("buildIndexes"));
    const ewb = (start.enableUserWriteBlocking!.anyOf as Json[])[1]!.enum as string[];
    expect([...ewb].sort()).toEqual([...values("enableUserWriteBlocking")].sort());
  });
  it("there is no collectionRegex anywhere in the format or the start-request schema", () => {
    expect(JSON.stringify(rb)).not.toMatch(/"collectionRegex"/);
    expect(JSON.stringify(schema("start-request.schema.json"))).not.toMatch(/"collectionRegex"/);
  });
  it("the start-request schema has the table's fields", () => {
    const props = (schema("start-request.schema.json").properties ?? {}) as Json;
    expect(Object.keys(props).sort()).toEqual([...START_FIELD_NAMES].sort());
  });
  it("every list of states is the table's", () => {
    expect([...SYNC_STATES]).toEqual([...ALL_STATES]);
    const step = (defs.step as Json).properties as Record<string, Json>;
    for (const kind of ["waitFor", "assert"]) {
      const st = (step[kind]!.properties as Record<string, Json>).state!;
      expect((st.anyOf as Json[])[0]!.enum, kind).toEqual([...ALL_STATES]);
    }
    const progress = (schema("progress.schema.json").$defs as Record<string, Json>).progress!;
    expect(((progress.properties as Record<string, Json>).state as Json).enum).toEqual([...ALL_STATES]);
  });
  it("the progress schema describes every field of the table with its version", () => {
    const s = schema("progress.schema.json");
    const props = ((s.$defs as Record<string, Json>).progress!.properties ?? {}) as Record<string, Json>;
    for (const r of PROGRESS_FIELDS) {
      for (const f of r.fields) {
        // a dotted field is described where its object is (source.pingLatencyMs: progress.source)
        const top = f.split(".")[0]!;
        const d = String(
          (r.topLevel ? ((s.properties as Record<string, Json>)[f] ?? {}) : (props[top] ?? {})).description,
        );
        expect(d, f).toContain(`service ${r.since}+`);
        if (f.includes(".")) expect(d, f).toContain(`\`${f.split(".").slice(1).join(".")}\``);
      }
    }
  });
});

describe("what a version has", () => {
  const body = (over: Json = {}) => ({ source: "cluster0", destination: "cluster1", ...over });
  const problems = (b: Json, v: string) =>
    startVersionProblems(b, v).map(
      (p) => `${p.kind} ${p.field}${p.value !== undefined ? `=${String(p.value)}` : ""} ${p.version}`,
    );

  it("versions compare by number, parts missing count as 0", () => {
    expect(compareVersions("1.10", "1.9")).toBeGreaterThan(0);
    expect(compareVersions("1.20", "1.20.0")).toBe(0);
    expect(atLeast("1.9.1", "1.9")).toBe(true);
    expect(atLeast("1.8.9", "1.9")).toBe(false);
    expect(atLeast("1.0", undefined)).toBe(true);
    expect(serviceAtLeast({ serviceVersion: "1.20.1" }, "1.20")).toBe(true);
    expect(serviceAtLeast({ serviceVersion: "1.19.9" }, "1.20")).toBe(false);
    expect(serviceAtLeast({}, "1.0")).toBe(false);
  });
  it("a field newer than the version; a removed field; a value newer than the version", () => {
    expect(problems(body({ skipDiskSpaceCheck: true }), "1.21.0")).toEqual(["too-new skipDiskSpaceCheck 1.22"]);
    expect(problems(body({ skipDiskSpaceCheck: true }), "1.22.0")).toEqual([]);
    expect(problems(body({ enableUserWriteBlocking: true }), "1.19.4")).toEqual([]);
    expect(problems(body({ enableUserWriteBlocking: true }), "1.20.0")).toEqual([
      "removed enableUserWriteBlocking 1.20",
    ]);
    expect(problems(body({ enableUserWriteBlocking: "destinationOnly" }), "1.10.0")).toEqual([
      "too-new enableUserWriteBlocking=destinationOnly 1.11",
    ]);
    expect(problems(body({ enableUserWriteBlocking: "none" }), "1.11.0")).toEqual([
      "too-new enableUserWriteBlocking=none 1.12",
    ]);
    expect(problems(body({ buildIndexes: "afterDataCopy" }), "1.8.0")).toEqual([
      "too-new buildIndexes=afterDataCopy 1.16",
    ]);
    expect(problems(body({ buildIndexes: "excludeHashed" }), "1.14.0")).toEqual([]);
    expect(problems(body({ buildIndexes: "excludeHashed" }), "1.13.0")).toEqual([
      "too-new buildIndexes=excludeHashed 1.14",
    ]);
    expect(problems(body({ verification: { enabled: false }, excludeNamespaces: [] }), "1.5.0")).toEqual([
      "too-new excludeNamespaces 1.6",
      "too-new verification 1.9",
    ]);
  });
  it("without a version: what depends on it, as the documentation says it", () => {
    expect(
      versionDependentParts(body({ buildIndexes: "excludeHashed", enableUserWriteBlocking: true })).map((p) => p.text),
    ).toEqual([
      'buildIndexes: "excludeHashed" (service 1.14+)',
      "enableUserWriteBlocking (service 0.9–1.19 (removed in 1.20))",
    ]);
    expect(versionDependentParts(body({ reversible: true }))).toEqual([]);
  });
});

describe("nothing else writes a version down", () => {
  // The simulator keeps its own table on purpose (see the header); preflight/docs.ts is the
  // documentation's server-support tables by service version; generated files carry the schema.
  const exempt = /^(sim\/|api\/versions\.ts$|preflight\/docs\.ts$|.*\.gen\.ts$)/;
  const files = (readdirSync(`${root}/src`, { recursive: true }) as string[])
    .map((f) => f.split("\\").join("/"))
    .filter((f) => f.endsWith(".ts") && !exempt.test(f));
  it.each(files)("src/%s compares versions only through the table", (f) => {
    const text = readFileSync(`${root}/src/${f}`, "utf8");
    // a version literal handed to a comparison, and comparisons spelt by hand
    expect(text).not.toMatch(/(atLeast|serviceAtLeast|compareVersions)\([^)]*"\d+\.\d+/);
    expect(text).not.toMatch(/compareVersions\([^)]*\)\s*[<>]/);
  });
});
