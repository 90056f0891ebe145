/**
 * Example progress answers of each service version (the shapes spec/service-facts.md tabulates in
 * "Progress fields, by version", values as the documentation's examples show them) replayed to the
 * client over HTTP: the client that knows the fleet's version takes each without a warning, warns
 * once when a field that version documents is missing, and every reader (lagBelow, the live UI,
 * the report) reads the field the version means.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServiceClient, type AnswerIssue, type Progress } from "../../src/api/index.js";
import { lagSeconds } from "../../src/api/progress.js";
import { atLeast, mayBeAbsent, progressField } from "../../src/api/versions.js";
import { ServiceVersionReader, declaredMismatch } from "../../src/report/service-version.js";
import { evaluate, readCondition } from "../../src/fleet/index.js";
import type { RunEvent } from "../../src/events.js";
import { buildReport, renderHtml } from "../../src/report/index.js";
import { progressFields } from "../../src/report/model.js";
import { UiModel } from "../../src/ui/model.js";
import { localServer, type LocalServer } from "../support/http-server.js";
import { snap } from "../support/snapshots.js";

type Json = Record<string, unknown>;

/** The contract's fields, in change event application. */
const BASE: Json = {
  state: "RUNNING",
  canCommit: true,
  canWrite: false,
  info: "change event application",
  lagTimeSeconds: 3,
  collectionCopy: { estimatedTotalBytes: 694315008, estimatedCopiedBytes: 694315008 },
  directionMapping: { Source: "cluster0: localhost:27017", Destination: "cluster1: localhost:27018" },
};
const IDS = { mongosyncID: "coordinator", coordinatorID: "coordinator" };
const SIDE = (phase: string) => ({
  estimatedDocumentCount: 1500,
  hashedDocumentCount: 1500,
  lagTimeSeconds: 1,
  totalCollectionCount: 12,
  scannedCollectionCount: 12,
  phase,
});

/** One answer per version: the fields that version has, in the order the facts add them. */
const ANSWERS: [version: string, answer: Json][] = [
  // before 1.3: no ids; before 1.8: "older answers have only `progress`: that is a successful answer"
  ["1.2.0", { progress: { ...BASE } }],
  ["1.3.0", { progress: { ...BASE, ...IDS } }],
  ["1.8.0", { success: true, progress: { ...BASE, ...IDS, totalEventsApplied: 5012 } }],
  [
    "1.9.0",
    {
      success: true,
      progress: {
        ...BASE,
        ...IDS,
        totalEventsApplied: 5012,
        verification: { source: SIDE("stream hashing"), destination: SIDE("stream hashing") },
      },
    },
  ],
  [
    "1.14.0",
    {
      success: true,
      progress: {
        ...BASE,
        ...IDS,
        totalEventsApplied: 5012,
        verification: { source: SIDE("stream hashing"), destination: SIDE("stream hashing") },
        estimatedSecondsToCEACatchup: 0,
      },
    },
  ],
  [
    "1.17.0",
    {
      success: true,
      progress: {
        ...BASE,
        ...IDS,
        totalEventsApplied: 5012,
        verification: { source: SIDE("stream hashing"), destination: SIDE("stream hashing") },
        estimatedSecondsToCEACatchup: 0,
        source: { pingLatencyMs: 2 },
        destination: { pingLatencyMs: 1 },
      },
    },
  ],
  [
    "1.19.0",
    {
      success: true,
      progress: {
        ...BASE,
        ...IDS,
        canCommit: false,
        totalEventsApplied: 5012,
        verification: { source: SIDE("stream hashing"), destination: SIDE("stream hashing") },
        estimatedSecondsToCEACatchup: 12,
        source: { pingLatencyMs: 2 },
        destination: { pingLatencyMs: 1 },
        indexBuilding: { indexesBuilt: 4, totalIndexesToBuild: 12, collectionsFinished: 1, collectionsTotal: 3 },
        estimatedOplogTimeRemaining: "more than 72 hours",
        warnings: ["the source oplog window is shorter than the estimated time to finish"],
      },
    },
  ],
  [
    "1.21.0",
    {
      success: true,
      progress: {
        ...BASE,
        ...IDS,
        lagTimeSeconds: 40,
        totalEventsApplied: 5012,
        verification: { source: SIDE("stream hashing"), destination: SIDE("stream hashing") },
        estimatedSecondsToCEACatchup: 0,
        source: { pingLatencyMs: 2 },
        destination: { pingLatencyMs: 1 },
        estimatedOplogTimeRemaining: "less than 15 minutes",
        lag: { overallLagSeconds: 2, crudLagSeconds: 2, ddlLagSeconds: null },
      },
    },
  ],
  [
    "1.22.0",
    {
      success: true,
      progress: {
        ...BASE,
        ...IDS,
        lagTimeSeconds: 40,
        totalEventsApplied: 5012,
        verification: { source: SIDE("stream hashing"), destination: SIDE("stream hashing") },
        estimatedSecondsToCEACatchup: 0,
        source: { pingLatencyMs: 2 },
        destination: { pingLatencyMs: 1 },
        estimatedOplogTimeRemaining: "less than 15 minutes",
        lag: { overallLagSeconds: 2, crudLagSeconds: 2, ddlLagSeconds: null },
        ceaStage: "steady state",
      },
    },
  ],
];

