/**
 * A sync service whose error answer echoes what it was sent (issue 42, point 7): the secrets of
 * the request come back in the client's error body, and from there go into the step's failure,
 * stderr, the journal, every report, the job summary and the trace. The service here is a
 * loopback proxy in front of the simulator that answers `start` with an error quoting the
 * request: the instance URL's password (Basic auth, `${env.SB_PW}`, decoded as the service would
 * log it), and the start body's passthrough fields (`${env.SB_TOKEN}`, and a connection string
 * whose password is `${env.SB_URIPW}`), each in every spelling a service can give
 * (test/support/spellings.ts: Go's `\u0026`, the URL standard's percent-encode sets, HTML
 * entities, upper case…). One run per way the client reads an error body (src/api/client.ts):
 * - a JSON refusal, `success: false` with `error` and `errorDescription` (a ServiceError), as Go's
 *   encoding/json writes it;
 * - a non-JSON page (HTTP 500, text/plain and HTML): the excerpt of its first bytes;
 * - a JSON answer the contract does not allow (no `success`; a string `error`, as the published
 *   verifier refuses): the excerpt of its body in the message, parsed first, a secret as a key too;
 * - progress reads that fail the same ways before the start (the retried read's warnings).
 * Every stdout and stderr, every file the runs and `report` wrote, and every trace sent is then
 * searched for each secret in every spelling and for any 8 characters of it (either case).
 */
import { createServer, request as httpRequest, type Server } from "node:http";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, type CliResult } from "../support/run.js";
import { fastSim, tempDir } from "../support/crash-harness.js";
import { spellings } from "../support/spellings.js";

const salt = (): string => randomBytes(4).toString("hex");
// no `/ ? # @ % :` (they would end a URL's user info), no `\` or spaces
const SECRETS = {
  SB_PW: `Sv'c"<P>w~d+${salt()}&_x`,
  SB_TOKEN: `To'k"<E>n~+${salt()}*&y`,
  SB_URIPW: `Ur'i"<P>w~+${salt()}_&z`,
};
const MARK = "ECHO-OF-REQUEST";

/** What an output must not hold: each secret's spellings (one line each) and every 8 characters of it in either case. */
const NEEDLES: { needle: string; what: string }[] = Object.entries(SECRETS).flatMap(([name, s]) => [
  ...Object.entries(spellings(s))
    .filter(([, text]) => !/[\r\n]/.test(text))
    .map(([form, text]) => ({ needle: text, what: `${name} ${form}` })),
  ...[s, s.toUpperCase(), s.toLowerCase()].flatMap((v) =>
    Array.from({ length: v.length - 7 }, (_, i) => ({ needle: v.slice(i, i + 8), what: `${name} piece @${i}` })),
  ),
]);
const leaks = (text: string): string[] => {
  const flat = text.replace(/\r?\n/g, "");
  return [...new Set(NEEDLES.filter((n) => text.includes(n.needle) || flat.includes(n.needle)).map((n) => n.what))];
};

/** Go's encoding/json: `&`, `<`, `>` as `\u0026`, `\u003c`, `\u003e`. */
const goJson = (v: unknown): string =>
  JSON.stringify(v).replace(/&/g, "\\u0026").replace(/</g, "\\u003c").replace(/>/g, "\\u003e");

/** Every secret the request carried, decoded as a service sees it, in every one-line spelling. */
function echoOf(req: { authorization: string; body: string }): { plain: string[]; spelled: string[] } {
  const password = Buffer.from(req.authorization.replace(/^Basic /, ""), "base64")
    .toString()
    .replace(/^[^:]*:/, "");
  const found = [password];
  try {
    const body = JSON.parse(req.body) as Record<string, unknown>;
    for (const v of Object.values(body))
      if (typeof v === "string" && v !== "cluster0" && v !== "cluster1") found.push(v);
  } catch {
    // no body (a progress read)
  }
  const spelled = found.flatMap((s) => Object.values(spellings(s)).filter((t) => !/[\r\n]/.test(t)));
  return { plain: found, spelled };
}

type Mode = "service-error" | "text-500" | "html-502" | "no-success" | "progress-errors";

const servers: Server[] = [];
async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What the proxy received, to show the secrets were really sent. */
const received: { url: string; authorization: string; body: string }[] = [];

