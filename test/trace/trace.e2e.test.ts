/**
 * OpenTelemetry traces of a cutover (docs/tracing.md), against a local OTLP/HTTP receiver: a
 * rehearsal exports one trace (run, steps, fan-outs with a span per request, the write-stop window,
 * decisions as events); a failed run and its `--resume` are one trace id; hooks get TRACEPARENT;
 * `syncbook report --otlp` writes the same trace from the journal; no secret in any attribute.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { traceConfig, traceProblem } from "../../src/trace/config.js";
import type { Simulator } from "../../src/sim/index.js";
import { CUTOVER, START, cli, runbookFor, sim, startCli, tempDir, writeRunbook } from "../support/run.js";
import {
  CLI_CUTOVER_DEFAULTS,
  COMMIT as CCOMMIT,
  COMMITTED as CCOMMITTED,
  DRAINED as CDRAINED,
  READY as CREADY,
  START as CSTART,
  cutoverYaml,
  fastSim,
  stopVia,
  tempDir as crashTempDir,
} from "../support/crash-harness.js";
import { rootSpanIdOf, traceIdOf } from "../../src/trace/ids.js";
import { startServer } from "../support/http-server.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- OTLP JSON
type Json = any;

interface FlatSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attrs: Record<string, unknown>;
  events: { name: string; attrs: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
}

const value = (v: Json): unknown => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
const attrsOf = (list: Json[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a: Json) => [a.key, value(a.value)]));

/** Every span of OTLP/JSON request bodies, with its resource's attributes under `resource`. */
function flatten(bodies: Json[]): { spans: FlatSpan[]; resources: Record<string, unknown>[] } {
  const spans: FlatSpan[] = [];
  const resources: Record<string, unknown>[] = [];
  for (const b of bodies)
    for (const rs of b.resourceSpans ?? []) {
      resources.push(attrsOf(rs.resource?.attributes));
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
            name: s.name,
            attrs: attrsOf(s.attributes),
            events: (s.events ?? []).map((e: Json) => ({ name: e.name, attrs: attrsOf(e.attributes) })),
            status: s.status,
          });
    }
  return { spans, resources };
}

async function receiver() {
  const bodies: Json[] = [];
  const srv = await startServer((req, _n, res) => {
    if (req.url === "/v1/traces") bodies.push(JSON.parse(req.body));
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  return { ...srv, bodies };
}

const otelEnv = (url: string, extra: Record<string, string> = {}): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  OTEL_SERVICE_NAME: "cutover-sales",
  ...extra,
});