let answer: Json = {};
let server: LocalServer;
beforeAll(async () => {
  server = await localServer(() => ({ body: answer }));
});
afterAll(async () => {
  await server.close();
});

async function replay(version: string | undefined, body: Json): Promise<{ progress: Progress; issues: string[] }> {
  answer = body;
  const issues: string[] = [];
  const client = createServiceClient(server.url, {
    requestTimeoutMs: 5000,
    serviceVersion: version,
    onIssue: (i: AnswerIssue) => issues.push(`${i.kind} ${i.path}`),
  });
  return { progress: await client.progress(), issues };
}

const without = (body: Json, field: string): Json => {
  const { [field]: _gone, ...progress } = body.progress as Json;
  return { ...body, progress };
};

describe("each version's answer, replayed to a client of that version", () => {
  it.each(ANSWERS)("%s: taken without a warning", async (version, body) => {
    const { issues } = await replay(version, body);
    expect(issues).toEqual([]);
  });

  // every field of each version's answer, taken away in turn: reported exactly when the version documents it and
  // no real answer of that version may lack it (the contract's fields; canWrite from 1.0, lag from 1.21); never a
  // field the service omits where it does not apply, nor one a documentation example of that version lacks
  // (src/api/versions.ts `mayBeAbsent`; the corpus: test/api/docs-examples.test.ts)
  it.each(ANSWERS)(
    "%s: each field taken away is reported once exactly when no real answer may lack it",
    async (version, body) => {
      // (state is required: without it the answer is unusable, not a warning)
      for (const field of Object.keys(body.progress as Json).filter((f) => f !== "state")) {
        const row = progressField(field);
        const expected =
          row === undefined ? Object.hasOwn(BASE, field) : !mayBeAbsent(row) && atLeast(version, row.since);
        const { issues } = await replay(version, without(body, field));
        expect(issues, `${version} without ${field}`).toEqual(expected ? [`missing progress.${field}`] : []);
      }
    },
  );

  // facts: "| top-level `success` | 1.8 | older answers have only `progress`: that is a successful answer"; the
  // migration verifier's page shows a 1.7–1.13 progress answer without it (test/fixtures/docs-examples)
  it("no top-level success: never a warning, at any version", async () => {
    for (const [v, body] of ANSWERS) {
      const { success: _s, ...old } = body;
      expect((await replay(v, old)).issues, v).toEqual([]);
    }
  });

  it("a client that does not know the version warns about no later field (and takes every one)", async () => {
    for (const [version, body] of ANSWERS) expect((await replay(undefined, body)).issues, version).toEqual([]);
    // the contract's fields that every documentation example carries it still expects
    expect((await replay(undefined, without(ANSWERS[0]![1], "canWrite"))).issues).toEqual([
      "missing progress.canWrite",
    ]);
  });

  // facts: "IDLE, INITIALIZING (1.20, before RUNNING), RUNNING, PAUSED, COMMITTING, COMMITTED, REVERSING."
  it.each(["INITIALIZING", "REVERSING"])("state %s is a state the client knows", async (state) => {
    const body = ANSWERS.find(([v]) => v === "1.22.0")![1];
    const { progress, issues } = await replay("1.22.0", { ...body, progress: { ...(body.progress as Json), state } });
    expect(issues).toEqual([]);
    expect(progress.state).toBe(state);
  });

  // facts: "`estimatedCopiedBytes` may exceed `estimatedTotalBytes` (the total is an estimate)"
  it("estimatedCopiedBytes above the total is legal: no warning, the copy counts as complete, the bar stops at 100%", async () => {
    const body = ANSWERS.find(([v]) => v === "1.9.0")![1];
    const over = {
      ...body,
      progress: {
        ...(body.progress as Json),
        info: "collection copy",
        collectionCopy: { estimatedTotalBytes: 1000, estimatedCopiedBytes: 1300 },
      },
    };
    const { progress, issues } = await replay("1.9.0", over);
    expect(issues).toEqual([]);
    expect(evaluate(readCondition({ copyComplete: true }), snap([progress])).met).toBe(true);
    const ui = new UiModel();
    ui.apply({ type: "progress.sampled", seq: 1, at: 1, instance: { url: server.url, index: 0 }, progress });
    expect(ui.copyLine()).toMatch(/100%/);
  });
});

