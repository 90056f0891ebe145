/**
 * Secrets never reach any output in any form (ARCHITECTURE, "redaction"): one scan over every
 * command and output format, against services and hooks that echo the secrets back.
 *
 * Seven `${env.*}` secrets, each with the characters that make its encodings differ (`'"<>&+~*_`):
 * an instance and verifier password (Basic auth, users `ops4` and `verifier`: the base64 of
 * `user:secret` is aligned differently for each), cluster URIs (preflight), a shell hook's
 * argument and environment, an http hook's URL and headers, a webhook's URL and headers, and an
 * `x-passthrough` start field; and two OpenTelemetry exporter header values
 * (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS`) that the collector echoes in
 * its answer's status line. The instances and the verifier sit behind a proxy that echoes what
 * it received (the Authorization header, the password decoded, in hex and base64 at every
 * alignment, the start body, a secret as a JSON key) in every answer, and now and then answers an
 * HTML page whose secrets straddle the client's excerpt cuts; the hook prints its secrets in every
 * form and one past the 2,000-character line cut; the http endpoints echo what they got, in a
 * JSON answer or a 500 HTML page whose secret straddles the 200-character snippet cut.
 *
 * Every spelling (test/support/spellings.ts: the URL standard's percent-encode sets in either hex
 * case, every byte percent-encoded, JSON `\u00XX` and Go's `\u0026`, HTML entities, upper case,
 * base64 wrapped at 76 columns at each alignment, a secret cut across two lines) goes through every
 * output: the failing run's hook prints each of its secrets' spellings after a label (`[a3]`), on
 * stdout (log lines) and, failing, on stderr (the step's message); the http hook's target answers
 * each spelling of the token it received in a 500 page or a JSON error, one failing step each
 * (`continueOnError`). The matrix then checks every label in stderr, the journal, report.json,
 * report.html, junit.xml, the job summary, the webhook's notifications and the trace, each
 * followed by `***`, and no spelling of any secret anywhere.
 *
 * Then lint (every format), run --dry-run (text and JSON), preflight (text and JSON), run (ok and
 * failing; simple and json renderers, --report, GITHUB_STEP_SUMMARY, OTLP traces), status (text
 * and --json), report (and --otlp), a refused --resume and rehearse; every stdout, stderr, file
 * written, notification and trace sent is scanned for each secret in every spelling, and for any
 * 8-character piece of it (12 of a spelling).
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.js";
import { cli, type CliResult } from "../support/run.js";
import { tempDir } from "../support/crash-harness.js";
import { labelled, spellings } from "../support/spellings.js";

const salt = (): string => randomBytes(4).toString("hex");
// the hook that prints every spelling, run by node with tsx's loader (by absolute URL: the run's folder has no node_modules)
const SPELL_HOOK = fileURLToPath(new URL("../support/spell-hook.ts", import.meta.url));
const TSX = pathToFileURL(join(process.cwd(), "node_modules/tsx/dist/loader.mjs")).href;
// no `/ ? # @ % :` (they would end a URL's user info) and no `\` or spaces (a shell argument as written)
const SECRETS = {
  SB_INST: `In'st"<P>w~d+${salt()}*_x`,
  SB_CLUSTER: `Cl'us"<T>er~+${salt()}&q`,
  SB_ARG: `Ar'g"<H>ook~+${salt()}*z`,
  SB_ENV: `En'v"<H>ook~+${salt()}_y`,
  SB_HTTP: `Ht-tp~H00k+${salt()}*w`,
  SB_HOOK: `We'b"<H>ook~+${salt()}&v`,
  SB_PASS: `Pa'ss"<T>hru~+${salt()}_u`,
  // OpenTelemetry exporter header values (not `${env.*}`: the process's environment); a status
  // line takes no `"`, `<` or `>`
  SB_OTEL: `Otel'K3y~+${salt()}*k`,
  SB_OTEL2: `Otel'Tr4ce~+${salt()}_t`,
};
const { SB_OTEL, SB_OTEL2, ...RUNBOOK_SECRETS } = SECRETS;
const ENV: Record<string, string> = { ...RUNBOOK_SECRETS };
const USERS = ["ops4", "verifier", "hook", "admin", "a", "ab", "abc"];

/** The characters of a base64 text that depend on the secret's bytes only, at each alignment. */
function cores(bytes: Buffer): string[] {
  return [0, 1, 2].map((k) => {
    const enc = Buffer.concat([Buffer.alloc(k), bytes])
      .toString("base64")
      .replace(/=+$/, "");
    return enc.slice([0, 2, 3][k], (k + bytes.length) % 3 === 0 ? enc.length : enc.length - 1);
  });
}