describe("tracing is opt-in through the standard variables", () => {
  it("on with an endpoint; off without one, or with OTEL_TRACES_EXPORTER=none; grpc off, with the reason", () => {
    expect(traceConfig({})).toBeUndefined();
    expect(traceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toEqual({
      protocol: "http/protobuf",
    });
    expect(
      traceConfig({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://x/v1/traces",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      }),
    ).toEqual({ protocol: "http/json" });
    expect(
      traceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_EXPORTER: "none" }),
    ).toBeUndefined();
    const grpc = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" };
    expect(traceConfig(grpc)).toBeUndefined();
    expect(traceProblem(grpc)).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported .*: this run is not traced/);
    expect(traceProblem({ ...grpc, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" })).toMatch(
      /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc/,
    );
    expect(traceProblem({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toBeUndefined();
    expect(traceProblem({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x" })).toBeUndefined();
  });
});

// issue 39, point 8: a trace is an aid, never a reason to stop a cutover; a rehearsal is not the cutover
describe("what the OTLP variables do to a run and to a rehearsal", () => {
  let s: Simulator | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await s?.close();
    s = undefined;
    while (closers.length) await closers.pop()?.();
  });

  it("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: the run goes on untraced, with a warning that says so", async () => {
    const r = await receiver();
    closers.push(r.close);
    const dir = tempDir();
    s = await sim();
    const file = writeRunbook(dir, runbookFor(s, START));
    const res = await cli(["run", file, "--yes", "--renderer", "simple"], {
      cwd: dir,
      env: otelEnv(r.url, { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    });
    expect(res.code, res.all).toBe(0);
    expect(res.all).toContain(
      "warning: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported by syncbook's trace export: this run is not traced",
    );
    expect(r.seen.length).toBe(0);
  });

  it("rehearse exports nothing to the endpoint unless --trace asks, and says so", async () => {
    const r = await receiver();
    closers.push(r.close);
    const dir = tempDir();
    s = await sim();
    const file = writeRunbook(dir, runbookFor(s, START));
    const plain = await cli(["rehearse", file, "--renderer", "silent"], { cwd: dir, env: otelEnv(r.url) });
    expect(plain.code, plain.all).toBe(0);
    expect(plain.all).toContain(
      "rehearsal: not traced (the OTLP variables are set; pass --trace to export the rehearsal's trace)",
    );
    expect(r.seen.length).toBe(0);
    const traced = await cli(["rehearse", file, "--renderer", "silent", "--trace"], { cwd: dir, env: otelEnv(r.url) });
    expect(traced.code, traced.all).toBe(0);
    expect(r.bodies.length).toBeGreaterThan(0);
  });
});

describe("a cutover as one trace", () => {
  let s: Simulator | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await s?.close();
    s = undefined;
    while (closers.length) await closers.pop()?.();
  });

  it("a rehearsal exports one trace: run, steps, command fan-outs with a span per request, the write-stop window; no secret anywhere", async () => {
    const r = await receiver();
    closers.push(r.close);
    const dir = tempDir();
    const secret = "Tr4ce-s3cret-v4lue-77";
    s = await sim({ instances: 3 });
    const hook = `  - { id: note, hook: { use: shell, with: { command: [node, -e, "require('fs').writeFileSync('tp', process.env.TRACEPARENT || '')", "\${env.OWNER}"] } } }\n`;
    const file = writeRunbook(dir, runbookFor(s, hook + CUTOVER));
    const res = await cli(["run", file, "--yes", "--renderer", "simple"], {
      cwd: dir,
      env: otelEnv(r.url, {
        OWNER: secret,
        OTEL_RESOURCE_ATTRIBUTES: `deployment.environment=rehearsal,owner=${secret}`,
      }),
    });
    expect(res.code, res.all).toBe(0);
    const { spans, resources } = flatten(r.bodies);
    expect(new Set(spans.map((x) => x.traceId)).size).toBe(1);
    const run = spans.find((x) => x.name === "run e2e")!;
    expect(run.attrs["syncbook.outcome"]).toBe("ok");
    expect(spans.filter((x) => x.name.startsWith("step ")).map((x) => x.attrs["syncbook.step.id"])).toEqual(
      expect.arrayContaining(["note", "start", "ready", "stop-writes", "commit", "verify"]),
    );
    const fanout = spans.find((x) => x.name === "/api/v1/commit fan-out")!;
    const commits = spans.filter((x) => x.parentSpanId === fanout.spanId);
    expect(commits.map((x) => x.attrs["syncbook.instance"]).sort()).toEqual(["sync0", "sync1", "sync2"]);
    expect(
      commits.every((x) => x.attrs["http.response.status_code"] === 200 && x.attrs["syncbook.outcome"] === "ok"),
    ).toBe(true);
    const commitStep = spans.find((x) => x.name === "step commit")!;
    expect(fanout.parentSpanId).toBe(commitStep.spanId);
    expect(commitStep.events.map((e) => e.name)).toContain("interlock can-commit");
    const window = spans.find((x) => x.name === "write-stop window")!;
    expect(window.parentSpanId).toBe(run.spanId);
    expect(window.attrs["syncbook.window.closed_by"]).toBe("canWrite");
    expect(resources[0]).toMatchObject({ "service.name": "cutover-sales", "deployment.environment": "rehearsal" });
    // the hook ran under its step's span
    const tp = readFileSync(join(dir, "tp"), "utf8");
    const note = spans.find((x) => x.name === "step note")!;
    expect(tp).toBe(`00-${note.traceId}-${note.spanId}-01`);
    // no secret in any span, event or resource attribute
    const all = JSON.stringify(r.bodies);
    expect(all).not.toContain(secret);
    expect(resources[0]!.owner).toBe("***");

    // the same trace from the journal, after the fact
    const out = join(dir, "trace.json");
    const rep = await cli(["report", join(dir, ".syncbook", "e2e"), "--otlp", out], { cwd: dir });
    expect(rep.code, rep.all).toBe(0);
    const after = flatten([JSON.parse(readFileSync(out, "utf8"))]).spans;
    expect(new Set(after.map((x) => x.traceId))).toEqual(new Set([run.traceId]));
    expect(after.map((x) => x.name).sort()).toEqual(spans.map((x) => x.name).sort());
  }, 60_000);

  it("a failed run and its --resume are one trace", async () => {
    const r = await receiver();
    closers.push(r.close);
    const dir = tempDir();
    s = await sim();
    const gate =
      "  - { id: gate, hook: { use: shell, with: { command: [node, -e, \"process.exit(require('fs').existsSync('ok') ? 0 : 3)\"] } } }\n";
    const file = writeRunbook(dir, runbookFor(s, START + gate));
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir, env: otelEnv(r.url) });
    expect(first.code, first.all).toBe(1);
    const firstTrace = flatten(r.bodies).spans.find((x) => x.name === "run e2e")!;
    expect(firstTrace.status?.code).toBe(2);
    writeFileSync(join(dir, "ok"), "");
    const second = await cli(["run", file, "--resume", "--renderer", "simple"], { cwd: dir, env: otelEnv(r.url) });
    expect(second.code, second.all).toBe(0);
    const runs = flatten(r.bodies).spans.filter((x) => x.name === "run e2e");
    expect(runs).toHaveLength(2);
    expect(runs[1]!.traceId).toBe(runs[0]!.traceId);
    expect(runs[1]!.parentSpanId).toBe(runs[0]!.parentSpanId);
  }, 60_000);
});

describe("one trace, complete, however many processes died (issue 37 point 3)", () => {
  let s: Simulator | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await s?.close();
    s = undefined;
    while (closers.length) await closers.pop()?.();
  });

  it("kill -9 after some batches left, then --resume: one trace id, one root (the cutover's, with the id every run names), every span once, no orphan parent", async () => {
    const r = await receiver();
    closers.push(r.close);
    s = await fastSim({ instances: 2, timeScale: 100 });
    const dir = crashTempDir();
    const file = join(dir, "rb.yaml");
    // holds (inside the write-stop window) until the file `go` exists: the kill comes while it holds
    const hold = `  - { id: hold, hook: { use: shell, with: { command: [node, -e, "console.log('holding'); setInterval(() => { if (require('fs').existsSync('go')) process.exit(0) }, 50)"] } } }\n`;
    writeFileSync(
      file,
      cutoverYaml(s, {
        defaults: CLI_CUTOVER_DEFAULTS,
        steps: CSTART + CREADY + stopVia(s.verifierUrl) + hold + CDRAINED + CCOMMIT + CCOMMITTED,
      }),
    );
    const env = otelEnv(r.url, { OTEL_BSP_SCHEDULE_DELAY: "100" });
    const first = startCli(["run", file, "--renderer", "simple"], { cwd: dir, env });
    await first.waitFor(/holding/, 30_000);
    // some of the killed run's spans reached the collector (the steps before the hold), the rest never will
    const exportedBefore = async (): Promise<number> => {
      for (let i = 0; i < 100 && flatten(r.bodies).spans.length === 0; i++) await new Promise((x) => setTimeout(x, 50));
      await new Promise((x) => setTimeout(x, 300));
      return flatten(r.bodies).spans.length;
    };
    expect(await exportedBefore()).toBeGreaterThan(0);
    first.child.kill("SIGKILL");
    await first.done;
    const killed = flatten(r.bodies).spans;
    expect(
      killed.some((x) => x.name === "run crash"),
      "the killed run's own span left before the kill",
    ).toBe(false);
    writeFileSync(join(dir, "go"), "");
    const resumed = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir, env });
    expect(resumed.code, resumed.all).toBe(0);

    const { spans } = flatten(r.bodies);
    const journal = readFileSync(
      join(
        dir,
        ".syncbook",
        "crash",
        readdirSync(join(dir, ".syncbook", "crash")).find((f) => f.endsWith(".jsonl"))!,
      ),
      "utf8",
    );
    const cutover = (JSON.parse(journal.split("\n").find((l) => l.includes('"run.started"'))!) as { cutover: string })
      .cutover;
    // one trace
    expect(new Set(spans.map((x) => x.traceId))).toEqual(new Set([traceIdOf(cutover)]));
    // one root: the cutover's, the parent every run names
    const roots = spans.filter((x) => !x.parentSpanId);
    expect(roots.map((x) => x.name)).toEqual(["cutover crash"]);
    expect(roots[0]!.spanId).toBe(rootSpanIdOf(cutover));
    expect(roots[0]!.attrs["syncbook.runs"]).toBe(2);
    const runs = spans.filter((x) => x.name === "run crash");
    expect(runs).toHaveLength(2);
    expect(runs.every((x) => x.parentSpanId === roots[0]!.spanId)).toBe(true);
    // every span once
    const ids = spans.map((x) => x.spanId);
    expect(ids.length - new Set(ids).size, "spans exported twice").toBe(0);
    // no orphan parent
    const known = new Set(ids);
    expect(spans.filter((x) => x.parentSpanId && !known.has(x.parentSpanId)).map((x) => x.name)).toEqual([]);
    // the killed run's steps, its hold and its write-stop window are there (from the journal)
    const stepIds = spans.filter((x) => x.name.startsWith("step ")).map((x) => x.attrs["syncbook.step.id"]);
    expect(stepIds).toEqual(expect.arrayContaining(["start", "ready", "stop-writes", "hold", "commit"]));
    expect(spans.filter((x) => x.name === "hook shell").length).toBeGreaterThanOrEqual(2);
    expect(spans.some((x) => x.name === "write-stop window")).toBe(true);
    // what report --otlp builds from the journal is the same spans, with the same ids
    const out = join(dir, "trace.json");
    const rep = await cli(["report", join(dir, ".syncbook", "crash"), "--otlp", out], { cwd: dir });
    expect(rep.code, rep.all).toBe(0);
    const after = flatten([JSON.parse(readFileSync(out, "utf8"))]).spans;
    expect(new Set(after.map((x) => x.spanId))).toEqual(known);
  }, 90_000);
});
