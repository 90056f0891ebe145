/**
 * The HTTP layer: one node:http server per instance and one for the verifier, all in this
 * process. JSON in, JSON out, whatever arrives: malformed HTTP, unknown methods, huge bodies
 * and bad JSON all get a JSON error answer (`{success:false, error, errorDescription}`), and
 * nothing a client sends can throw out of a handler. Transport faults (faults.ts) act here:
 * reset → latency → 500 → non-JSON → the handler → reset-after.
 * The /sim/ control API is served on every port and is never faulted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { handleControl } from "./control.js";
import { errorReply, type Reply } from "./replies.js";
import type { SimWorld } from "./world.js";
import type { Command } from "./coordinator.js";

type Target = number | "verifier";

const INSTANCE_ROUTES: Record<string, { method: string; endpoint: string }> = {
  "/api/v1/start": { method: "POST", endpoint: "start" },
  "/api/v1/commit": { method: "POST", endpoint: "commit" },
  "/api/v1/pause": { method: "POST", endpoint: "pause" },
  "/api/v1/resume": { method: "POST", endpoint: "resume" },
  "/api/v1/reverse": { method: "POST", endpoint: "reverse" },
  "/api/v1/progress": { method: "GET", endpoint: "progress" },
};
const VERIFIER_ROUTES: Record<string, { method: string; endpoint: string }> = {
  "/api/v1/check": { method: "POST", endpoint: "check" },
  "/api/v1/writesOff": { method: "POST", endpoint: "writesOff" },
  "/api/v1/progress": { method: "GET", endpoint: "progress" },
  "/api/v1/summary": { method: "GET", endpoint: "summary" },
  "/api/v1/docMismatches": { method: "GET", endpoint: "docMismatches" },
  "/api/v1/nsMismatches": { method: "GET", endpoint: "nsMismatches" },
};

/** Bodies beyond this many times the limit are not even drained: the connection is cut. */
const DRAIN_FACTOR = 16;

const NON_JSON_BODIES = [
  {
    status: 502,
    type: "text/html",
    body: "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n",
  },
  { status: 200, type: "application/json", body: '{"success":true,"progress":{"state":"RUN' },
  { status: 200, type: "text/plain", body: "upstream connect error or disconnect/reset before headers\n" },
];

function rawError(socket: Duplex, status: number, reason: string, description: string): void {
  const body = JSON.stringify({ success: false, error: "BadRequest", errorDescription: description });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function sendJson(res: ServerResponse, reply: Reply, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  if (reply.drop) {
    res.socket?.destroy();
    return;
  }
  const text = reply.text ?? JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": reply.text !== undefined ? (reply.contentType ?? "text/plain") : "application/json",
    "content-length": Buffer.byteLength(text),
    ...extraHeaders,
  });
  res.end(text);
}

/** Reads the body up to `limit` bytes; beyond it, drains and reports `tooLarge`. */
function readBody(req: IncomingMessage, limit: number): Promise<{ text: string; tooLarge: boolean } | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit * DRAIN_FACTOR) {
        req.socket.destroy();
        resolve(undefined);
        return;
      }
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on("end", () => resolve({ text: tooLarge ? "" : Buffer.concat(chunks).toString("utf8"), tooLarge }));
    req.on("error", () => resolve(undefined));
    req.on("close", () => resolve(undefined));
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/** One listening target (an instance or the verifier). */
export class TargetServer {
  readonly server: Server;
  port = 0;
  down = false;