describe("every reader reads the field the version means", () => {
  // facts: "`lagTimeSeconds` deprecated from 1.21: read `lag.overallLagSeconds` when present"
  it("lag: lagTimeSeconds before 1.21, lag.overallLagSeconds from 1.21 (the deprecated field says 40)", async () => {
    for (const [version, body] of ANSWERS) {
      const { progress } = await replay(version, body);
      const want = ["1.21.0", "1.22.0"].includes(version) ? 2 : 3;
      expect(lagSeconds(progress), version).toBe(want);
      expect(evaluate(readCondition({ lagBelow: 5 }), snap([progress])).met, version).toBe(true);
      expect(progressFields(progress).lagSeconds, `report ${version}`).toBe(want);
    }
  });

  // issue 13: "`warnings[]`, `indexBuilding`, `estimatedSecondsToCEACatchup` and `pingLatencyMs` are shown in the live UI and the report when present"
  it("the live UI and the report show warnings, index builds, the CEA catch-up estimate and the ping latency", async () => {
    const { progress } = await replay("1.19.0", ANSWERS.find(([v]) => v === "1.19.0")![1]);
    const ui = new UiModel();
    ui.apply({
      type: "run.started",
      seq: 0,
      at: 0,
      runbook: "t",
      file: "t.yaml",
      hash: "",
      mode: "run",
      steps: [],
      instances: [{ url: server.url, index: 0, name: "main" }],
    } as never);
    ui.apply({
      type: "progress.sampled",
      seq: 1,
      at: 1,
      instance: { url: server.url, index: 0, name: "main" },
      progress,
    });
    const lines = ui.instanceLines().join("\n");
    expect(lines).toContain(
      "indexes indexesBuilt 4, totalIndexesToBuild 12, collectionsFinished 1, collectionsTotal 3",
    );
    expect(lines).toContain("CEA catch-up ~12s");
    expect(lines).toContain("ping 2ms");
    expect(lines).toContain("⚠ the source oplog window is shorter than the estimated time to finish");

    const r = progressFields(progress);
    expect(r.pingLatencyMs).toBe(2);
    expect(r.ceaCatchupSeconds).toBe(12);
    expect(r.indexBuilding).toEqual({
      indexesBuilt: 4,
      totalIndexesToBuild: 12,
      collectionsFinished: 1,
      collectionsTotal: 3,
    });
    expect(r.warnings).toEqual(["the source oplog window is shorter than the estimated time to finish"]);

    // the report page: a Service section with the latest values and each warning once
    const started = {
      type: "run.started",
      seq: 0,
      at: 1000,
      runbook: "t",
      file: "t.yaml",
      hash: "h",
      mode: "run",
      steps: [],
      instances: [{ url: server.url, index: 0, name: "main" }],
    };
    const sampled = (seq: number) => ({
      type: "progress.sampled",
      seq,
      at: 1000 + seq,
      instance: { url: server.url, index: 0, name: "main" },
      progress,
    });
    const html = renderHtml(buildReport([started, sampled(1), sampled(2)] as unknown as RunEvent[]));
    const section = /<section id="service-notes">.*?<\/section>/s.exec(html)?.[0] ?? "";
    expect(section).toContain("2ms");
    expect(section).toContain("12s");
    expect(section).toContain("indexesBuilt");
    expect(section.match(/the source oplog window is shorter/g)).toHaveLength(1);

    // an older answer has none of them: nothing is shown
    const old = await replay("1.8.0", ANSWERS.find(([v]) => v === "1.8.0")![1]);
    const ui2 = new UiModel();
    ui2.apply({
      type: "progress.sampled",
      seq: 1,
      at: 1,
      instance: { url: server.url, index: 0 },
      progress: old.progress,
    });
    expect(ui2.instanceLines().join("\n")).not.toMatch(/ping|CEA catch-up|indexes|⚠/);
  });
});

