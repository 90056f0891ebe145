/**
 * `syncbook watch`'s HTTP server: read-only, safe to leave open on a network.
 *
 * - Three routes, GET (and HEAD) only: `/` the page, `/state.json`, `/events` (server-sent
 *   events, each a whole state). Every other method is 405, every other path 404: no route changes
 *   anything, there is nothing to change.
 * - On a loopback address the Host header must name a loopback host (a DNS-rebinding page in the
 *   operator's browser cannot read the state through its own name). On any other address a token
 *   is required (read from a file by the CLI, never a flag value): `Authorization: Bearer`, or
 *   the cookie `/?token=` sets (HttpOnly, SameSite=Strict; the redirect drops it from the address
 *   bar and history). Compared in constant time.
 * - Security headers on every answer: a Content-Security-Policy with `default-src 'none'`, the
 *   page's inline style and script allowed by a per-response nonce, `connect-src 'self'`,
 *   `frame-ancestors 'none'`; nosniff; X-Frame-Options DENY; no referrer; no caching.
 * - A bad request is a 4xx and a bad connection is closed: never a crash.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { watchPage } from "./page.js";

/** Pages open at once, at most (each an `/events` stream); the next gets 503. */
export const MAX_STREAMS = 256;
/** A comment line on every stream this often, so proxies and the browser keep it open. */
const HEARTBEAT_MS = 15_000;
const COOKIE = "syncbook_watch";

export interface WatchServerOptions {
  host: string;
  port: number;
  /** Required on a non-loopback address (the CLI refuses to start without one there). */
  token?: string;
  /** The state now, serialized (the same bytes every reader gets). */
  state: () => string;
}

export interface WatchServer {
  readonly url: string;
  readonly server: Server;
  /** Sends the state to every open `/events` stream. */
  broadcast(json: string): void;
  /** Open `/events` streams. */
  streams(): number;
  close(): Promise<void>;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The headers every answer carries; the page's own nonce for its inline style and script. */
function securityHeaders(res: ServerResponse, nonce?: string): void {
  const page = nonce ? `script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; ` : "";
  res.setHeader(
    "Content-Security-Policy",
    `default-src 'none'; ${page}connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  );
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
}

function plain(res: ServerResponse, code: number, text: string, extra: Record<string, string> = {}): void {
  securityHeaders(res);
  res.writeHead(code, { "Content-Type": "text/plain; charset=utf-8", ...extra });
  res.end(`${text}\n`);
}

function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === COOKIE) {
      try {
        return decodeURIComponent(v.join("="));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export function startWatchServer(opts: WatchServerOptions): Promise<WatchServer> {
  const streams = new Set<ServerResponse>();
  const loopback = isLoopback(opts.host);
  let port = opts.port;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== "GET" && req.method !== "HEAD")
      return plain(res, 405, "read-only: GET only", { Allow: "GET, HEAD" });
    let url: URL;
    try {
      // the path as sent, never read as an address of its own (`//evil.example/` is a path here)
      url = new URL(`http://watch.invalid${req.url?.startsWith("/") ? req.url : `/${req.url ?? ""}`}`);
    } catch {
      return plain(res, 400, "bad request");
    }
    if (loopback) {
      // DNS rebinding: only our own loopback names may reach a loopback server
      const host = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(req.headers.host ?? "");
      if (!host || !isLoopback(host[1]!) || (host[2] !== undefined && Number(host[2]) !== port))
        return plain(res, 421, "this server answers only to its loopback address");
    }
    if (opts.token !== undefined) {
      const q = url.searchParams.get("token");
      if (url.pathname === "/" && q !== null) {
        if (!sameToken(q, opts.token)) return plain(res, 401, "wrong token");
        securityHeaders(res);
        res.writeHead(303, {
          Location: "/",
          "Set-Cookie": `${COOKIE}=${encodeURIComponent(q)}; HttpOnly; SameSite=Strict; Path=/`,
        });
        return void res.end();
      }
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      if (!sameToken(auth, opts.token) && !sameToken(cookieToken(req), opts.token))
        return plain(res, 401, "a token is required: open /?token=<the token in the file given to --token-file>", {
          "WWW-Authenticate": "Bearer",
        });
    }
    if (url.pathname === "/") {
      const nonce = randomBytes(16).toString("base64");
      securityHeaders(res, nonce);
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      return void res.end(req.method === "HEAD" ? undefined : watchPage(nonce));
    }
    if (url.pathname === "/state.json") {
      securityHeaders(res);
      res.writeHead(200, { "Content-Type": "application/json; charset=utf-8" });
      return void res.end(req.method === "HEAD" ? undefined : opts.state());
    }
    if (url.pathname === "/events") {
      if (streams.size >= MAX_STREAMS) return plain(res, 503, "too many open pages", { "Retry-After": "5" });
      securityHeaders(res);
      res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", Connection: "keep-alive" });
      if (req.method === "HEAD") return void res.end();
      res.write(`retry: 1000\n\ndata: ${opts.state()}\n\n`);
      streams.add(res);
      const drop = (): void => void streams.delete(res);
      req.on("close", drop);
      res.on("error", drop);
      return;
    }
    plain(res, 404, "not found: this server has /, /state.json and /events");
  };

  const server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch {
      // never a crash: whatever went wrong with one request stays with it
      if (!res.headersSent) plain(res, 400, "bad request");
      else res.destroy();
    }
  });
  // CONNECT and Upgrade never reach the request handler: answered here, never left hanging
  server.on("connect", (_req, socket) => {
    socket.end("HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n");
  });
  server.on("upgrade", (_req, socket) => {
    socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
  });
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  const beat = setInterval(() => {
    for (const s of streams) s.write(": keep-alive\n\n");
  }, HEARTBEAT_MS);
  beat.unref();

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      port = (server.address() as AddressInfo).port;
      const shown = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
      resolve({
        url: `http://${shown}:${port}/`,
        server,
        broadcast(json: string): void {
          const frame = `data: ${json}\n\n`;
          for (const s of streams) s.write(frame);
        },
        streams: () => streams.size,
        close(): Promise<void> {
          clearInterval(beat);
          for (const s of streams) s.end();
          streams.clear();
          return new Promise((r) => {
            server.close(() => r());
            server.closeAllConnections();
          });
        },
      });
    });
  });
}
