/**
 * "Secrets (values from `${env.*}`, passwords in URLs) never reach output, journals, reports"
 * (ARCHITECTURE; issue item 5): one unique secret, planted through the environment in
 *  - every instance URL and the verifier URL (`http://ops:SECRET@127.0.0.1:port`),
 *  - an `http` hook's Authorization header, query string and JSON body,
 *  - a `shell` hook's env and a MongoDB connection string in its argv (the hook prints both),
 *  - a `webhook` notifier's URL userinfo, query and header (its server echoes them back),
 *  - a `notify` step's text,
 * goes through `syncbook run` (ok, failed, --dry-run, --resume refused), `syncbook rehearse` and
 * `syncbook report`, and appears in no stdout, stderr, journal, report or other file written —
 * raw, URL-encoded, base64 (alone and as `user:secret` basic auth) or JSON-escaped. The receiving
 * servers prove it was really sent.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.js";
import { cli, type CliResult } from "../support/run.js";
import { tempDir } from "../support/crash-harness.js";

// `+` and `~` make the URL-encoded and base64 forms differ from the raw one
const SECRET = `pl4nted+S3cret~${randomBytes(6).toString("hex")}`;
const FORMS: Record<string, string> = {
  raw: SECRET,
  "URL-encoded": encodeURIComponent(SECRET),
  base64: Buffer.from(SECRET).toString("base64"),
  base64url: Buffer.from(SECRET).toString("base64url"),
  "basic auth (ops)": Buffer.from(`ops:${SECRET}`).toString("base64"),
  "basic auth (hook)": Buffer.from(`hook:${SECRET}`).toString("base64"),
  "basic auth (verifier)": Buffer.from(`verifier:${SECRET}`).toString("base64"),
  "JSON-escaped": JSON.stringify(SECRET).slice(1, -1),
};
const ENV = { SB_SECRET: SECRET };

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let echo: { server: Server; url: string; seen: Seen[] };
/** The fleet of the ok run and of the failing run. */
const sims: Simulator[] = [];
const dir = tempDir("syncbook-secrets-");
const outputs: { what: string; text: string }[] = [];

beforeAll(async () => {
  // answers with everything it received (headers, URL, body): an error message quoting the answer must not leak
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      seen.push({ url: req.url ?? "", headers: req.headers, body });
      const echoed = JSON.stringify({ youSent: { url: req.url, headers: req.headers, body } });
      res.writeHead(req.url?.startsWith("/fail") ? 500 : 200, { "content-type": "application/json" }).end(echoed);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  echo = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
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
  await new Promise((r) => echo?.server.close(r));
});

const withCreds = (url: string, user: string): string => url.replace("http://", `http://${user}:\${env.SB_SECRET}@`);

function runbook(hookPath = "/flags", s = sims[0]!): string {
  const at = withCreds;
  return `runbook: 1
name: secrets
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: sharded, shards: 2, serverVersion: "6.0" }
  cluster1: { topology: sharded, shards: 2, serverVersion: "6.0" }
instances:
${s.instances.map((i) => `  - { url: "${at(i.url, "ops")}", name: sync${i.index} }`).join("\n")}
verifier: "${at(s.verifierUrl, "verifier")}"
defaults: { pollInterval: 50ms, timeout: 30m, requestTimeout: 2s, retry: { giveUpAfter: 10m } }
notify:
  - { use: webhook, with: { url: "${withCreds(echo.url, "hook")}/notify?key=\${env.SB_SECRET}", headers: { X-Api-Key: "\${env.SB_SECRET}" }, retries: 0 }, on: [run.started, step.failed, hook.failed, run.finished] }
  - { use: file, with: { path: notes.jsonl }, on: [run.started, step.finished, step.failed, log, run.finished] }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - id: flag
    hook:
      use: http
      with: { url: "${echo.url}${hookPath}?token=\${env.SB_SECRET}", method: PUT, headers: { Authorization: "Bearer \${env.SB_SECRET}" }, body: { token: "\${env.SB_SECRET}" } }
  - id: dump
    hook:
      use: shell
      with:
        command: [${JSON.stringify(process.execPath)}, -e, "console.log('conn', process.argv[1]); console.error('token', process.env.TOKEN)", "mongodb://admin:\${env.SB_SECRET}@db.example:27017/?authSource=admin"]
        env: { TOKEN: "\${env.SB_SECRET}" }
  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }
  - { id: drained, waitFor: { canCommit: true, lagBelow: 3 } }
  - { id: tell, notify: "committing with \${env.SB_SECRET} now" }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED } }
  - { id: verify, verify: {} }
`;
}

