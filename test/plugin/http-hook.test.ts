/**
 * The built-in `http` hook against a real local server: "a request with undici: method, URL,
 * headers that may carry `${env.*}` secrets, body, expected status, retries, timeout"
 * (issue #5, point 3).
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadPlugins, runHook, stepInfo, type PluginRegistry } from "../../src/plugin/index.js";
import { recordingContext, tempDir } from "../support/plugin.js";
import { startServer } from "../support/http-server.js";

let registry: PluginRegistry;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function setup() {
  registry ??= (await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: "all" })).registry;
  return registry;
}

const SECRET = "Bearer tok-PLANTED-9f8e7d6c";
const step = (redact: (s: string) => string, w: Record<string, unknown> = {}) =>
  stepInfo(
    3,
    "stop-writes",
    "stopWrites",
    "Stop writes",
    { id: "stop-writes", stopWrites: { use: "http", with: w } },
    redact,
  );

describe("http hook", () => {
  it("sends the method, headers and JSON body, and succeeds on the expected status", async () => {
    const srv = await startServer((_r, _n, res) => res.writeHead(204).end());
    closers.push(srv.close);
    const ctx = recordingContext(tempDir(), [SECRET]);
    const w = {
      url: `${srv.url}/flags/sales?token=abc`,
      method: "PUT",
      headers: { Authorization: SECRET, "X-Site": "eu" },
      body: { enabled: false },
      expectStatus: 204,
    };
    const out = await runHook(await setup(), { use: "http", with: w }, step(ctx.redact, w), ctx, { timeoutMs: 5000 });
    expect(out).toMatchObject({ ok: true, summary: `PUT ${srv.url}/flags/sales answered 204` });
    expect(srv.seen).toHaveLength(1);
    const req = srv.seen[0]!;
    expect(req.method).toBe("PUT");
    expect(req.url).toBe("/flags/sales?token=abc");
    expect(req.headers.authorization).toBe(SECRET);
    expect(req.headers["x-site"]).toBe("eu");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req.body)).toEqual({ enabled: false });
    expect(ctx.logs.join("\n")).not.toContain("token=abc");
  });

  it("a user and password in the URL are sent as basic auth (as curl does), and never printed", async () => {
    const srv = await startServer((_r, n, res) => res.writeHead(n === 1 ? 204 : 401).end());
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const url = srv.url.replace("http://", "http://ops%40corp:p%40ss-PLANTED-71@");
    const out = await runHook(await setup(), { use: "http", with: { url: `${url}/flag` } }, step(ctx.redact), ctx, {
      timeoutMs: 5000,
    });
    expect(out.ok).toBe(true);
    expect(srv.seen[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from("ops@corp:p@ss-PLANTED-71").toString("base64")}`,
    );
    expect(srv.seen[0]!.url).toBe("/flag");
    // an Authorization header given outright wins; a failure message shows neither
    const again = await runHook(
      await setup(),
      { use: "http", with: { url: `${url}/flag`, headers: { Authorization: SECRET } } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(srv.seen[1]!.headers.authorization).toBe(SECRET);
    expect(again.ok).toBe(false);
    const printed = JSON.stringify([again, ctx.logs]);
    expect(printed).toContain("answered 401");
    expect(printed).not.toMatch(/PLANTED|p%40ss|tok-/);
  });

  it("an answer that echoes the credentials is redacted in retry warnings too; a token as the URL's user is a secret", async () => {
    const srv = await startServer((r, n, res) =>
      res
        .writeHead(n === 1 ? 503 : 401)
        .end(
          `echo: ${r.headers.authorization} ${Buffer.from(String(r.headers.authorization).slice(6), "base64").toString()}`,
        ),
    );
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const url = srv.url.replace("http://", "http://ops:Secr3t-PLANTED@");
    const out = await runHook(
      await setup(),
      { use: "http", with: { url, retries: 1, retryDelay: "10ms" } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(out.ok).toBe(false);
    expect(ctx.logs.join("\n")).toContain("retrying");
    const token = srv.url.replace("http://", "http://tok-PLANTED-42@");
    const out2 = await runHook(await setup(), { use: "http", with: { url: token } }, step(ctx.redact), ctx, {
      timeoutMs: 5000,
    });
    expect(out2.ok).toBe(false);
    const printed = JSON.stringify([out, out2, ctx.logs]);
    expect(printed).toContain("answered 401");
    expect(printed).not.toMatch(/PLANTED|b3BzOlNlY3IzdC1QTEFOVEVE|dG9rLVBMQU5URUQtNDI6/);
  });

  it("sends a string body as is, defaults to POST and accepts any 2xx", async () => {
    const srv = await startServer((_r, _n, res) => res.writeHead(201).end("created"));
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const out = await runHook(
      await setup(),
      { use: "http", with: { url: srv.url, body: "writes=off", headers: { "Content-Type": "text/plain" } } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(out.ok).toBe(true);
    expect(srv.seen[0]).toMatchObject({ method: "POST", body: "writes=off" });
    expect(srv.seen[0]!.headers["content-type"]).toBe("text/plain");
  });

  it("fails on an unexpected status without retrying a 4xx, and never echoes a header", async () => {
    const srv = await startServer((r, _n, res) =>
      res.writeHead(403, { "content-type": "text/plain" }).end(`forbidden for ${r.headers.authorization}`),
    );
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const out = await runHook(
      await setup(),
      { use: "http", with: { url: srv.url, headers: { Authorization: SECRET }, retries: 3 } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(out.ok).toBe(false);
    expect(srv.seen).toHaveLength(1);
    if (!out.ok) {
      expect(out.error).toMatch(
        /^hook http failed: POST http:\/\/127\.0\.0\.1:\d+\/ answered 403 \(forbidden for \*\*\*\), expected 2xx$/,
      );
      expect(out.error).not.toContain("tok-PLANTED");
    }
    expect(ctx.logs.join("\n")).not.toContain("tok-PLANTED");
  });

  it("retries 5xx and transport errors, then succeeds", async () => {
    const srv = await startServer((_r, n, res) => {
      if (n === 1) res.socket?.destroy();
      else if (n === 2) res.writeHead(503).end("busy");
      else res.writeHead(200).end("ok");
    });
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const out = await runHook(
      await setup(),
      { use: "http", with: { url: srv.url, retries: 2, retryDelay: "10ms" } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(out).toMatchObject({ ok: true });
    expect(srv.seen).toHaveLength(3);
    expect(ctx.logs.filter((l) => l.startsWith("warn http: POST")).length).toBe(2);
    expect(ctx.logs.some((l) => l.includes("answered 503 (busy), expected 2xx; retrying"))).toBe(true);
  });

  it("gives up after its retries, saying how many attempts", async () => {
    const srv = await startServer((_r, _n, res) => res.writeHead(500).end());
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    const out = await runHook(
      await setup(),
      { use: "http", with: { url: srv.url, retries: 1, retryDelay: "1ms", expectStatus: ["200", "2xx"] } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error).toContain("answered 500, expected 200 or 2xx (after 2 attempts)");
    expect(srv.seen).toHaveLength(2);
  });

  it("times out an attempt that gets no answer, and the step's timeout bounds every attempt", async () => {
    const srv = await startServer(() => {
      /* never answers */
    });
    closers.push(srv.close);
    const ctx = recordingContext(tempDir());
    let t = performance.now();
    const perAttempt = await runHook(
      await setup(),
      { use: "http", with: { url: srv.url, timeout: "150ms" } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(perAttempt.ok).toBe(false);
    if (!perAttempt.ok) expect(perAttempt.error).toContain("no answer within 150ms");
    expect(performance.now() - t).toBeLessThan(2000);

    t = performance.now();
    const bounded = await runHook(
      await setup(),
      { use: "http", with: { url: srv.url, retries: 5, retryDelay: "10ms" } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 300 },
    );
    expect(bounded).toMatchObject({ ok: false, timedOut: true });
    if (!bounded.ok) expect(bounded.error).toBe("hook http timed out after 300ms; abandoned");
    expect(performance.now() - t).toBeLessThan(2000);
  });

  it("fails cleanly when nothing listens, and checks its options at run time too", async () => {
    const ctx = recordingContext(tempDir());
    const down = await runHook(
      await setup(),
      { use: "http", with: { url: "http://127.0.0.1:1/x" } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(down.ok).toBe(false);
    if (!down.ok) expect(down.error).toMatch(/^hook http failed: POST http:\/\/127\.0\.0\.1:1\/x .*ECONNREFUSED/);
    const bad = await runHook(
      await setup(),
      { use: "http", with: { url: "http://x", retries: -1 } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(bad).toMatchObject({ ok: false, error: "hook http: option `retries` must be >= 0" });
  });
});

describe("http hook as a write switch's reader (expectJson, a stopWrites check)", () => {
  const read = async (body: string, expectJson: Record<string, unknown>) => {
    const srv = await startServer((_r, _n, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end(body),
    );
    closers.push(srv.close);
    const ctx = recordingContext(tempDir(), [SECRET]);
    const w = { url: `${srv.url}/switch`, method: "GET", headers: { Authorization: SECRET }, expectJson };
    return {
      out: await runHook(await setup(), { use: "http", with: w }, step(ctx.redact, w), ctx, { timeoutMs: 5000 }),
      url: srv.url,
    };
  };

  it("the body holds every path's value (deeply): ok, and the summary says what was read", async () => {
    const { out, url } = await read('{"writes":{"enabled":false,"tags":["a"]},"mode":"ro"}', {
      "writes.enabled": false,
      "writes.tags": ["a"],
      mode: "ro",
    });
    expect(out).toMatchObject({
      ok: true,
      summary: `GET ${url}/switch answered 200 with writes.enabled, writes.tags, mode as expected`,
    });
  });

  it("a value that differs, a path that is absent, an array index, or a body that is not JSON: the hook fails saying which", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['{"writes":{"enabled":true}}', { "writes.enabled": false }, "writes.enabled is true (expected false)"],
      ['{"writes":{}}', { "writes.enabled": false }, "writes.enabled is absent (expected false)"],
      ['{"writes":null}', { "writes.enabled": false }, "writes.enabled is absent (expected false)"],
      ['{"items":[{"s":"on"}]}', { "items.0.s": "off" }, 'items.0.s is "on" (expected "off")'],
      ["<html>maintenance</html>", { enabled: false }, "its body is not JSON"],
    ];
    for (const [body, expectJson, why] of cases) {
      const { out, url } = await read(body, expectJson);
      expect(out.ok, body).toBe(false);
      const error = out.ok ? "" : out.error;
      expect(error).toBe(`hook http failed: GET ${url}/switch answered 200, but ${why}`);
      expect(error).not.toContain("PLANTED");
    }
  });
});
