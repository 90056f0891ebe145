/**
 * Bad input (issue #3): "A test throws a few thousand random methods, paths, headers and bodies
 * at every endpoint: no crash, a JSON error answer, the state unchanged." Seeded, so a failure
 * reproduces; the clock is frozen, so "unchanged" means byte-for-byte the same progress.
 * The verifier answers as its published source does (plain-text 404/405 from its web framework,
 * `{"error": …}` for bad bodies, and it accepts any JSON object as a check), so it gets its own
 * blast, with bodies it refuses.
 */
import { connect } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mulberry32, type Random } from "../../src/sim/prng.js";
import type { Simulator } from "../../src/sim/index.js";
import { RS_TO_SHARDED, broadcast, call, frozen, progress, verifierProgress } from "../support/sim.js";

const SEED = 20241123;
const PER_STATE = 1600;

const pick = <T>(r: Random, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const METHODS = [
  "GET",
  "POST",
  "PUT",
  "DELETE",
  "PATCH",
  "HEAD",
  "OPTIONS",
  "FOO",
  "PROPFIND",
  "PURGE",
  "M-SEARCH",
  "LINK",
  "post",
  "TRACE",
];
const PATHS = [
  "/api/v1/start",
  "/api/v1/commit",
  "/api/v1/pause",
  "/api/v1/resume",
  "/api/v1/reverse",
  "/api/v1/progress",
  "/api/v1/check",
  "/api/v1/writesOff",
  "/api/v1/progress?verbose=1&x=%00",
  "/api/v1/start/",
  "/API/V1/START",
  "//api/v1/commit",
  "/api/v1/../v1/start",
  "/api/v1/%2e%2e/start",
  "/api/v1/st%61rt",
  "/api/v2/start",
  "/",
  "/api",
  "/%F0%9F%92%A5",
  "/api/v1/progress%00",
  "/sim", // the control index (GET only: it changes nothing)
];

function randomString(r: Random, max: number): string {
  const n = Math.floor(r() * max);
  let s = "";
  for (let i = 0; i < n; i++)
    s += String.fromCharCode(r() < 0.8 ? 32 + Math.floor(r() * 95) : Math.floor(r() * 0xd7ff));
  return s;
}

function randomJson(r: Random, depth = 0): unknown {
  const k = Math.floor(r() * (depth > 3 ? 6 : 9));
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return pick(r, [0, -1, 1e308, -0.5, 2 ** 53 + 1, 123]);
    case 3:
    case 4:
      return randomString(r, 20);
    case 5:
      return pick(r, ["cluster0", "cluster1", "never", "hashed", "sourceAndDestination"]);
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomJson(r, depth + 1));
    default: {
      // Never the empty object: `{}` is a valid commit/check body, and this test must change nothing.
      const o: Record<string, unknown> = {};
      const keys = [
        "source",
        "destination",
        "sharding",
        "reversible",
        "includeNamespaces",
        "excludeNamespaces",
        "buildIndexes",
        "enableUserWriteBlocking",
        "verification",
        "__proto__",
        "constructor",
        "x",
      ];
      for (let i = 0; i < 1 + Math.floor(r() * 4); i++) o[pick(r, keys)] = randomJson(r, depth + 1);
      return o;
    }
  }
}

/** A start body that looks right but is always invalid (so IDLE stays IDLE). */
function brokenStart(r: Random): unknown {
  const b: Record<string, unknown> = structuredClone(RS_TO_SHARDED);
  const breakers: (() => void)[] = [
    () => (b.unknownField = randomJson(r)),
    () => (b.source = pick(r, [1, null, "", "clusterX", ["cluster0"]])),
    () => delete b.destination,
    () => delete b.sharding,
    () => (b.buildIndexes = pick(r, ["always", 1, ""])),
    () => (b.reversible = pick(r, ["true", 1, null])),
    () =>
      (b.includeNamespaces = pick(r, [
        [],
        [{}],
        [{ database: 3 }],
        [{ database: "d", collectionsRegex: { pattern: "(" } }],
        "all",
      ])),
    () =>
      (b.sharding = pick(r, [
        {},
        { shardingEntries: [{ database: "d" }] },
        { shardingEntries: [{ database: "d", collection: "c", shardCollection: { key: [] } }] },
        [],
      ])),
    () => (b.enableUserWriteBlocking = pick(r, ["yes", 0, {}])),
    () => (b.destination = "cluster0"),
  ];
  const n = 1 + Math.floor(r() * 2);
  for (let i = 0; i < n; i++) pick(r, breakers)();
  return b;
}

function randomBody(r: Random, path: string): string | undefined {
  const k = r();
  if (k < 0.15) return undefined;
  if (k < 0.45 && path.includes("start")) return JSON.stringify(brokenStart(r));
  if (k < 0.75) return JSON.stringify(randomJson(r));
  if (k < 0.85) return randomString(r, 200); // not JSON, mostly
  if (k < 0.9) return "[".repeat(5000) + "]".repeat(5000); // deep nesting
  if (k < 0.93) return '{"a":' + "1".repeat(400) + "}";
  if (k < 0.95) return JSON.stringify({ ...RS_TO_SHARDED, pad: "x".repeat(1_100_000) }); // over the 1 MiB limit
  return "\u0000\uffff{}";
}

