/**
 * The one stand-in HTTP server of the tests (127.0.0.1, port 0): every request recorded, each
 * answer decided by the test (`startServer`: any answer, or none), or canned (`localServer`: a
 * fixed answer or one per path, for answer shapes the simulator never produces). A proxy in
 * front of a simulated instance is `proxy.ts`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** A recorded request. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A real HTTP server on 127.0.0.1, port 0; `reply` decides each answer (may never answer). */
export async function startServer(
  reply: (req: Seen, n: number, res: ServerResponse) => unknown,
): Promise<{ url: string; seen: Seen[]; close(): Promise<void>; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      const s: Seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      seen.push(s);
      void reply(s, seen.length, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface Canned {
  status?: number;
  /** A string is sent as is; anything else as JSON. */
  body: unknown;
  contentType?: string;
}

export interface LocalServer {
  url: string;
  port: number;
  /** Requests seen: method, path, headers, body text. */
  readonly requests: { method: string; path: string; headers: IncomingMessage["headers"]; body: string }[];
  close(): Promise<void>;
}

/** Answers every request with `answer(path)` (a fixed answer or a function of the path). */
export async function localServer(answer: Canned | ((path: string) => Canned)): Promise<LocalServer> {
  const s = await startServer((req, _n, res) => {
    const a = typeof answer === "function" ? answer(req.url) : answer;
    const text = typeof a.body === "string" ? a.body : JSON.stringify(a.body);
    res.writeHead(a.status ?? 200, { "content-type": a.contentType ?? "application/json" });
    res.end(text);
  });
  return {
    url: s.url,
    port: Number(new URL(s.url).port),
    get requests() {
      return s.seen.map((r) => ({ method: r.method, path: r.url, headers: r.headers, body: r.body }));
    },
    close: s.close,
  };
}
