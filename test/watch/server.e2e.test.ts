/**
 * Issue 38, point 4: `syncbook watch` is safe to leave open on a network. Run through the built
 * CLI on a journal folder: loopback by default, and a DNS-rebinding Host refused there; any other
 * address refused without a token file, and with one every route asks for the token (a bearer
 * header, or the cookie `/?token=` sets); no route changes anything (every other method is 405,
 * for every path); security headers on every answer; bad requests (unknown paths, bytes that are
 * not HTTP, a header too large) are 4xx and the server keeps answering.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, startCli, tempDir, type CliRun } from "../support/run.js";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; path?: string } = {},
): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: opts.method ?? "GET",
        path: opts.path ?? u.pathname,
        headers: opts.headers,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        // an event stream never ends: its first frame is enough
        res.on("data", (d: string) => {
          body += d;
          if (res.headers["content-type"]?.startsWith("text/event-stream")) req.destroy();
        });
        const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        res.on("end", done);
        res.on("close", done);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(port, "127.0.0.1", () => sock.write(bytes));
    let out = "";
    sock.on("data", (d) => (out += d.toString()));
    sock.on("close", () => resolve(out));
    sock.on("error", () => resolve(out));
    setTimeout(() => sock.destroy(), 3000);
  });
}

async function startWatch(args: string[], cwd: string): Promise<{ run: CliRun; url: string }> {
  const run = startCli(["watch", ...args], { cwd });
  let out = "";
  run.child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  await run.waitFor(/syncbook watch: http:\/\/\S+\//);
  return { run, url: /syncbook watch: (http:\/\/\S+\/)/.exec(out)![1]! };
}

const PATHS = ["/", "/state.json", "/events"];

describe("syncbook watch on loopback (the default)", () => {
  let dir: string;
  let w: { run: CliRun; url: string };
  let port: number;

  beforeAll(async () => {
    dir = tempDir();
    const folder = join(dir, ".syncbook", "none");
    mkdirSync(folder, { recursive: true });
    w = await startWatch([folder], dir);
    port = Number(new URL(w.url).port);
  }, 30_000);

  afterAll(async () => {
    w?.run.child.kill("SIGINT");
    const end = await w?.run.done;
    expect(end?.code).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it("listens on 127.0.0.1 and serves the three routes with the security headers", async () => {
    expect(w.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    for (const p of PATHS) {
      const a = await get(w.url, { path: p });
      expect(a.status, p).toBe(200);
      const csp = String(a.headers["content-security-policy"]);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(a.headers["x-content-type-options"]).toBe("nosniff");
      expect(a.headers["x-frame-options"]).toBe("DENY");
      expect(a.headers["referrer-policy"]).toBe("no-referrer");
    }
  });

  it("the page is self-contained: its script and style under the response's nonce, nothing external", async () => {
    const a = await get(w.url);
    const nonce = /script-src 'nonce-([^']+)'/.exec(String(a.headers["content-security-policy"]))?.[1];
    expect(nonce).toBeTruthy();
    expect(a.body).toContain(`<script nonce="${nonce}">`);
    expect(a.body).toContain(`<style nonce="${nonce}">`);
    expect(a.body).not.toMatch(/\b(src|href)="(https?:)?\/\//);
    expect(a.body).not.toMatch(/https?:\/\//);
    // a fresh nonce each time
    const b = await get(w.url);
    expect(String(b.headers["content-security-policy"])).not.toContain(nonce!);
  });

  it("changes nothing: every other method, on every path, is 405", async () => {
    for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"])
      for (const p of [...PATHS, "/nope"]) {
        const a = await get(w.url, { method, path: p });
        expect(a.status, `${method} ${p}`).toBe(405);
        expect(a.headers.allow).toBe("GET, HEAD");
      }
    // CONNECT and an Upgrade never reach a route: refused on the socket, the server goes on
    expect(await raw(port, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 405/,
    );
    expect(
      await raw(
        port,
        `GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
      ),
    ).toMatch(/^HTTP\/1\.1 400/);
    expect((await get(w.url)).status).toBe(200);
  });

  it("answers 404 to any other path, whatever it looks like", async () => {
    for (const p of [
      "/nope",
      "/state.json/",
      "/../etc/passwd",
      "/%2e%2e/%2e%2e/etc/passwd",
      "//evil.example/",
      "/events/x",
      "/%",
      "/?a=%ZZ",
    ])
      expect((await get(w.url, { path: p })).status, p).toBe(p === "/?a=%ZZ" ? 200 : 404);
  });

  it("refuses a Host that is not its loopback address (DNS rebinding)", async () => {
    for (const host of ["evil.example", `evil.example:${port}`, "127.0.0.1:1", "10.0.0.1"])
      expect((await get(w.url, { headers: { Host: host } })).status, host).toBe(421);
    expect((await get(w.url, { headers: { Host: `localhost:${port}` } })).status).toBe(200);
  });

  it("answers bytes that are not HTTP with 400, and keeps answering", async () => {
    expect(await raw(port, "GARBAGE\r\n\r\n")).toMatch(/^HTTP\/1\.1 400/);
    expect(await raw(port, `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 4\d\d/,
    );
    expect(await raw(port, "GET /\u0000 HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 4\d\d/);
    expect((await get(w.url)).status).toBe(200);
  });
});

describe("syncbook watch on another address", () => {
  let dir: string;
  let folder: string;

  beforeAll(() => {
    dir = tempDir();
    folder = join(dir, ".syncbook", "none");
    mkdirSync(folder, { recursive: true });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses to start without a token file, and with a token too short", async () => {
    const none = await cli(["watch", folder, "--listen", "0.0.0.0:0"], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/an address other than loopback needs a token/);
    expect(none.stderr).toMatch(/--token-file FILE/);
    writeFileSync(join(dir, "short"), "abc\n");
    const short = await cli(["watch", folder, "--listen", "0.0.0.0:0", "--token-file", join(dir, "short")], {
      cwd: dir,
    });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 16 characters/);
    // the token is never a flag value
    const flag = await cli(["watch", folder, "--listen", "0.0.0.0:0", "--token", "x".repeat(20)], { cwd: dir });
    expect(flag.code).not.toBe(0);
  });

  it("asks for the token on every route: a bearer header, or the cookie /?token= sets", async () => {
    const token = "t0ken-for-the-bridge-call-42";
    writeFileSync(join(dir, "token"), `${token}\n`);
    const w = await startWatch([folder, "--listen", "0.0.0.0:0", "--token-file", join(dir, "token")], dir);
    try {
      const url = w.url.replace("0.0.0.0", "127.0.0.1");
      for (const p of PATHS) {
        expect((await get(url, { path: p })).status, p).toBe(401);
        expect((await get(url, { path: p, headers: { Authorization: "Bearer wrong-token-of-same-len" } })).status).toBe(
          401,
        );
        expect((await get(url, { path: p, headers: { Authorization: `Bearer ${token}` } })).status, p).toBe(200);
      }
      expect((await get(url, { path: "/?token=nope" })).status).toBe(401);
      const set = await get(url, { path: `/?token=${token}` });
      expect(set.status).toBe(303);
      expect(set.headers.location).toBe("/");
      const cookie = String(set.headers["set-cookie"]);
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
      const c = cookie.split(";")[0]!;
      for (const p of PATHS) expect((await get(url, { path: p, headers: { Cookie: c } })).status, p).toBe(200);
      // any host may reach it there (the token guards it), and the token never appears in a body
      const st = await get(url, {
        path: "/state.json",
        headers: { Authorization: `Bearer ${token}`, Host: "watch.example" },
      });
      expect(st.status).toBe(200);
      expect(st.body).not.toContain(token);
    } finally {
      w.run.child.kill("SIGINT");
      await w.run.done;
    }
  });
});
