/**
 * Every example answer the documentation publishes (the corpus: test/support/docs-examples.ts,
 * each fixture copied from its source file with repository, path and commit), read at every
 * version it was published for, by every reader: the client that knows that version (no "missing
 * field" warning), a run of that version (its `waitFor`s and the commit interlocks, over HTTP),
 * `syncbook status`, and the report (no "a service before …" for the version that published it).
 * Service facts: "The documentation's example progress answers are examples of real answers: a
 * client, a lint rule or a report must read them without a warning."
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServiceClient,
  createVerifierClient,
  type AnswerIssue,
  type CommandOperation,
} from "../../src/api/index.js";
import { PROGRESS_FIELDS, atLeast, mayBeAbsent } from "../../src/api/versions.js";
import type { RunEvent } from "../../src/events.js";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import { buildReport, renderHtml, verifierFields } from "../../src/report/index.js";
import { ServiceVersionReader, declaredMismatch, describeVersionSeen } from "../../src/report/service-version.js";
import { runRunbook } from "../../src/run/runner.js";
import { readStatus } from "../../src/run/status.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";
import { DOCS_EXAMPLES, exampleAnswer, exampleName, type DocsExample } from "../support/docs-examples.js";
import { localServer, type LocalServer } from "../support/http-server.js";

type Json = Record<string, unknown>;

const ofKind = (kind: DocsExample["kind"]) => DOCS_EXAMPLES.filter((e) => e.kind === kind);
/** Each example at each version it was published for. */
const atVersions = (kind: DocsExample["kind"]): [string, string, DocsExample][] =>
  ofKind(kind).flatMap((e) => e.versions.map((v): [string, string, DocsExample] => [exampleName(e), v, e]));
/** `1.9` → `1.9.0`: the runbook's form of a version. */
const full = (v: string): string => (v.split(".").length === 2 ? `${v}.0` : v);

/** What the stand-in answers: per path, the example (or the published operation answer). */
let answers: Record<string, unknown> = {};
let server: LocalServer;
const dirs: string[] = [];
beforeAll(async () => {
  server = await localServer((path) => ({ body: answers[path] ?? { success: false, error: "NotFound" } }));
});
afterAll(async () => {
  await server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SUCCESS = exampleAnswer(DOCS_EXAMPLES.find((e) => e.file === "success.json")!);

describe("the corpus", () => {
  it("holds every kind of published answer, each from a named repository, path and commit", () => {
    expect(new Set(DOCS_EXAMPLES.map((e) => e.kind))).toEqual(new Set(["progress", "operation", "verifier-progress"]));
    for (const e of DOCS_EXAMPLES) {
      expect(e.sources.length, e.file).toBeGreaterThan(0);
      for (const s of e.sources) expect(s.commit, `${e.file} ${s.ref}`).toMatch(/^[0-9a-f]{40}$/);
      expect(() => exampleAnswer(e), e.file).not.toThrow();
    }
    // every command's answer: start, commit, pause, resume and reverse include success.json
    expect(new Set(ofKind("operation").flatMap((e) => e.commands ?? []))).toEqual(
      new Set(["start", "commit", "pause", "resume", "reverse"]),
    );
  });

  // the table's marks against the corpus, both ways: a field a real answer of its version may lack is
  // marked (never expected, never evidence), and a field marked as lacking from an example is lacking from one
  it("a versioned progress field is marked `may be absent` exactly when an example of a version that has it lacks it", () => {
    const progress = ofKind("progress");
    const lacks = (field: string, since: string, topLevel: boolean): boolean =>
      progress.some((e) => {
        const a = exampleAnswer(e);
        const at = topLevel ? a : (a.progress as Json);
        return e.versions.some((v) => atLeast(v, since)) && !has(at, field);
      });
    for (const row of PROGRESS_FIELDS) {
      if (row.omitted) continue; // omitted where it does not apply: the facts' bold word, checked in versions.test.ts
      const lacking = row.fields.some((f) => lacks(f, row.since, row.topLevel === true));
      expect(mayBeAbsent(row), `${row.fields.join(", ")} (${row.since})`).toBe(lacking);
    }
  });
});

function has(obj: unknown, dotted: string): boolean {
  let at: unknown = obj;
  for (const k of dotted.split(".")) {
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, k)) return false;
    at = (at as Json)[k];
  }
  return true;
}