/** Every form of a secret the scan looks for, written here independently of src/redact.ts. */
function formsOf(s: string): Record<string, string> {
  const bytes = Buffer.from(s);
  const html = s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const forms: Record<string, string> = {
    "JSON-escaped": JSON.stringify(s).slice(1, -1),
    "URL-encoded": encodeURIComponent(s),
    "HTML-escaped": html.replace(/"/g, "&quot;").replace(/'/g, "&#39;"),
    "HTML-escaped (&apos;)": html.replace(/"/g, "&quot;").replace(/'/g, "&apos;"),
    "HTML-escaped (text)": html,
    "Markdown-escaped": s.replace(/[\\`*_[\]|~<>!#+\-.()]/g, (c) => `\\${c}`),
    "Markdown-escaped (cell)": s.replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`),
    hex: bytes.toString("hex"),
    HEX: bytes.toString("hex").toUpperCase(),
  };
  cores(bytes).forEach((c, k) => {
    forms[`base64 @${k}`] = c;
    forms[`base64url @${k}`] = c.replace(/\+/g, "-").replace(/\//g, "_");
  });
  for (const u of USERS) forms[`basic auth (${u})`] = Buffer.from(`${u}:${s}`).toString("base64");
  // every spelling a service or hook can give (line breaks taken out: an output may show them apart)
  // (not the wrapped base64: its start is the base64 of the filler before the secret, the same for
  // every secret; the secret's own base64 at each alignment is above)
  for (const [name, text] of Object.entries(spellings(s)))
    if (!name.startsWith("base64 wrapped")) forms[name] = text.replace(/\r?\n/g, "");
  return forms;
}

/** Pieces by length: every 8 characters of a secret (either case), every 12 of any other form. */
const PIECES = new Map<number, Map<string, string>>();
function addPiece(piece: string, what: string): void {
  let m = PIECES.get(piece.length);
  if (!m) PIECES.set(piece.length, (m = new Map()));
  if (!m.has(piece)) m.set(piece, what);
}
for (const [name, s] of Object.entries(SECRETS)) {
  for (const v of [s, s.toUpperCase(), s.toLowerCase()])
    for (let i = 0; i + 8 <= v.length; i++) addPiece(v.slice(i, i + 8), `${name} piece @${i}`);
  for (const [form, f] of Object.entries(formsOf(s))) {
    if (f.length <= 12) addPiece(f, `${name} ${form}`);
    else for (let i = 0; i + 12 <= f.length; i++) addPiece(f.slice(i, i + 12), `${name} ${form} @${i}`);
  }
}

/** An output as a reader may decode it once: JSON strings, HTML entities, Markdown escapes. */
function layers(text: string): string[] {
  const out = [text];
  const strings: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === "string") strings.push(v);
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        strings.push(k);
        collect(x);
      }
  };
  for (const line of [text, ...text.split("\n")])
    try {
      collect(JSON.parse(line));
    } catch {
      // not JSON
    }
  if (strings.length) out.push(strings.join("\n"));
  const unHtml = text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
  out.push(unHtml, unHtml.replace(/\\([!-/:-@[-`{-~])/g, "$1"));
  return out;
}

function leaks(text: string): string[] {
  const out = new Set<string>();
  for (const t of layers(text))
    for (const [len, m] of PIECES)
      for (let i = 0; i + len <= t.length; i++) {
        const hit = m.get(t.slice(i, i + len));
        if (hit) out.add(hit.replace(/ @\d+$/, ""));
      }
  return [...out];
}

/** Every way the echoing services send a secret back. */
function echoes(s: string): Record<string, string> {
  const b = Buffer.from(s);
  return {
    plain: s,
    hex: b.toString("hex"),
    HEX: b.toString("hex").toUpperCase(),
    b64: b.toString("base64"),
    b64at1: Buffer.from(`x${s}`).toString("base64"),
    b64at2: Buffer.from(`xy${s}`).toString("base64"),
    b64url: b.toString("base64url"),
    html: s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;"),
    url: encodeURIComponent(s),
  };
}

/** An HTML page with each text placed to straddle the cut at each offset (whitespace-free, so collapsing none moves it). */
function straddling(texts: string[], cuts: number[]): string {
  let page = "<html><body>";
  for (const t of texts)
    for (const cut of cuts) {
      const at = cut - 5;
      page += "x".repeat(Math.max(0, at - page.length)) + t + "|";
    }
  return `${page}</body></html>`;
}

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
const sims: Simulator[] = [];
const seen: Seen[] = [];
let echoUrl = "";
let collectorUrl = "";
const collected: Seen[] = [];
/** The failing run's outputs by name, for the matrix of spellings. */
const matrix: Record<string, string> = {};

/** JSON as Go's encoding/json writes it: `&`, `<`, `>` as `\u0026`, `\u003c`, `\u003e`. */
const goJson = (v: unknown): string =>
  JSON.stringify(v).replace(/&/g, "\\u0026").replace(/</g, "\\u003c").replace(/>/g, "\\u003e");

/** The trace variables: the exporter's headers are secrets the collector may echo. */
const otel = (path: string): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: `${collectorUrl}${path}`,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  OTEL_EXPORTER_OTLP_HEADERS: `api-key=${SB_OTEL}`,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: `x-trace-key=${SB_OTEL2}`,
});
const SPELLING_COUNT = Object.keys(spellings("x")).length;
/** Whether an output must show a label (and so test its spelling's mask). */
const MULTI_LINE = new Set(
  Object.values(spellings("x"))
    .map((t, i) => (/[\r\n]/.test(t) ? i : -1))
    .filter((i) => i >= 0),
);
/**
 * Whether an output must show a label (and so test its spelling's mask): the http target's in
 * every step's failure, which every output but stderr carries (the json renderer writes the steps
 * on stdout); the hook's, on stdout and in the journal as log lines, and in the run's failure
 * (stderr's last message too), which quotes its last lines of stderr, where it prints the one-line
 * spellings.
 */
const REQUIRED = (output: string, label: string): boolean =>
  label.startsWith("h")
    ? output !== "stderr"
    : output === "stdout (json)" || output === "journal" || !MULTI_LINE.has(Number(label.slice(1)));
const dir = tempDir("syncbook-secret-scan-");
const outputs: { what: string; text: string }[] = [];

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A proxy in front of a simulated instance or verifier that echoes the secrets it received. */
async function echoingProxy(target: string): Promise<string> {
  const to = new URL(target);
  let gets = 0;
  let startBody: unknown;
  return listen(
    createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        const auth = req.headers.authorization ?? "";
        const password = Buffer.from(auth.replace(/^Basic /, ""), "base64")
          .toString()
          .replace(/^[^:]*:/, "");
        let forward = body;
        if (req.url?.endsWith("/start") && body) {
          // the simulator refuses fields it does not know: the passthrough field is echoed, not forwarded
          const parsed = JSON.parse(body) as Record<string, unknown>;
          startBody = parsed;
          delete parsed.xToken;
          forward = JSON.stringify(parsed);
        }
        if (req.method === "GET" && ++gets % 5 === 3) {
          // a proxy error page quoting the request: its secrets straddle the 60- and 120-character excerpts
          res.writeHead(200, { "content-type": "text/html" });
          res.end(straddling([password, auth], [60, 120]));
          return;
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
            r.on("end", () => {
              let out = text;
              try {
                const json = JSON.parse(text) as Record<string, unknown>;
                const echo = { authorization: auth, [password]: echoes(password), startBody };
                json.echo = echo;
                if (json.progress && typeof json.progress === "object") {
                  const p = json.progress as Record<string, unknown>;
                  p.echo = echo;
                  if (p.info === undefined || p.info === null)
                    p.info = `seen ${password} ${JSON.stringify(startBody ?? {})}`;
                }
                out = JSON.stringify(json);
              } catch {
                // not JSON: as it is
              }
              res.writeHead(r.statusCode ?? 502, { "content-type": "application/json" }).end(out);
            });
          },
        );
        up.on("error", () => res.destroy());
        up.end(forward);
      });
    }),
  );
}

beforeAll(async () => {
  echoUrl = await listen(
    createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        seen.push({ url: req.url ?? "", headers: req.headers, body });
        if (req.url?.startsWith("/spell/")) {
          // spelling k of the token it was sent, after its label: as text, or in a Go JSON encoder's error
          const u = new URL(req.url, "http://x");
          // the query as the hook sent it, percent-decoded only (a form decoder would read its `+` as a space)
          const token = decodeURIComponent(/[?&]token=([^&]*)/.exec(u.search)?.[1] ?? "");
          const x = labelled(token, "h")[Number(u.pathname.split("/")[2])]!;
          if (Number(u.pathname.split("/")[2]) % 2 === 0)
            res.writeHead(500, { "content-type": "text/plain" }).end(`${x.label} ${x.text}`);
          else
            res.writeHead(500, { "content-type": "application/json" }).end(goJson({ error: `${x.label} ${x.text}` }));
          return;
        }
        const echoed = { youSent: { url: req.url, headers: req.headers, body }, [SECRETS.SB_HTTP]: SECRETS.SB_HOOK };
        if (req.url?.includes("/fail")) {
          const texts = [req.headers.authorization ?? "", String(req.headers["x-api-key"] ?? ""), req.url];
          res.writeHead(500, { "content-type": "text/html" }).end(straddling(texts, [200]) + JSON.stringify(echoed));
        } else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(echoed));
      });
    }),
  );
  // an OTLP/HTTP collector: under /ok it takes the spans; under /echo it refuses them, quoting the
  // headers it got (an API key) in its status line, which the exporter's error carries
  collectorUrl = await listen(
    createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        collected.push({ url: req.url ?? "", headers: req.headers, body });
        if (req.url?.startsWith("/echo")) {
          const quoted = `rejected api-key ${String(req.headers["api-key"])} x-trace-key ${String(req.headers["x-trace-key"])}`;
          res.writeHead(400, quoted, { "content-type": "application/json" }).end(JSON.stringify({ message: quoted }));
        } else res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    }),
  );
  for (let i = 0; i < 2; i++)
    sims.push(
      await startSimulator({
        instances: 2,
        data: "1GiB",
        timeScale: 100,
        clusters: { cluster0: { topology: "sharded", shards: 2 }, cluster1: { topology: "sharded", shards: 2 } },
      }),
    );
});

afterAll(async () => {
  await Promise.all(sims.map((x) => x.close()));
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

// prints its secrets in every form, one of them past the 2,000-character line cut, one as a JSON key
const HOOK_SCRIPT = [
  "const a = process.argv[1].slice(6), e = process.env.TOKEN;",
  "for (const s of [a, e]) {",
  "  const b = Buffer.from(s);",
  "  console.log('plain', s, 'hex', b.toString('hex'), b.toString('hex').toUpperCase());",
  "  console.log('b64', b.toString('base64'), Buffer.from('x' + s).toString('base64'), Buffer.from('xy' + s).toString('base64'), b.toString('base64url'));",
  "  console.log('a'.repeat(1990) + s);",
  "  console.log(JSON.stringify({ [s]: encodeURIComponent(s) }));",
  "  console.error('token', s);",
  "}",
].join(" ");

/**
 * The failing runbook's spelling steps, each failing with `continueOnError`: the hook that prints
 * every spelling of its two secrets (stdout, then stderr as its failure), and one http step per
 * spelling of the token its target echoes in the error it answers.
 */
function spellSteps(): string {
  const hook = `  - id: spell
    hook:
      use: shell
      with:
        command: [${[process.execPath, "--import", TSX, SPELL_HOOK].map((a) => JSON.stringify(a)).join(", ")}, "token=\${env.SB_ARG}", fail]
        env: { TOKEN: "\${env.SB_ENV}" }
`;
  let http = "";
  for (let k = 0; k < SPELLING_COUNT; k++)
    http += `  - { id: spell-h${k}, continueOnError: true, hook: { use: http, with: { url: "${echoUrl}/spell/${k}?token=\${env.SB_HTTP}", method: PUT } } }\n`;
  // the hook last: its failure (its last lines of stderr) is the run's, in the run's last message
  return http + hook;
}

async function runbook(s: Simulator, fail: boolean): Promise<string> {
  const inst = await Promise.all(s.instances.map((i) => echoingProxy(i.url)));
  const verifier = await echoingProxy(s.verifierUrl);
  const withCreds = (url: string, user: string, env: string): string =>
    url.replace("http://", `http://${user}:\${env.${env}}@`);
  const hookPath = fail ? "/fail" : "/flags";
  return `runbook: 1
name: secret-scan${fail ? "-fail" : ""}
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: sharded, shards: 2, serverVersion: "6.0", uri: "mongodb://sync:\${env.SB_CLUSTER}@127.0.0.1:9/?authSource=admin" }
  cluster1: { topology: sharded, shards: 2, serverVersion: "6.0", uri: "mongodb://sync:\${env.SB_CLUSTER}@127.0.0.1:9/" }
preflight: { connectTimeout: 500ms }
instances:
${inst.map((u, i) => `  - { url: "${withCreds(u, "ops4", "SB_INST")}", name: sync${i} }`).join("\n")}
verifier: "${withCreds(verifier, "verifier", "SB_INST")}"
defaults: { pollInterval: 50ms, timeout: 30m, requestTimeout: 2s, retry: { giveUpAfter: 10m } }
notify:
  - { use: webhook, with: { url: "${withCreds(echoUrl, "hook", "SB_HOOK")}${fail ? "/spell-notify" : hookPath}/notify?key=\${env.SB_HOOK}", headers: { X-Api-Key: "\${env.SB_HOOK}" }, retries: 0 }, on: [run.started, step.failed, hook.failed, run.finished${fail ? ", step.finished" : ""}] }
  - { use: file, with: { path: notes.jsonl }, on: [run.started, step.finished, step.failed, log, run.finished] }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1, x-passthrough: { xToken: "\${env.SB_PASS}" } } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
${fail ? spellSteps() : ""}  - id: dump
    hook:
      use: shell
      with:
        command: [${JSON.stringify(process.execPath)}, -e, ${JSON.stringify(HOOK_SCRIPT)}, "token=\${env.SB_ARG}"]
        env: { TOKEN: "\${env.SB_ENV}" }
  - id: flag
    hook:
      use: http
      with: { url: "${echoUrl}${hookPath}/\${env.SB_HTTP}?token=\${env.SB_HTTP}", method: PUT, headers: { Authorization: "Bearer \${env.SB_HTTP}", X-Api-Key: "\${env.SB_HTTP}" }, body: { token: "\${env.SB_HTTP}" } }
  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }
  - { id: drained, waitFor: { canCommit: true, lagBelow: 3 } }
  - { id: tell, notify: "committing with \${env.SB_HOOK} now" }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED } }
  - { id: verify, verify: {} }
`;
}

async function run(what: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const t0 = Date.now();
  const r = await cli(args, { cwd: dir, env: { ...ENV, ...env } });
  if (process.env.SECRET_SCAN_TIMES) console.log(`${what}: ${Date.now() - t0} ms`);
  outputs.push({ what: `${what}: stdout`, text: r.stdout }, { what: `${what}: stderr`, text: r.stderr });
  return r;
}

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((n) => {
    const p = join(root, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe("no secret in any form in any output", () => {
  it("runs every command and output format against echoing services and hooks", async () => {
    const file = join(dir, "rb.yaml");
    writeFileSync(file, await runbook(sims[0]!, false));
    const journals = join(dir, "journals");
    const summary = join(dir, "step-summary.md");
    const gh = { GITHUB_STEP_SUMMARY: summary };

    for (const format of ["pretty", "json", "github", "junit", "sarif"])
      await run(`lint --format ${format}`, ["lint", file, "--format", format], gh);
    expect((await run("dry-run", ["run", file, "--dry-run"])).code).toBe(0);
    await run("dry-run (json)", ["run", file, "--dry-run", "--renderer", "json"]);
    for (const format of ["pretty", "json"])
      await run(`preflight --format ${format}`, ["preflight", file, "--format", format]);

    const ok = await run(
      "run",
      ["run", file, "--renderer", "simple", "--journal-dir", journals, "--report", join(dir, "report-run"), "--yes"],
      { ...gh, ...otel("/echo") },
    );
    // the collector refused the spans, quoting the exporter's headers: the warning says so, without them
    expect(ok.stderr).toMatch(/trace export (lost|failed).*rejected api-key \*\*\* x-trace-key \*\*\*/);
    expect(ok.code, ok.all).toBe(0);
    expect(ok.stdout).toContain("committing with *** now");
    expect(sims[0]!.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);

    await run("status", ["status", file, "--journal-dir", journals]);
    const st = await run("status --json", ["status", file, "--journal-dir", journals, "--json"]);
    // an instance answers, or its error page is the message: either way the echo went through status
    expect(st.stdout).toMatch(/"info"|not JSON/);

    const journal = filesUnder(journals).find((f) => f.endsWith(".jsonl"))!;
    expect((await run("report", ["report", journal, "--out", join(dir, "report-journal")])).code).toBe(0);
    const again = await run("resume of a finished run", ["run", file, "--resume", "--journal-dir", journals]);
    expect(again.stderr).toContain("nothing to resume");

    // the simulator behind rehearse has no proxy to take the passthrough field out
    const rehearsed = join(dir, "rb-rehearse.yaml");
    writeFileSync(rehearsed, readFileSync(file, "utf8").replace(', x-passthrough: { xToken: "${env.SB_PASS}" }', ""));
    const reh = await run(
      "rehearse",
      [
        "rehearse",
        rehearsed,
        "--renderer",
        "json",
        "--report",
        join(dir, "report-rehearse"),
        "--time-scale",
        "200",
        "--data",
        "1GiB",
      ],
      gh,
    );
    expect(reh.code, reh.all).toBe(0);

    // the hooks' servers fail, answering HTML that quotes the secrets: errors, undo, notifications stay clean
    const failing = join(dir, "rb-fail.yaml");
    writeFileSync(failing, await runbook(sims[1]!, true));
    const bad = await run(
      "failing run",
      ["run", failing, "--renderer", "json", "--journal-dir", journals, "--report", join(dir, "report-fail")],
      { ...gh, ...otel("/ok") },
    );
    expect(bad.code, bad.all).toBe(1);
    expect(bad.stderr + bad.stdout).toMatch(/500/);
    expect(sims[1]!.control.state().writes.enabled).toBe(true);

    const failJournal = filesUnder(journals).find(
      (f) => f.endsWith(".jsonl") && readFileSync(f, "utf8").includes("secret-scan-fail"),
    )!;
    Object.assign(matrix, {
      stderr: bad.stderr,
      "stdout (json)": bad.stdout,
      journal: readFileSync(failJournal, "utf8"),
      "report.json": readFileSync(join(dir, "report-fail", "report.json"), "utf8"),
      "report.html": readFileSync(join(dir, "report-fail", "report.html"), "utf8"),
      "junit.xml": readFileSync(join(dir, "report-fail", "junit.xml"), "utf8"),
      "job summary": readFileSync(summary, "utf8"),
      "webhook notifications": seen
        .filter((x) => x.url.startsWith("/spell-notify/notify"))
        .map((x) => x.body)
        .join("\n"),
      "trace export": collected
        .filter((x) => x.url.startsWith("/ok"))
        .map((x) => x.body)
        .join("\n"),
    });

    // the secrets were really sent (the exporter's headers too)
    expect(collected.some((x) => x.headers["api-key"] === SB_OTEL && x.headers["x-trace-key"] === SB_OTEL2)).toBe(true);
    const hook = seen.filter((x) => x.url.startsWith("/flags") || x.url.startsWith("/fail/"));
    expect(
      hook.some((x) => x.headers.authorization === `Bearer ${SECRETS.SB_HTTP}` && x.body.includes(SECRETS.SB_HTTP)),
    ).toBe(true);
    expect(seen.some((x) => x.url.includes("/notify") && x.headers["x-api-key"] === SECRETS.SB_HOOK)).toBe(true);
  }, 120_000);

  it("finds none in the stdout and stderr of every command, nor in any file written", () => {
    // the scan itself finds every form of every secret
    for (const [name, s] of Object.entries(SECRETS))
      for (const [form, f] of Object.entries(formsOf(s)))
        expect(
          leaks(`<${f}>`).some((x) => x.startsWith(`${name} `)),
          `${name} ${form}`,
        ).toBe(true);
    expect(outputs.length).toBe(32);
    for (const o of outputs) expect(leaks(o.text), `${o.what} holds a secret:\n${o.text.slice(0, 4000)}`).toEqual([]);
    const files = filesUnder(dir).filter((f) => !f.endsWith(".yaml"));
    const names = files.map((f) => f.split("/").pop()!);
    expect(names.filter((k) => k.endsWith(".jsonl") && k !== "notes.jsonl").length).toBeGreaterThanOrEqual(2);
    for (const kind of ["report.html", "report.json", "junit.xml"])
      expect(names.filter((k) => k === kind).length, kind).toBeGreaterThanOrEqual(4);
    expect(names).toContain("notes.jsonl");
    expect(names).toContain("step-summary.md");
    for (const f of files) expect(leaks(readFileSync(f, "utf8")), `${f} holds a secret`).toEqual([]);
    // what syncbook wrote into a notification or a trace (their addresses and the hooks' requests carry secrets by design)
    for (const x of [...seen.filter((n) => n.url.includes("/notify")), ...collected])
      expect(leaks(x.body), `a notification or trace sent to ${x.url.replace(/\?.*/, "")} holds a secret`).toEqual([]);
  });

  it("masks every spelling of every secret in every output: each label is followed by the mask", () => {
    const labels = ["a", "e", "h"].flatMap((t) => Array.from({ length: SPELLING_COUNT }, (_, i) => `${t}${i}`));
    const names = Object.keys(spellings("x"));
    const found: Record<string, Set<string>> = {};
    const unmasked: string[] = [];
    for (const [output, text] of Object.entries(matrix)) {
      found[output] = new Set();
      for (const t of layers(text)) {
        // a label and what follows it, up to the next label or line break: the spelling, masked
        for (const m of t.matchAll(/\\?\[([aeh]\d+)\\?\]([^\n]*?)(?=\\?\[[aeh]\d+\\?\]|\n|$)/g)) {
          found[output].add(m[1]!);
          if (!m[2]!.includes("***") && !m[2]!.includes("\\*\\*\\*"))
            unmasked.push(`${output}: [${m[1]}] (${names[Number(m[1]!.slice(1))]}) ${m[2]}`);
        }
      }
    }
    const table = Object.entries(found).map(
      ([o, f]) => `${o}: ${f.size} of ${labels.length}; missing ${labels.filter((l) => !f.has(l)).join(" ")}`,
    );
    const notes = seen.filter((x) => x.url.includes("/spell-notify/notify"));
    table.push(`webhook requests: ${notes.length}: ${notes.map((x) => `${x.url} ${x.body.slice(0, 300)}`).join("\n")}`);
    expect(unmasked, table.join("\n")).toEqual([]);
    // every output carries every spelling the failures carry: the http target's, and the hook's on stderr
    for (const [output, f] of Object.entries(found))
      expect(
        labels.filter((l) => !f.has(l) && REQUIRED(output, l)),
        `${output} never showed these spellings (so never tested them):\n${table.join("\n")}`,
      ).toEqual([]);
  });
});