/**
 * Answers as the documentation's examples show them: fields the service omits where they do not
 * apply are absent (facts: "several fields are **omitted** when they do not apply: an absent field
 * is not evidence of an older service"; "The documentation's example progress answers are
 * examples of real answers: a client, a lint rule or a report must read them without a warning").
 * Shaped from the facts' table "Progress fields, by version", one per state where it differs.
 */
const P22 = ANSWERS.find(([v]) => v === "1.22.0")![1].progress as Json;
const strip = (p: Json, ...fields: string[]): Json =>
  Object.fromEntries(Object.entries(p).filter(([k]) => !fields.includes(k)));
const EXAMPLES: [name: string, version: string, answer: Json][] = [
  // 1.22, collection copy: no ceaStage, no CEA catch-up, no index builds, no warnings, no ping under 1 ms;
  // "`ddlLagSeconds` null … before any DDL event, `crudLagSeconds` null before the first CRUD timestamp"
  [
    "1.22 collection copy",
    "1.22.0",
    {
      success: true,
      progress: {
        ...strip(P22, "ceaStage", "estimatedSecondsToCEACatchup", "source", "destination", "indexBuilding"),
        canCommit: false,
        info: "collection copy",
        collectionCopy: { estimatedTotalBytes: 694315008, estimatedCopiedBytes: 10240 },
        estimatedOplogTimeRemaining: "not checked yet",
        verification: { source: SIDE("not started"), destination: SIDE("not started") },
        lag: { overallLagSeconds: 40, crudLagSeconds: null, ddlLagSeconds: null },
      },
    },
  ],
  // 1.22, change event application: ceaStage "collection copy drain", CEA catch-up omitted ("when lag has not
  // decreased"), a warning; the last ping to the destination failed (-1)
  [
    "1.22 change event application",
    "1.22.0",
    {
      success: true,
      progress: {
        ...strip(P22, "estimatedSecondsToCEACatchup"),
        ceaStage: "collection copy drain",
        destination: { pingLatencyMs: -1 },
        warnings: ["mongosync is blocking user writes on the source cluster"],
      },
    },
  ],
  // 1.22, committed: "`estimatedOplogTimeRemaining` … only in RUNNING before `canWrite` is true"; ceaStage only
  // during change event application
  [
    "1.22 committed",
    "1.22.0",
    {
      success: true,
      progress: {
        ...strip(P22, "ceaStage", "estimatedOplogTimeRemaining", "estimatedSecondsToCEACatchup", "source"),
        state: "COMMITTED",
        canCommit: false,
        canWrite: true,
        info: "commit completed",
        lagTimeSeconds: 0,
        lag: { overallLagSeconds: 0, crudLagSeconds: 0, ddlLagSeconds: null },
      },
    },
  ],
  // 1.21, paused: "`lag` null while PAUSED" (lagTimeSeconds null in PAUSED: the contract)
  [
    "1.21 paused",
    "1.21.0",
    {
      success: true,
      progress: {
        ...strip(
          ANSWERS.find(([v]) => v === "1.21.0")![1].progress as Json,
          "estimatedSecondsToCEACatchup",
          "estimatedOplogTimeRemaining",
        ),
        state: "PAUSED",
        canCommit: false,
        lagTimeSeconds: null,
        lag: null,
      },
    },
  ],
  // 1.17, copying: no ping yet, no CEA catch-up outside change event application
  [
    "1.17 collection copy",
    "1.17.0",
    {
      success: true,
      progress: {
        ...strip(
          ANSWERS.find(([v]) => v === "1.17.0")![1].progress as Json,
          "estimatedSecondsToCEACatchup",
          "source",
          "destination",
        ),
        canCommit: false,
        info: "collection copy",
      },
    },
  ],
];