describe("each progress example at each version that published it", () => {
  it.each(atVersions("progress"))(
    "%s at %s: the client of that version takes it without a warning",
    async (_n, v, e) => {
      answers = { "/api/v1/progress": exampleAnswer(e) };
      const issues: string[] = [];
      const client = createServiceClient(server.url, {
        requestTimeoutMs: 5000,
        serviceVersion: full(v),
        onIssue: (i: AnswerIssue, message) => issues.push(message),
      });
      const p = await client.progress();
      expect(p.state).toBe("RUNNING");
      expect(issues).toEqual([]);
    },
  );

  // a client that knows no version expects what every example from 1.0 carries (canWrite came with 1.0)
  it.each(
    ofKind("progress")
      .filter((e) => e.versions.some((v) => atLeast(v, "1.0")))
      .map((e) => [exampleName(e), e]),
  )("%s: a client that knows no version takes it without a warning", async (_n, e) => {
    answers = { "/api/v1/progress": exampleAnswer(e) };
    const issues: string[] = [];
    const client = createServiceClient(server.url, {
      requestTimeoutMs: 5000,
      onIssue: (_i, message) => issues.push(message),
    });
    await client.progress();
    expect(issues).toEqual([]);
  });

  it.each(atVersions("progress"))(
    '%s at %s: the report reads it as that version (never "a service before" it)',
    (_n, v, e) => {
      const seen = new ServiceVersionReader();
      seen.add((exampleAnswer(e) as { progress: Json }).progress);
      const s = seen.seen();
      if (s.below) expect(atLeast(v, s.below.version), `${v} is not before ${s.below.version}`).toBe(false);
      expect(atLeast(v, s.atLeast?.version ?? "0")).toBe(true);
      expect(declaredMismatch(full(v), s)).toBeUndefined();
    },
  );

  it.each(atVersions("progress"))(
    "%s at %s: a run of that version waits on it, commits through the interlocks, and reports it without a warning",
    async (_n, v, e) => {
      const answer = exampleAnswer(e);
      const p = answer.progress as Json;
      answers = { "/api/v1/progress": answer, "/api/v1/commit": SUCCESS };
      // the documentation's cutover, step 1: canCommit true, lag near 0, and both embedded verifier sides in
      // stream hashing with their lag near 0 where the example has them
      const waits = [
        "  - waitFor: { state: RUNNING, canCommit: true, lagBelow: 5, info: change event application, copyComplete: true }",
        ...(p.canWrite !== undefined ? ["  - waitFor: { canWrite: false }"] : []),
        ...(p.verification !== undefined
          ? ['  - waitFor: { verification: { phase: "stream hashing", lagBelow: 5 } }']
          : []),
      ];
      const yaml = `runbook: 1
name: docs-example
serviceVersion: "${full(v)}"
clusters:
  cluster0: { topology: replicaSet }
  cluster1: { topology: replicaSet }
instances:
  - { url: "${server.url}", name: example }
writesStoppedExternally: true
defaults: { pollInterval: 20ms, timeout: 5s, requestTimeout: 2s }
steps:
${waits.join("\n")}
  - commit: {}
`;
      const loaded = await parseRunbook(yaml, "docs-example.yaml", { env: {} });
      expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
      const events: RunEvent[] = [];
      const before = server.requests.length;
      const result = await runRunbook({
        loaded,
        registry,
        listeners: [(x) => void events.push(x)],
        print: () => undefined,
      });
      expect(result.exitCode, result.message).toBe(0);
      expect(events.filter((x) => x.type === "log" && x.level === "warn")).toEqual([]);
      const interlocks = events.filter((x) => x.type === "decision" && x.kind === "interlock");
      expect(interlocks.map((x) => x.type === "decision" && [x.check, x.ok])).toContainEqual(["can-commit", true]);
      expect(
        server.requests
          .slice(before)
          .filter((r) => r.method === "POST")
          .map((r) => r.path),
      ).toEqual(["/api/v1/commit"]);
      const report = buildReport(events);
      expect(report.record.serviceVersionMismatch).toBeUndefined();
      const below = report.record.serviceVersionSeen?.below;
      if (below) expect(atLeast(v, below.version)).toBe(false);
      const html = renderHtml(report);
      expect(html).not.toMatch(/a service before/);
      expect(describeVersionSeen(report.record.serviceVersionSeen), "the record's line").toBeDefined();
    },
  );

  it.each(ofKind("progress").map((e) => [exampleName(e), e]))("%s: `syncbook status` reads it", async (_n, e) => {
    const answer = exampleAnswer(e);
    answers = { "/api/v1/progress": answer };
    const dir = mkdtempSync(join(tmpdir(), "syncbook-docs-"));
    dirs.push(dir);
    const file = join(dir, "rb.yaml");
    const text = `runbook: 1\nname: docs-status\nserviceVersion: "${full(e.versions.at(-1)!)}"\ninstances:\n  - "${server.url}"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    writeFileSync(file, text);
    const loaded = await parseRunbook(text, file, { env: {} });
    const status = await readStatus(loaded, { journalDir: join(dir, ".syncbook") });
    const p = answer.progress as Json;
    expect(status.instances[0]).toMatchObject({
      reachable: true,
      state: "RUNNING",
      canCommit: true,
      canWrite: p.canWrite ?? null,
      lagSeconds: 0,
    });
    expect(status.copy).toMatchObject({ copiedBytes: 694, totalBytes: 694, percent: 100 });
  });
});

describe("each command's published answer", () => {
  const calls = ofKind("operation").flatMap((e) =>
    (e.commands ?? []).flatMap((c) =>
      e.versions.map((v): [string, string, string, DocsExample] => [exampleName(e), c, v, e]),
    ),
  );
  it.each(calls)("%s: %s at %s is a success, without a warning", async (_n, command, v, e) => {
    answers = { [`/api/v1/${command}`]: exampleAnswer(e) };
    const issues: string[] = [];
    const client = createServiceClient(server.url, {
      requestTimeoutMs: 5000,
      serviceVersion: full(v),
      onIssue: (_i, message) => issues.push(message),
    });
    const op = command as CommandOperation;
    const out = await client.tryCommand(op, op === "start" ? { source: "cluster0", destination: "cluster1" } : {});
    expect(out.ok).toBe(true);
    expect(issues).toEqual([]);
  });
});

describe("the verifier's published progress examples", () => {
  it.each(ofKind("verifier-progress").map((e) => [exampleName(e), e]))(
    "%s: the client, the report and `syncbook status` read it without a warning",
    async (_n, e) => {
      const answer = exampleAnswer(e);
      const p = answer.progress as Json;
      answers = { "/api/v1/progress": answer };
      const issues: string[] = [];
      const client = createVerifierClient(server.url, {
        requestTimeoutMs: 5000,
        onIssue: (_i, message) => issues.push(message),
      });
      const read = await client.progress();
      expect(issues).toEqual([]);
      expect(read.phase).toBe(p.phase);
      const fields = verifierFields(read);
      expect(fields.phase).toBe(p.phase);
      expect(fields.counters).toMatchObject(p.verificationStatus as Json);

      const dir = mkdtempSync(join(tmpdir(), "syncbook-docs-"));
      dirs.push(dir);
      const text = `runbook: 1\nname: docs-verifier\ninstances:\n  - "http://127.0.0.1:9"\nverifier: "${server.url}"\nsteps:\n  - verify: {}\n`;
      const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
      const status = await readStatus(loaded, { journalDir: join(dir, ".syncbook"), requestTimeoutMs: 2000 });
      expect(status.verifier).toMatchObject({ reachable: true, phase: p.phase });
      expect(status.verifier?.counters).toMatchObject(p.verificationStatus as Json);
      expect(JSON.stringify(status.verifier)).not.toMatch(/missing|documented as/);
    },
  );
});
