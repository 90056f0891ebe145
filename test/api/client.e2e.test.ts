/**
 * The service and verifier clients over real HTTP: against the simulator on loopback, and a tiny
 * local server for answer shapes the simulator never produces. Each test that checks a rule of
 * spec/sync-service-api.md or spec/service-facts.md quotes it.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  createServiceClient,
  createVerifierClient,
  ServiceError,
  TransportError,
  type AnswerIssue,
} from "../../src/api/index.js";
import { createVerifier } from "../../src/fleet/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { localServer, type LocalServer } from "../support/http-server.js";
import { frozen, RS_TO_SHARDED } from "../support/sim.js";

let sim: Simulator | undefined;
let local: LocalServer | undefined;
afterEach(async () => {
  await sim?.close();
  await local?.close();
  sim = undefined;
  local = undefined;
});

const opts = { requestTimeoutMs: 2000 };

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

describe("progress in every state", () => {
  it("IDLE, RUNNING (before and during the copy, CEA), PAUSED, COMMITTING, COMMITTED", async () => {
    sim = await frozen({ faults: ["lag-floor=10"] });
    const issues: AnswerIssue[] = [];
    const c = createServiceClient(sim.instances[0]!.url, { ...opts, onIssue: (i) => issues.push(i) });

    // "In state IDLE, all fields except `state` and `canCommit` are null."
    const idle = await c.progress();
    expect(idle.state).toBe("IDLE");
    expect(idle.canCommit).toBe(false);
    for (const [k, v] of Object.entries(idle)) if (k !== "state" && k !== "canCommit") expect(v, k).toBeNull();

    expect((await c.command("start", RS_TO_SHARDED)).answer).toEqual({ success: true });
    // "Before the collection copy phase, estimatedCopiedBytes is 0 and estimatedTotalBytes is 1."
    const pre = await c.progress();
    expect(pre).toMatchObject({
      state: "RUNNING",
      info: "collection copy",
      collectionCopy: { estimatedCopiedBytes: 0, estimatedTotalBytes: 1 },
    });

    sim.control.advance(8);
    const copying = await c.progress();
    expect(copying.state).toBe("RUNNING");
    expect(copying.collectionCopy?.estimatedCopiedBytes).toBeGreaterThan(0);

    sim.control.advance(40);
    // "The value `change event application` indicates the CEA phase."
    const cea = await c.progress();
    expect(cea).toMatchObject({ state: "RUNNING", info: "change event application", canCommit: true, canWrite: false });
    expect(cea.directionMapping?.Source).toMatch(/^cluster0: /);
    expect(cea.mongosyncID).toBe("instance-0");
    expect(cea.coordinatorID).toBe("instance-0");

    await c.command("pause", {});
    // "In state PAUSED, `lagTimeSeconds` is null."
    expect(await c.progress()).toMatchObject({ state: "PAUSED", lagTimeSeconds: null });
    await c.command("resume", {});
    expect((await c.progress()).state).toBe("RUNNING");

    sim.control.setWrites({ enabled: false });
    sim.control.advance(5);
    await c.command("commit", {});
    // "Stays in COMMITTING for the number of seconds given by lagTimeSeconds."
    expect(await c.progress()).toMatchObject({ state: "COMMITTING", lagTimeSeconds: 10 });
    sim.control.advance(11);
    expect(await c.progress()).toMatchObject({ state: "COMMITTED", canWrite: true });

    // the simulator sends every documented field: nothing to warn about
    expect(issues).toEqual([]);
  });

  it("the raw answer keeps the top level (success)", async () => {
    sim = await frozen();
    const a = await createServiceClient(sim.instances[0]!.url, opts).progressAnswer();
    expect(a.success).toBe(true);
    expect(a.progress.state).toBe("IDLE");
  });
});

describe("lenient answers", () => {
  const RUNNING = {
    state: "RUNNING",
    canCommit: true,
    canWrite: false,
    info: "change event application",
    lagTimeSeconds: 2,
    totalEventsApplied: 10,
    collectionCopy: { estimatedTotalBytes: 100, estimatedCopiedBytes: 100 },
    directionMapping: { Source: "cluster0: a:1", Destination: "cluster1: b:2" },
    mongosyncID: "m0",
    coordinatorID: "m0",
  };

  // facts: "Older documented progress examples have no `success` field at all, only `progress` (and no
  // `canWrite`): a progress body with a `progress` object and no `success` is a successful answer."
  it("accepts the older shape without success; a missing documented field is reported once per instance and field", async () => {
    const { canWrite: _dropped, ...old } = RUNNING;
    local = await localServer({ body: { progress: old } });
    const seen: string[] = [];
    const a = createServiceClient(local.url, { ...opts, onIssue: (_i, m) => seen.push(m) });
    const b = createServiceClient(`${local.url}/`, { ...opts, onIssue: (_i, m) => seen.push(`b ${m}`) });
    for (let n = 0; n < 3; n++) expect((await a.progress()).state).toBe("RUNNING");
    await b.progress();
    expect(seen).toEqual([
      `${local.url}: progress answer: no "progress.canWrite" (documented as boolean | null)`,
      `b ${local.url}: progress answer: no "progress.canWrite" (documented as boolean | null)`,
    ]);
  });

  it("keeps unknown fields (newer versions) as sent", async () => {
    local = await localServer({
      body: {
        success: true,
        progress: { ...RUNNING, state: "INITIALIZING", indexBuilding: { x: 1 }, brandNew: [1, 2] },
        extra: "kept",
      },
    });
    const c = createServiceClient(local.url, opts);
    const p = await c.progress();
    expect(p.brandNew).toEqual([1, 2]);
    expect(p.indexBuilding).toEqual({ x: 1 });
    expect((await c.progressAnswer()).extra).toBe("kept");
  });

  it("a JSON answer that is not a progress answer is a transport failure (bad-answer)", async () => {
    local = await localServer({ body: { hello: "world" } });
    const err = await rejection(createServiceClient(local.url, opts).progress());
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: "bad-answer", requestSent: true, status: 200 });
    // what came back, what it leaves, and the hint
    expect((err as Error).message).toBe(
      `${local.url}: progress failed: HTTP 200, unexpected answer (no "progress"): {"hello":"world"}; a read: nothing was changed`,
    );
    expect((err as TransportError).hint).toMatch(/not in the documented shape.*syncbook status <runbook>/);
  });

  // the answers without `success` the real verifier gives (service-facts.md; its writesOff answers
  // HTTP 200 {"error": …}), were a service to answer a command so: its excerpt, and an effect unknown
  // (never a refusal: that verifier's writesOff took effect before it answered so)
  it.each([
    [{ error: "writesOff already set" }, '{"error":"writesOff already set"}'],
    [
      { error: `failed to fetch source's cluster time: ${"x".repeat(80)}` },
      `{"error":"failed to fetch source's cluster time: xxxxxxxxxxx…`,
    ],
    [{}, "{}"],
    [[1, 2], "[1,2]"],
  ])("a command answered HTTP 200 %j: what came back, its effect unknown, the hint", async (body, shown) => {
    local = await localServer({ body });
    const out = await createServiceClient(local.url, opts).tryCommand("commit", {});
    expect(out.ok).toBe(false);
    const err = (out as { error: unknown }).error;
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: "bad-answer", requestSent: true, status: 200 });
    const fatal = Array.isArray(body) ? "answer is array, expected an object" : 'no "success"';
    expect((err as Error).message).toBe(
      `${local.url}: commit failed: HTTP 200, unexpected answer (${fatal}): ${shown}; it reached the service: whether commit took effect is unknown until progress shows it`,
    );
    expect((err as TransportError).hint).toMatch(/not in the documented shape/);
  });

  it("an answer larger than the cap is refused", async () => {
    local = await localServer({ body: { success: true, progress: { ...RUNNING, pad: "x".repeat(10_000) } } });
    const err = await rejection(createServiceClient(local.url, { ...opts, maxBodyBytes: 1000 }).progress());
    expect(err).toMatchObject({ code: "too-large" });
  });
});

describe("errors", () => {
  // "Every failing start or commit call returns success false together with an error name and a
  // detailed description." facts: "Field names: `success` (boolean), `error` (string, the error's
  // name) and `errorDescription` (string, a detailed description)."
  it("success:false is a ServiceError whose message starts with the URL and shows error and errorDescription", async () => {
    sim = await frozen();
    const url = sim.instances[0]!.url;
    const err = await rejection(createServiceClient(url, opts).command("commit", {}));
    expect(err).toBeInstanceOf(ServiceError);
    const e = err as ServiceError;
    expect(e.error).toBe("InvalidStateTransition");
    expect(e.errorDescription.length).toBeGreaterThan(0);
    expect(e.message.startsWith(`${url}: commit refused: InvalidStateTransition: `)).toBe(true);
    expect(e.message).toContain(e.errorDescription);
  });

  // "A failing progress call returns an error response with three fields: a boolean status (success),
  // an error type string and a detailed error description string." and "Progress calls can fail for
  // at least two minutes after a sync is resumed or restarted (from version 1.7.3)"
  it("a failing progress call is a ServiceError too (progress unavailable after resume)", async () => {
    sim = await frozen({ faults: ["progress-down-after-resume=120s"] });
    const c = createServiceClient(sim.instances[0]!.url, opts);
    await c.command("start", RS_TO_SHARDED);
    sim.control.advance(30);
    await c.command("pause", {});
    await c.command("resume", {});
    const err = await rejection(c.progress());
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ operation: "progress", error: "ProgressUnavailable" });
    sim.control.advance(121);
    expect((await c.progress()).state).toBe("RUNNING");
  });

  // facts: "Do not depend on a status code: read `success`."
  it("HTTP 500 with a JSON error body: a ServiceError carrying the status for the record", async () => {
    sim = await frozen({ faults: ["http500=1@0/progress"] });
    const err = await rejection(createServiceClient(sim.instances[0]!.url, opts).progress());
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ status: 500, error: "InternalError" });
  });

  it("a 502 HTML page (a proxy) is a non-JSON transport failure, with the status and the body start", async () => {
    local = await localServer({ status: 502, body: "<html><body>Bad Gateway</body></html>", contentType: "text/html" });
    const err = await rejection(createServiceClient(local.url, opts).command("commit", {}));
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: "non-json", status: 502, requestSent: true, label: "HTTP 502 non-json" });
    expect((err as TransportError).bodyStart).toContain("Bad Gateway");
  });

  // facts: "A non-JSON body is a transport failure."
  it("a non-JSON body from the simulator is a TransportError (non-json)", async () => {
    sim = await frozen({ faults: ["non-json=1@0"] });
    const c = createServiceClient(sim.instances[0]!.url, opts);
    expect(await rejection(c.progress())).toMatchObject({ kind: "transport", code: "non-json" });
    expect(await rejection(c.command("start", RS_TO_SHARDED))).toMatchObject({ code: "non-json", requestSent: true });
  });

  it("a connection reset is a TransportError (network) that may have been sent, and the command is not retried", async () => {
    sim = await frozen({ faults: ["reset=1@0/start"] });
    const c = createServiceClient(sim.instances[0]!.url, opts);
    const err = await rejection(c.command("start", RS_TO_SHARDED));
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: "network", requestSent: true });
    // commands are never retried by the client
    expect(sim.control.counts().instances[0]!["POST /api/v1/start"]).toBe(1);
  });

  it("no answer within requestTimeoutMs is a timeout", async () => {
    sim = await frozen({ faults: ["latency=2s@0"] });
    const t0 = performance.now();
    const err = await rejection(createServiceClient(sim.instances[0]!.url, { requestTimeoutMs: 200 }).progress());
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(err).toMatchObject({ code: "timeout", requestSent: true });
    expect((err as Error).message).toContain("no answer within 200ms");
  });

  it("a dead instance: connection refused, the request certainly never left", async () => {
    sim = await frozen({ instances: 2 });
    await sim.control.down(1);
    const c = createServiceClient(sim.instances[1]!.url, opts);
    const err = await rejection(c.command("commit", {}));
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: "connect", requestSent: false, sysCode: "ECONNREFUSED" });
    expect((err as TransportError).hint).toMatch(/running/);
  });

  it("the caller's signal aborts a request", async () => {
    sim = await frozen({ faults: ["latency=2s@0"] });
    const ac = new AbortController();
    const p = createServiceClient(sim.instances[0]!.url, opts).progress({ signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect(await rejection(p)).toMatchObject({ code: "aborted" });
  });
});

describe("redaction", () => {
  it("userinfo never appears in URLs or messages; it is sent as Basic auth for a proxy", async () => {
    local = await localServer({
      status: 400,
      body: { success: false, error: "Bad", errorDescription: "cannot reach mongodb://admin:hunter2@db:27017" },
    });
    const raw = `http://user:s3cret@127.0.0.1:${local.port}`;
    const c = createServiceClient(raw, opts);
    expect(c.url).toBe(`http://***@127.0.0.1:${local.port}`);
    const err = (await rejection(c.command("start", RS_TO_SHARDED))) as ServiceError;
    expect(err.message.startsWith(`http://***@127.0.0.1:${local.port}: start refused: Bad: `)).toBe(true);
    expect(err.message).not.toMatch(/s3cret|hunter2/);
    expect(err.errorDescription).toBe("cannot reach mongodb://***@db:27017");
    expect(local.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from("user:s3cret").toString("base64")}`);
  });

  it("transport errors are redacted too", async () => {
    sim = await frozen();
    await sim.control.down(0);
    const raw = sim.instances[0]!.url.replace("http://", "http://ops:pa55@");
    const err = (await rejection(createServiceClient(raw, opts).progress())) as TransportError;
    expect(err.message).not.toContain("pa55");
    expect(err.message.startsWith(sim.instances[0]!.url.replace("http://", "http://***@"))).toBe(true);
  });
});

describe("commands", () => {
  // commit: "Request body: an empty JSON object `{}` must be sent; no parameters."
  it("sends the body as JSON with its content type, to the base URL's path, and reports the send time", async () => {
    local = await localServer({ body: { success: true } });
    const before = performance.now();
    const r = await createServiceClient(`${local.url}/sync/`, opts).command("commit", {});
    expect(r).toMatchObject({ answer: { success: true }, status: 200 });
    expect(r.sentAt).toBeGreaterThanOrEqual(before);
    expect(local.requests[0]).toMatchObject({ method: "POST", path: "/sync/api/v1/commit", body: "{}" });
    expect(local.requests[0]!.headers["content-type"]).toBe("application/json");
  });

  it("refuses an unknown command without sending anything", async () => {
    local = await localServer({ body: { success: true } });
    await expect(createServiceClient(local.url, opts).command("drop" as "start", {})).rejects.toThrow(
      /unknown command/,
    );
    expect(local.requests).toHaveLength(0);
  });
});

describe("events", () => {
  // the fleet is the one producer of request/response events: the verifier of a run is the
  // client wrapped by src/fleet/verifier.ts
  it("the run's verifier emits request.sent and response.received (redacted); issues become log warnings", async () => {
    local = await localServer((path) =>
      path.endsWith("/progress")
        ? { body: { progress: { phase: "check", error: null } } }
        : { status: 400, body: { success: false, error: "E", errorDescription: "mongodb://a:b@h" } },
    );
    const events: { type: string; payload: Record<string, unknown> }[] = [];
    let ids = 0;
    const v = createVerifier({
      url: local.url,
      ...opts,
      requestId: () => ++ids,
      emit: (type, payload) => events.push({ type, payload: payload }),
    });
    await expect(v.check()).rejects.toBeInstanceOf(ServiceError);
    await v.progress();
    expect(events.map((e) => e.type)).toEqual(["request.sent", "response.received", "log"]);
    expect(events[0]!.payload).toMatchObject({
      id: 1,
      target: "verifier",
      method: "POST",
      path: "/api/v1/check",
      body: {},
    });
    expect(events[1]!.payload).toMatchObject({ id: 1, target: "verifier", ok: false, status: 400 });
    expect(JSON.stringify(events)).not.toContain("a:b@");
    expect(events[2]!.payload).toMatchObject({
      level: "warn",
      message: expect.stringContaining('no "progress.verificationStatus"'),
    });
  });
});

describe("verifier", () => {
  // facts: "`POST /api/v1/check` (body `{}`) starts checking; `POST /api/v1/writesOff` (body `{}`)
  // tells it writes have stopped ...; `GET /api/v1/progress` reports."
  it("check, writesOff and progress against the simulated verifier", async () => {
    sim = await frozen();
    const v = createVerifierClient(sim.verifierUrl, opts);
    const before = await v.progress();
    expect(before.phase).toBe("idle");
    expect(before.verificationStatus?.failedTasks).toBe(0);
    const svc = createServiceClient(sim.instances[0]!.url, opts);
    await svc.command("start", RS_TO_SHARDED);
    sim.control.advance(40);
    expect((await v.check()).answer.success).toBe(true);
    sim.control.advance(1); // the check sets itself up first (its progress waits meanwhile)
    expect((await v.progress()).phase).not.toBe("idle");
    expect((await v.writesOff()).answer.success).toBe(true);
    const counts = sim.control.counts().verifier;
    expect(counts).toMatchObject({ "POST /api/v1/check": 1, "POST /api/v1/writesOff": 1, "GET /api/v1/progress": 2 });
  });

  // facts: "A second one while the first is being handled is answered
  // `{"success":false,"error":"APIError","errorDescription":"request in progress"}`" (a check while one runs is
  // answered success and ignored: the refusal comes from a request in flight)
  it("a check while a writesOff is in flight is refused with the verifier's error", async () => {
    sim = await frozen({ faults: ["writes-off-slow=1s"] });
    const svc = createServiceClient(sim.instances[0]!.url, opts);
    await svc.command("start", RS_TO_SHARDED);
    sim.control.advance(40);
    const v = createVerifierClient(sim.verifierUrl, opts);
    await v.check();
    sim.control.advance(1);
    const inFlight = v.writesOff();
    // it holds the verifier's lock once the simulator has counted it
    while (!sim.control.counts().verifier["POST /api/v1/writesOff"]) await new Promise((r) => setTimeout(r, 10));
    const err = await rejection(v.check());
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ operation: "verifier.check", error: "APIError" });
    await inFlight;
  });

  // facts: "`writesOff` a second time answers HTTP 200 `{"error": "writesOff already set"}` with no `success`
  // field; a failure to read a cluster time answers `{"error": "failed to fetch source's cluster time: …"}` the
  // same way. An answer with a string `error` and no `success: true` is a refusal. Bad JSON: HTTP 400"
  it("a string error without success: true is a refusal (ServiceError with the verifier's text), whatever the status", async () => {
    sim = await frozen({ faults: ["writes-off-refused=connection reset by peer"] });
    const svc = createServiceClient(sim.instances[0]!.url, opts);
    await svc.command("start", RS_TO_SHARDED);
    sim.control.advance(40);
    const v = createVerifierClient(sim.verifierUrl, opts);
    await v.check();
    sim.control.advance(1);
    const first = await v.tryCommand("writesOff");
    expect(first.ok).toBe(false);
    expect(!first.ok && first.error).toBeInstanceOf(ServiceError);
    expect(!first.ok && first.error).toMatchObject({
      operation: "verifier.writesOff",
      error: "failed to fetch source's cluster time: connection reset by peer",
      status: 200,
    });
    const again = await rejection(v.writesOff());
    expect(again).toBeInstanceOf(ServiceError);
    expect((again as ServiceError).message).toBe(
      `${sim.verifierUrl}: verifier.writesOff refused: writesOff already set`,
    );

    local = await localServer({ status: 400, body: { error: "EOF" } });
    const bad = await rejection(createVerifierClient(local.url, opts).check());
    expect(bad).toMatchObject({ error: "EOF", status: 400 });
    expect(bad).toBeInstanceOf(ServiceError);
  });

  // the published verifier's handler panicking (writesOff before any check): an empty HTTP 500
  it("an empty error status is no answer (the request reached it): a TransportError, never 'accepted'", async () => {
    local = await localServer({ status: 500, body: "", contentType: "text/plain" });
    const o = await createVerifierClient(local.url, opts).tryCommand("writesOff");
    expect(o.ok).toBe(false);
    expect(!o.ok && o.error).toBeInstanceOf(TransportError);
    expect(!o.ok && o.error).toMatchObject({ code: "non-json", status: 500, requestSent: true });
  });

  // facts: "A failure to read progress answers `{"error": …}` at the top level"
  it("progress answered {error} at the top level: a ServiceError naming the verifier's text, not a malformed answer", async () => {
    sim = await frozen({ faults: ["verifier-progress-error=server selection timeout"] });
    const err = await rejection(createVerifierClient(sim.verifierUrl, opts).progress());
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ operation: "verifier.progress", error: "server selection timeout" });
  });

  // never both: webserver.go `progressEndpoint` (v0.1.6 to v0.2.1) sends `{"progress": …}` or
  // `{"error": …}`; an error beside a progress is not read as a progress to judge on
  it("progress answered an error beside its progress, or under a status other than 200: a failed read, not a progress (fails safe)", async () => {
    const passed = {
      phase: "idle",
      generation: 1,
      error: null,
      verificationStatus: {
        totalTasks: 1,
        addedTasks: 0,
        processingTasks: 0,
        failedTasks: 0,
        completedTasks: 1,
        metadataMismatchTasks: 0,
      },
    };
    for (const error of ["lost the metadata database", { code: 6 }]) {
      await local?.close();
      local = await localServer({ body: { progress: passed, error } });
      const err = await rejection(createVerifierClient(local.url, opts).progress());
      expect(err).toBeInstanceOf(ServiceError);
      expect(err).toMatchObject({
        operation: "verifier.progress",
        error: typeof error === "string" ? error : JSON.stringify(error),
        errorDescription: "an error beside progress, which the verifier never sends: not read as progress",
      });
    }
    // under another status than 200, which the verifier never sends its progress with: a failed read
    for (const status of [201, 203, 500, 503]) {
      await local?.close();
      local = await localServer({ status, body: { progress: passed } });
      const err = await rejection(createVerifierClient(local.url, opts).progress());
      expect(err).toBeInstanceOf(TransportError);
      expect(err).toMatchObject({ code: "bad-answer", status });
      expect(String((err as Error).message)).toContain(
        `HTTP ${status}, which the verifier never sends with its progress`,
      );
    }
    // a null error beside it is no error: the progress is read
    await local?.close();
    local = await localServer({ body: { progress: passed, error: null } });
    expect((await createVerifierClient(local.url, opts).progress()).phase).toBe("idle");
  });

  // facts: "The verifier has six counters, not seven"; the published source omits totalSrcBytes while 0
  it("six counters and no totalSrcBytes: no warning (recheckTasks and totalSrcBytes are optional)", async () => {
    sim = await frozen();
    const issues: string[] = [];
    const v = createVerifierClient(sim.verifierUrl, { ...opts, onIssue: (_i, m) => issues.push(m) });
    const p = await v.progress();
    expect(p.verificationStatus).not.toHaveProperty("recheckTasks");
    expect(p.generationStats).not.toHaveProperty("totalSrcBytes");
    expect(p.generation).toBe(0);
    expect(issues).toEqual([]);
  });

  // facts: "`POST /api/v1/check` (body `{}` or `{"filter": …}`)"
  it("check sends {} or {filter}; a request can have its own time limit", async () => {
    local = await localServer((path) =>
      path.endsWith("/progress") ? { body: { progress: { phase: "idle" } } } : { body: { success: true } },
    );
    const v = createVerifierClient(local.url, opts);
    await v.check();
    await v.check({ filter: { status: "open" } });
    await v.writesOff();
    expect(local.requests.map((r) => [r.path, r.body])).toEqual([
      ["/api/v1/check", "{}"],
      ["/api/v1/check", '{"filter":{"status":"open"}}'],
      ["/api/v1/writesOff", "{}"],
    ]);
    sim = await frozen({ faults: ["latency=600ms@verifier"] });
    const slow = createVerifierClient(sim.verifierUrl, { requestTimeoutMs: 100 });
    expect(await rejection(slow.progress())).toMatchObject({ code: "timeout" });
    expect((await slow.progress({ timeoutMs: 5000 })).phase).toBe("idle");
  });

  // issue 31: `{"error": {…}}` and `{"success": "false"}` were taken as accepted (the step then waited out its timeout)
  it.each([
    [{ error: { code: 13, message: "unauthorized" } }, '{"code":13,"message":"unauthorized"}'],
    [{ success: "false" }, 'not an acceptance (no "success": true): {"success":"false"}'],
    [{ success: "true" }, 'not an acceptance (no "success": true): {"success":"true"}'],
    [{ success: 1 }, 'not an acceptance (no "success": true): {"success":1}'],
    [{ success: true, error: "writesOff already set" }, "writesOff already set"],
    [{ success: true, error: { why: 1 } }, '{"why":1}'],
    [{}, 'not an acceptance (no "success": true): {}'],
    [{ ok: true }, 'not an acceptance (no "success": true): {"ok":true}'],
    [[true], 'not an acceptance (no "success": true): [true]'],
    ['"success"', 'not an acceptance (no "success": true): "success"'],
    [null, 'not an acceptance (no "success": true): null'],
  ])("a command answered %j is a refusal (ServiceError), never accepted", async (body, error) => {
    local = await localServer({ body });
    const o = await createVerifierClient(local.url, opts).tryCommand("writesOff");
    expect(o.ok).toBe(false);
    expect(!o.ok && o.error).toBeInstanceOf(ServiceError);
    expect(!o.ok && o.error).toMatchObject({ error, status: 200 });
  });

  it("success: true with error null is accepted; an empty 2xx answer is no answer (TransportError), never accepted", async () => {
    local = await localServer((path) =>
      path.endsWith("/check") ? { body: { success: true, error: null } } : { body: "", contentType: "text/plain" },
    );
    const v = createVerifierClient(local.url, opts);
    expect((await v.check()).answer).toEqual({ success: true, error: null });
    const o = await v.tryCommand("writesOff");
    expect(o.ok).toBe(false);
    expect(!o.ok && o.error).toBeInstanceOf(TransportError);
    expect(!o.ok && o.error).toMatchObject({ code: "non-json", status: 200, requestSent: true });
  });

  it("an undocumented progress answer is read leniently (issues said), with the JSON content type", async () => {
    local = await localServer((path) =>
      path.endsWith("/progress")
        ? { body: { progress: { phase: "check", error: null } } }
        : { body: { success: true } },
    );
    const issues: string[] = [];
    const v = createVerifierClient(local.url, { ...opts, onIssue: (_i, m) => issues.push(m) });
    expect((await v.check()).answer).toEqual({ success: true });
    expect((await v.progress()).phase).toBe("check");
    expect(issues).toEqual([
      `${local.url}: verifier.progress answer: no "progress.verificationStatus" (documented as object)`,
    ]);
    expect(local.requests[0]!.headers["content-type"]).toBe("application/json");
  });
});