function randomHeaders(r: Random): Record<string, string> {
  const h: Record<string, string> = {};
  if (r() < 0.6)
    h["content-type"] = pick(r, [
      "application/json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=latin1",
      "*/*",
    ]);
  if (r() < 0.2) h.accept = pick(r, ["text/html", "*/*", "application/xml"]);
  if (r() < 0.1) h["content-encoding"] = pick(r, ["gzip", "br", "identity"]);
  if (r() < 0.1) h["x-" + Math.floor(r() * 1000)] = randomString(r, 30).replace(/[^\x20-\x7e]/g, "");
  if (r() < 0.05) h.cookie = "a=" + "b".repeat(Math.floor(r() * 4000));
  if (r() < 0.03) h["x-big"] = "c".repeat(20_000); // past node's header size limit
  return h;
}

interface Outcome {
  sent: number;
  json: number;
  transportErrors: number;
}

async function blast(sim: Simulator, r: Random, n: number, dispatcher: Agent): Promise<Outcome> {
  const targets = sim.instances.map((i) => i.url);
  const out: Outcome = { sent: 0, json: 0, transportErrors: 0 };
  const one = async (): Promise<void> => {
    const method = pick(r, METHODS);
    let path = pick(r, PATHS);
    if (r() < 0.05) path = "/api/v1/" + randomString(r, 40).replace(/[^A-Za-z0-9._~-]/g, "");
    if (r() < 0.01) path = "/api/v1/" + "a".repeat(20_000);
    const body = method === "GET" || method === "HEAD" ? undefined : randomBody(r, path);
    const url = pick(r, targets) + path;
    let res;
    try {
      res = await request(url, { method, headers: randomHeaders(r), body, dispatcher });
    } catch (err) {
      // The client refused to send it (an invalid header for undici) or the server cut the
      // connection (over-long headers after a 431, a body far past the limit).
      out.transportErrors++;
      void err;
      return;
    }
    out.sent++;
    const text = await res.body.text();
    if (method === "HEAD" || method === "head") return;
    const json = JSON.parse(text) as { success?: boolean; progress?: unknown };
    out.json++;
    const isRead =
      method === "GET" && (path.startsWith("/api/v1/progress?") || path === "/api/v1/progress" || path === "/sim");
    if (!isRead) {
      expect(json.success, `${method} ${url} → ${res.statusCode} ${text.slice(0, 200)}`).toBe(false);
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
    }
  };
  const workers = Array.from({ length: 8 }, async (_, w) => {
    for (let k = w; k < n; k += 8) await one();
  });
  await Promise.all(workers);
  return out;
}

async function snapshot(sim: Simulator): Promise<unknown> {
  const st = sim.control.state();
  return {
    instances: await Promise.all(sim.instances.map((_, i) => progress(sim, i))),
    verifier: await verifierProgress(sim),
    fleetErrors: st.fleetErrors,
    openRounds: st.openRounds,
    writes: st.writes,
    faults: st.faults,
  };
}