async function run(what: string, args: string[]): Promise<CliResult> {
  const r = await cli(args, { cwd: dir, env: ENV });
  outputs.push({ what: `${what}: stdout`, text: r.stdout }, { what: `${what}: stderr`, text: r.stderr });
  return r;
}

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((n) => {
    const p = join(root, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

function leaks(text: string): string[] {
  return Object.entries(FORMS)
    .filter(([, form]) => text.includes(form))
    .map(([name]) => name);
}

describe("a planted secret appears in no output, log, journal or report", () => {
  it("syncbook run (ok), report, dry-run, a refused --resume, rehearse, and a failing run", async () => {
    const file = join(dir, "rb.yaml");
    writeFileSync(file, runbook());
    const journals = join(dir, "journals");

    const ok = await run("run", [
      "run",
      file,
      "--renderer",
      "simple",
      "--journal-dir",
      journals,
      "--report",
      join(dir, "report-run"),
      "--yes",
    ]);
    expect(ok.code, ok.all).toBe(0);
    expect(ok.stdout).toContain("committing with *** now");
    expect(sims[0]!.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);

    const journal = filesUnder(journals).find((f) => f.endsWith(".jsonl"))!;
    const rep = await run("report", ["report", journal, "--out", join(dir, "report-journal")]);
    expect(rep.code, rep.all).toBe(0);

    const dry = await run("dry-run", ["run", file, "--dry-run"]);
    expect(dry.code, dry.all).toBe(0);

    const again = await run("resume of a finished run", [
      "run",
      file,
      "--resume",
      "--renderer",
      "simple",
      "--journal-dir",
      journals,
    ]);
    expect(again.stderr).toContain("nothing to resume");

    const reh = await run("rehearse", [
      "rehearse",
      file,
      "--renderer",
      "simple",
      "--report",
      join(dir, "report-rehearse"),
      "--time-scale",
      "200",
      "--data",
      "1GiB",
    ]);
    expect(reh.code, reh.all).toBe(0);

    // a hook whose server fails and echoes the secret back: the error, the undo and the notifications stay clean
    const failing = join(dir, "rb-fail.yaml");
    writeFileSync(failing, runbook("/fail", sims[1]).replace("name: secrets", "name: secrets-fail"));
    const bad = await run("failing run", [
      "run",
      failing,
      "--renderer",
      "simple",
      "--journal-dir",
      journals,
      "--report",
      join(dir, "report-fail"),
    ]);
    expect(bad.code, bad.all).toBe(1);
    expect(bad.stderr).toMatch(/step flag failed: .*500/);
    expect(sims[1]!.control.state().writes.enabled).toBe(true);

    // the secret was really used: the servers got it
    const hook = echo.seen.filter((x) => x.url.startsWith("/flags") || x.url.startsWith("/fail"));
    expect(hook.length).toBeGreaterThanOrEqual(2);
    expect(
      hook.every(
        (x) =>
          x.headers.authorization === `Bearer ${SECRET}` &&
          (x.url.includes(SECRET) || x.url.includes(encodeURIComponent(SECRET))) &&
          x.body.includes(SECRET),
      ),
    ).toBe(true);
    const notes = echo.seen.filter((x) => x.url.startsWith("/notify"));
    expect(notes.length).toBeGreaterThan(0);
    expect(notes.every((x) => x.headers["x-api-key"] === SECRET)).toBe(true);
  }, 90_000);

  it("nowhere: stdout and stderr of every command, and every file written (journals, reports, notifier files)", () => {
    expect(outputs.length).toBeGreaterThanOrEqual(12);
    // the grep itself finds every form
    for (const [name, form] of Object.entries(FORMS)) expect(leaks(`a ${form} b`)).toContain(name);
    for (const o of outputs) expect(leaks(o.text), `${o.what} holds the secret:\n${o.text}`).toEqual([]);
    const files = filesUnder(dir).filter((f) => !f.endsWith(".yaml"));
    const kinds = files.map((f) => f.split("/").pop()!);
    // what must have been checked: journals, the three report files of each report, the file notifier's lines
    expect(kinds.filter((k) => k.endsWith(".jsonl") && k !== "notes.jsonl").length).toBeGreaterThanOrEqual(2);
    expect(kinds.filter((k) => k === "report.html").length).toBeGreaterThanOrEqual(4);
    expect(kinds.filter((k) => k === "report.json").length).toBeGreaterThanOrEqual(4);
    expect(kinds).toContain("notes.jsonl");
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      expect(leaks(text), `${f} holds the secret`).toEqual([]);
    }
    // and the runbooks themselves hold only the reference
    expect(readFileSync(join(dir, "rb.yaml"), "utf8")).not.toContain(SECRET);
  });
});