  constructor(
    readonly world: SimWorld,
    readonly target: Target,
    readonly host: string,
    readonly maxBodyBytes: number,
  ) {
    // requireHostHeader: false, or node answers a Host-less HTTP/1.1 request itself, in plain text.
    this.server = createServer(
      { requestTimeout: 60_000, headersTimeout: 30_000, keepAliveTimeout: 5_000, requireHostHeader: false },
      (req, res) => {
        this.#onRequest(req, res).catch((err: unknown) => {
          // A bug, not a client's doing: still a JSON answer, never a crash.
          sendJson(res, errorReply(500, "InternalError", `simulator error: ${(err as Error)?.message ?? String(err)}`));
        });
      },
    );
    this.server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
      if (err.code === "ECONNRESET" || !socket.writable) {
        socket.destroy();
        return;
      }
      if (err.code === "HPE_HEADER_OVERFLOW")
        rawError(socket, 431, "Request Header Fields Too Large", "the request headers are too large");
      else if (err.code === "ERR_HTTP_REQUEST_TIMEOUT")
        rawError(socket, 408, "Request Timeout", "the request was not received in time");
      else rawError(socket, 400, "Bad Request", `malformed HTTP request (${err.code ?? err.message})`);
    });
    // CONNECT gets its own event in node:http; without a listener the socket would just close.
    this.server.on("connect", (_req: IncomingMessage, socket: Duplex) =>
      rawError(socket, 405, "Method Not Allowed", "CONNECT is not supported"),
    );
  }

  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once("error", onError);
      this.server.listen(port, this.host, () => {
        this.server.off("error", onError);
        const addr = this.server.address();
        this.port = typeof addr === "object" && addr ? addr.port : port;
        resolve(this.port);
      });
    });
  }

  /**
   * The verifier process exits: stop accepting and cut idle connections. With `afterInFlight`
   * (a graceful shutdown, as Go's http.Server.Shutdown does) the requests being handled are
   * answered first, their connections cut after the answer; without it every connection is cut
   * at once (the process died).
   */
  async exit(afterInFlight?: Promise<void>): Promise<void> {
    if (this.down) return;
    this.down = true;
    this.server.close();
    if (!afterInFlight) {
      this.server.closeAllConnections();
      return;
    }
    this.server.closeIdleConnections();
    await afterInFlight.catch(() => {});
    await new Promise((r) => setImmediate(r));
    if (this.down) this.server.closeIdleConnections();
  }

  /** Down: stop accepting, cut idle connections, and cut the others after their answer. */
  async setUp(up: boolean): Promise<void> {
    if (up) {
      if (!this.down) return;
      await this.listen(this.port);
      this.down = false;
      return;
    }
    if (this.down) return;
    this.down = true;
    this.server.close();
    this.server.closeIdleConnections();
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
      if (!this.server.listening) setImmediate(resolve);
    });
  }

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.on("error", () => {});
    res.on("error", () => {});
    const socket: Socket = req.socket;
    if (this.down) {
      socket.destroy();
      return;
    }
    res.on("finish", () => {
      if (this.down) socket.destroy();
    });
    const world = this.world;
    const rawUrl = req.url ?? "/";
    const q = rawUrl.indexOf("?");
    const path = q >= 0 ? rawUrl.slice(0, q) : rawUrl;
    const method = req.method ?? "GET";
    const body = await readBody(req, this.maxBodyBytes);
    if (!body) return; // the client went away, or sent far too much
    if (path === "/sim" || path.startsWith("/sim/")) {
      const reply = body.tooLarge ? tooLarge(this.maxBodyBytes) : await handleControl(world, method, path, body.text);
      sendJson(res, reply);
      return;
    }
    const verifier = this.target === "verifier";
    const routes = verifier ? VERIFIER_ROUTES : INSTANCE_ROUTES;
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    world.count(this.target, route ? `${method} ${path}` : "other");
    const faults = world.book.transport(this.target, route?.endpoint);
    if (faults.reset) {
      socket.destroy();
      return;
    }
    if (faults.latencyMs > 0) await sleep(faults.latencyMs);
    if (faults.http500)
      return sendJson(
        res,
        errorReply(500, "InternalError", "simulated fault: internal server error (the request was not applied)"),
      );
    if (faults.nonJson) {
      const pick = NON_JSON_BODIES[faults.variant % NON_JSON_BODIES.length]!;
      res.writeHead(pick.status, { "content-type": pick.type, "content-length": Buffer.byteLength(pick.body) });
      res.end(pick.body);
      return;
    }
    let reply: Reply;
    const headers: Record<string, string> = {};
    if (body.tooLarge)
      reply = verifier
        ? {
            status: 413,
            body: { error: `the request body is larger than ${this.maxBodyBytes} bytes (simulator limit)` },
          }
        : tooLarge(this.maxBodyBytes);
    else if (!route)
      // gin's own answers on the verifier's port: plain text
      reply = verifier
        ? { status: 404, text: "404 page not found" }
        : errorReply(404, "NotFound", `no such endpoint: ${method} ${path.slice(0, 200)}`);
    else if (method !== route.method) {
      reply = verifier
        ? { status: 405, text: "405 method not allowed" }
        : errorReply(405, "MethodNotAllowed", `${path} accepts ${route.method}, not ${method}`);
      headers.allow = route.method;
    } else if (verifier) {
      const e = route.endpoint;
      reply =
        e === "progress"
          ? await world.verifierHost.progress()
          : e === "check" || e === "writesOff"
            ? await world.verifierHost.command(e, body.text)
            : world.verifierHost.report(
                e as "summary" | "docMismatches" | "nsMismatches",
                q >= 0 ? rawUrl.slice(q + 1) : "",
              );
    } else {
      reply =
        route.endpoint === "progress"
          ? world.progress(this.target)
          : await world.command(this.target, route.endpoint as Command, body.text);
    }
    if (faults.resetAfter) {
      socket.destroy();
      return;
    }
    sendJson(res, reply, headers);
  }
}

const tooLarge = (limit: number): Reply =>
  errorReply(413, "PayloadTooLarge", `the request body is larger than ${limit} bytes`);