describe("the documentation's example answers: every reader takes them without a warning", () => {
  it.each(EXAMPLES)("%s: the client of that version, and one that knows no version", async (_n, version, body) => {
    expect((await replay(version, body)).issues).toEqual([]);
    expect((await replay(undefined, body)).issues).toEqual([]);
  });

  it.each(EXAMPLES)("%s: the report does not take an omitted field for an older service", async (_n, version, body) => {
    const { progress } = await replay(version, body);
    const seen = new ServiceVersionReader();
    seen.add(progress);
    const below = seen.seen().below;
    if (below) expect(atLeast(version, below.version), `${version} is not before ${below.version}`).toBe(false);
    if (version === "1.22.0") expect(below).toBeUndefined();
    expect(declaredMismatch(version, seen.seen())).toBeUndefined();
    expect(atLeast(version, seen.seen().atLeast?.version ?? "0")).toBe(true);
  });

  it.each(EXAMPLES)("%s: conditions, the live UI and the report read it", async (_n, _version, body) => {
    const { progress } = await replay(_version, body);
    const p = body.progress as Json;
    expect(evaluate(readCondition({ state: p.state as never }), snap([progress])).met).toBe(true);
    const ui = new UiModel();
    ui.apply({ type: "progress.sampled", seq: 1, at: 1, instance: { url: server.url, index: 0 }, progress });
    expect(() => ui.instanceLines()).not.toThrow();
    const r = progressFields(progress);
    expect(r.state).toBe(p.state);
    expect(r.lagSeconds).toBe(lagSeconds(progress) ?? undefined);
  });

  // facts: "`source.pingLatencyMs`, `destination.pingLatencyMs` | 1.17 | **absent** when under 1 ms or not pinged
  // yet; `-1` when the last ping failed"
  it("ping: read under source and destination, the larger shown; -1 (the last ping failed) says so", async () => {
    const at17 = (await replay("1.17.0", ANSWERS.find(([v]) => v === "1.17.0")![1])).progress;
    expect(progressFields(at17).pingLatencyMs).toBe(2);
    const failed = (await replay("1.22.0", EXAMPLES[1]![2])).progress;
    expect(progressFields(failed).pingLatencyMs).toBe(-1);
    const ui = new UiModel();
    ui.apply({ type: "progress.sampled", seq: 1, at: 1, instance: { url: server.url, index: 0 }, progress: failed });
    expect(ui.instanceLines().join("\n")).toContain("ping failed");
    // a top-level pingLatencyMs is not where the service puts it: not read
    expect(progressFields({ ...at17, source: undefined, destination: undefined, pingLatencyMs: 9 }).pingLatencyMs).toBe(
      undefined,
    );
  });
});