/** A body the verifier refuses on check and writesOff: not a JSON object (nor null), or not JSON. */
function refusedVerifierBody(r: Random): string {
  return pick(r, [
    "",
    "{",
    "[]",
    "[1,2]",
    "3",
    '"x"',
    "true",
    randomString(r, 50).replace(/^[\s{n]*/, "~"),
    '{"filter": 3}',
  ]);
}

async function blastVerifier(sim: Simulator, r: Random, n: number, dispatcher: Agent): Promise<Outcome> {
  const out: Outcome = { sent: 0, json: 0, transportErrors: 0 };
  const paths = [...PATHS, "/api/v1/summary", "/api/v1/docMismatches", "/api/v1/nsMismatches", "/api/v1/writesOn"];
  const one = async (): Promise<void> => {
    const method = pick(r, METHODS);
    const path = pick(r, paths);
    const op = method === "POST" && (path === "/api/v1/check" || path === "/api/v1/writesOff");
    const body = method === "GET" || method === "HEAD" ? undefined : op ? refusedVerifierBody(r) : randomBody(r, path);
    let res;
    try {
      res = await request(sim.verifierUrl + path, { method, headers: randomHeaders(r), body, dispatcher });
    } catch {
      out.transportErrors++;
      return;
    }
    out.sent++;
    const text = await res.body.text();
    if (method === "HEAD") return;
    const where = `${method} ${path} → ${res.statusCode} ${text.slice(0, 200)}`;
    if (res.statusCode === 404) expect(text, where).toMatch(/^(404 page not found|\{.*"success":false.*\})$/s);
    else if (res.statusCode === 405) expect(text, where).toMatch(/^(405 method not allowed|\{.*"success":false.*\})$/s);
    else if (res.statusCode === 200) {
      // reads: progress and summary in JSON, the mismatch lists in NDJSON (empty here)
      expect(method, where).toBe("GET");
      if (text !== "") JSON.parse(text);
    } else {
      expect(res.statusCode, where).toBeGreaterThanOrEqual(400);
      const json = JSON.parse(text) as { error?: unknown; success?: boolean };
      out.json++;
      expect(typeof json.error, where).toBe("string");
      expect(json.success, where).not.toBe(true);
    }
  };
  const workers = Array.from({ length: 8 }, async (_, w) => {
    for (let k = w; k < n; k += 8) await one();
  });
  await Promise.all(workers);
  return out;
}

describe("bad input", () => {
  let sim: Simulator;
  let dispatcher: Agent;
  beforeAll(async () => {
    sim = await frozen({ instances: 2 });
    dispatcher = new Agent({ connections: 16, headersTimeout: 10_000, bodyTimeout: 10_000 });
  });
  afterAll(async () => {
    await dispatcher.close();
    await sim.close();
  });

  it(`${PER_STATE} random requests in IDLE: JSON errors, nothing changes`, async () => {
    const before = await snapshot(sim);
    const out = await blast(sim, mulberry32(SEED), PER_STATE, dispatcher);
    expect(out.sent).toBeGreaterThan(PER_STATE * 0.8);
    expect(await snapshot(sim)).toEqual(before);
  });

  it(`${PER_STATE} random requests in COMMITTED: JSON errors, nothing changes`, async () => {
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(60);
    sim.control.setWrites({ enabled: false });
    await broadcast(sim, "commit");
    sim.control.advance(10);
    expect((await progress(sim)).progress.state).toBe("COMMITTED");
    const before = await snapshot(sim);
    const out = await blast(sim, mulberry32(SEED + 1), PER_STATE, dispatcher);
    expect(out.sent).toBeGreaterThan(PER_STATE * 0.8);
    expect(await snapshot(sim)).toEqual(before);
  });

  it(`${PER_STATE} random requests to the verifier: its own error answers, nothing changes, it lives on`, async () => {
    const before = await snapshot(sim);
    const out = await blastVerifier(sim, mulberry32(SEED + 3), PER_STATE, dispatcher);
    expect(out.sent).toBeGreaterThan(PER_STATE * 0.8);
    expect(out.json).toBeGreaterThan(50);
    expect(await snapshot(sim)).toEqual(before);
    expect(sim.control.state().verifier.exited).toBeNull();
  });

  it("raw garbage on the socket: a JSON 4xx or a closed connection, and the server lives on", async () => {
    const r = mulberry32(SEED + 2);
    const { port } = new URL(sim.instances[0]!.url);
    const garbage = (): Buffer => {
      const k = r();
      if (k < 0.3) return Buffer.from(Array.from({ length: 1 + Math.floor(r() * 300) }, () => Math.floor(r() * 256)));
      if (k < 0.5)
        return Buffer.from(
          `${pick(r, ["GET", "POST", "BREW", "CONNECT"])} ${pick(r, ["/api/v1/start", "*", "http://x/", ""])} HTTP/${pick(r, ["1.1", "9.9", "1.0", "x"])}\r\n\r\n`,
        );
      if (k < 0.7)
        return Buffer.from(
          `POST /api/v1/start HTTP/1.1\r\nHost: x\r\nContent-Length: ${pick(r, ["-1", "abc", "99999999999999999999", "5, 6"])}\r\n\r\n{}`,
        );
      if (k < 0.85)
        return Buffer.from(
          `POST /api/v1/commit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${pick(r, ["zz\r\n", "2\r\n{}\r\nZ\r\n", "1\r\n{"])}`,
        );
      return Buffer.from(`GET /api/v1/progress HTTP/1.1\r\n${"X: y\r\n".repeat(3000)}\r\n`);
    };
    const one = (): Promise<string> =>
      new Promise((resolve) => {
        const s = connect(Number(port), "127.0.0.1");
        let data = "";
        s.on("data", (d) => (data += d.toString("latin1")));
        s.on("error", () => resolve(data));
        s.on("close", () => resolve(data));
        s.on("connect", () => {
          s.write(garbage());
          setTimeout(() => s.end(), 30);
        });
        s.setTimeout(2000, () => s.destroy());
      });
    let answered = 0;
    for (let k = 0; k < 150; k++) {
      const data = await one();
      if (!data) continue;
      answered++;
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1]);
      const body = JSON.parse(data.slice(data.indexOf("\r\n\r\n") + 4).split("HTTP/1.1")[0]!) as { success: boolean };
      // A well-formed read (a Host-less `GET /api/v1/progress`) is answered; everything else is a JSON error.
      if (status === 200) expect(body.success, data.slice(0, 400)).toBe(true);
      else {
        expect(status, data.slice(0, 400)).toBeGreaterThanOrEqual(400);
        expect(body.success, data.slice(0, 400)).toBe(false);
      }
    }
    expect(answered).toBeGreaterThan(50);
    expect((await call(`${sim.instances[0]!.url}/api/v1/progress`)).status).toBe(200);
  });
});