/** The instance, answering per mode with an error that quotes the request. */
function echoingService(target: string, mode: Mode): Promise<string> {
  const to = new URL(target);
  let gets = 0;
  let startBody = "";
  return listen(
    createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        const seen = { url: req.url ?? "", authorization: req.headers.authorization ?? "", body };
        received.push(seen);
        const isStart = req.method === "POST" && seen.url.endsWith("/start");
        if (isStart) startBody = body;
        // a progress read quotes the start body the service was sent before it
        const echo = echoOf({ authorization: seen.authorization, body: body || startBody });
        if (mode === "progress-errors" && req.method === "GET" && startBody && ++gets <= 3) {
          // the first reads after the start fail, each a way the client reads a body; then the real answers
          const k = gets % 3;
          if (k === 0)
            res.writeHead(503, { "content-type": "application/json" }).end(
              goJson({
                success: false,
                error: `${MARK} ${echo.plain.join(" ")}`,
                errorDescription: echo.spelled.join(" | "),
              }),
            );
          else if (k === 1) res.writeHead(500, { "content-type": "text/plain" }).end(`${MARK} ${echo.plain.join(" ")}`);
          else
            res
              .writeHead(200, { "content-type": "application/json" })
              .end(goJson({ [MARK]: echo.plain, [echo.plain[0]!]: 1 }));
          return;
        }
        if (isStart && mode !== "progress-errors") {
          if (mode === "service-error")
            res.writeHead(400, { "content-type": "application/json" }).end(
              goJson({
                success: false,
                error: `${MARK}: refused ${echo.plain.join(" and ")}`,
                errorDescription: `request was ${echo.spelled.join(" | ")}`,
              }),
            );
          else if (mode === "text-500")
            // each secret right at the start, where the excerpt is taken, and cut across the excerpt's end
            res
              .writeHead(500, { "content-type": "text/plain" })
              .end(`${MARK} ${echo.plain.join(" ")} ${"x".repeat(20)}${echo.spelled.join(" ")}`);
          else if (mode === "html-502")
            res
              .writeHead(502, { "content-type": "text/html" })
              .end(`<html><body><h1>${MARK}</h1><pre>${echo.spelled.join("\n")}</pre></body></html>`);
          else
            // no `success`: a string `error` quoting the request, the shape of the refusals without
            // `success` the published verifier gives (service-facts.md), and a secret as a key too
            res.writeHead(200, { "content-type": "application/json" }).end(
              goJson({
                error: `${MARK} ${echo.plain.join(" ")}`,
                [MARK]: echo.plain,
                [echo.plain[0]!]: echo.spelled,
                ok: "yes",
              }),
            );
          return;
        }
        // forward (the simulator refuses fields it does not know: the passthrough fields are not sent on)
        let forward = body;
        if (isStart) {
          const parsed = JSON.parse(body) as Record<string, unknown>;
          for (const k of Object.keys(parsed)) if (k.startsWith("x")) delete parsed[k];
          forward = JSON.stringify(parsed);
        }
        const up = httpRequest(
          {
            host: to.hostname,
            port: to.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, "content-length": Buffer.byteLength(forward) },
          },
          (r) => {
            let text = "";
            r.on("data", (d: Buffer) => (text += d.toString()));
            r.on("end", () => res.writeHead(r.statusCode ?? 502, { "content-type": "application/json" }).end(text));
          },
        );
        up.on("error", () => res.writeHead(502).end());
        up.end(forward);
      });
    }),
  );
}

/** Trace requests received (OTLP over HTTP, JSON). */
const traces: string[] = [];
let collectorUrl = "";
const sims: Simulator[] = [];
const dir = tempDir("syncbook-service-echo-");
const outputs: { what: string; text: string }[] = [];

beforeAll(async () => {
  collectorUrl = await listen(
    createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        traces.push(body);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    }),
  );
});

afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await Promise.all(sims.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function runbookFor(mode: Mode): Promise<string> {
  const s = await fastSim();
  sims.push(s);
  const url = await echoingService(s.instances[0]!.url, mode);
  return `runbook: 1
name: echo-${mode}
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "6.0" }
instances:
  - { url: "${url.replace("http://", "http://ops:${env.SB_PW}@")}", name: sync0 }
verifier: "${s.verifierUrl}"
defaults: { pollInterval: 50ms, timeout: 10s, requestTimeout: 2s, retry: { initialDelay: 20ms, maxDelay: 50ms, giveUpAfter: 5s } }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1, x-passthrough: { xToken: "\${env.SB_TOKEN}", xUri: "mongodb://sync:\${env.SB_URIPW}@db.example:27017/?authSource=admin" } } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
`;
}

async function run(what: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const r = await cli(args, { cwd: dir, env: { ...SECRETS, ...env } });
  outputs.push({ what: `${what}: stdout`, text: r.stdout }, { what: `${what}: stderr`, text: r.stderr });
  return r;
}

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((n) => {
    const p = join(root, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

const MODES: Mode[] = ["service-error", "text-500", "html-502", "no-success", "progress-errors"];

describe("a service error that echoes the request's secrets reaches no output", () => {
  it("the scan finds every spelling of every secret (it would see a leak)", () => {
    for (const [name, s] of Object.entries(SECRETS)) {
      for (const [form, text] of Object.entries(spellings(s)))
        // (not the wrapped base64: its lines before and after the secret's are the filler's)
        if (!form.startsWith("base64 wrapped")) expect(leaks(`<${text}>`).length, `${name} ${form}`).toBeGreaterThan(0);
      expect(leaks(`x${s.slice(3, 11)}x`).length).toBeGreaterThan(0);
    }
  });

  it.each(MODES)(
    "%s: the run, its journal, report, job summary and trace carry none",
    async (mode) => {
      const file = join(dir, `${mode}.yaml`);
      writeFileSync(file, await runbookFor(mode));
      const journals = join(dir, `journals-${mode}`);
      const before = received.length;
      const r = await run(
        `run (${mode})`,
        [
          "run",
          file,
          "--renderer",
          "json",
          "--journal-dir",
          journals,
          "--report",
          join(dir, `report-${mode}`),
          "--yes",
        ],
        {
          GITHUB_STEP_SUMMARY: join(dir, `summary-${mode}.md`),
          OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        },
      );
      // the secrets were sent: in the Basic auth of every request, and in the start body
      const mine = received.slice(before);
      expect(
        mine.some((x) => x.authorization === `Basic ${Buffer.from(`ops:${SECRETS.SB_PW}`).toString("base64")}`),
      ).toBe(true);
      const start = mine.find((x) => x.url.endsWith("/start"));
      expect(start?.body).toContain(JSON.stringify(SECRETS.SB_TOKEN).slice(1, -1));
      expect(start?.body).toContain(`mongodb://sync:${JSON.stringify(SECRETS.SB_URIPW).slice(1, -1)}@`);
      const journal = filesUnder(journals).find((f) => f.endsWith(".jsonl"))!;
      const text = readFileSync(journal, "utf8");
      // the echo reached the run's words (so its redaction was tested): the refusal, the excerpt or
      // the retried read; an answer without `success` by what it lacks, what came back (its
      // excerpt, redacted) and what it leaves
      if (mode === "no-success")
        expect(text).toContain(`unexpected answer (no \\"success\\"): {\\"error\\":\\"${MARK} ***`);
      if (mode === "no-success")
        expect(text).toContain("it reached the service: whether start took effect is unknown until progress shows it");
      expect(r.stdout + r.stderr + text, r.all).toContain(MARK);
      if (mode === "progress-errors") expect(r.code, r.all).toBe(0);
      else expect(r.code, r.all).toBe(1);
      const rep = await run(`report (${mode})`, ["report", journal, "--out", join(dir, `report-journal-${mode}`)]);
      expect(rep.code, rep.all).not.toBe(2);
      await run(`status (${mode})`, ["status", file, "--journal-dir", journals, "--json"]);
    },
    60_000,
  );

  it("finds none in any stdout, stderr, file written or trace sent", () => {
    expect(outputs.length).toBe(MODES.length * 6);
    for (const o of outputs) expect(leaks(o.text), `${o.what} holds a secret:\n${o.text.slice(0, 4000)}`).toEqual([]);
    const files = filesUnder(dir).filter((f) => !f.endsWith(".yaml"));
    const names = files.map((f) => f.split("/").pop()!);
    for (const kind of ["report.html", "report.json", "junit.xml"])
      expect(names.filter((k) => k === kind).length, kind).toBe(2 * MODES.length);
    expect(names.filter((k) => k.startsWith("summary-")).length).toBe(MODES.length);
    for (const f of files) expect(leaks(readFileSync(f, "utf8")), `${f} holds a secret`).toEqual([]);
    expect(traces.length).toBeGreaterThanOrEqual(MODES.length);
    for (const t of traces) expect(leaks(t), `a trace holds a secret:\n${t.slice(0, 2000)}`).toEqual([]);
  });
});
