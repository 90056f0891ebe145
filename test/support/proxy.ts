/**
 * A loopback HTTP proxy in front of one simulated instance, for faults the simulator cannot be:
 * connections refused for exactly as long as a test says (a request that certainly never left
 * the runner), while the instance behind it keeps running. Every answer closes its connection,
 * so each request opens a new one and `refuse()` takes effect on the very next request.
 */
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Proxy {
  /** `http://127.0.0.1:<port>`: put it in the runbook instead of the instance's URL. */
  url: string;
  /** Stops listening and cuts open connections: the next request is refused at connect. */
  refuse(): void;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  /** From now on, forwards to another address (another process answers at this one). */
  retarget(url: string): void;
  /** Requests that reached the proxy, as `METHOD /path`. */
  seen: string[];
  close(): Promise<void>;
}

export async function proxyTo(target: string): Promise<Proxy> {
  let to = new URL(target);
  const sockets = new Set<Socket>();
  const seen: string[] = [];
  const make = (): Server => {
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const up = httpRequest(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, { ...r.headers, connection: "close" });
          r.pipe(res);
        },
      );
      up.on("error", () => res.destroy());
      req.pipe(up);
    });
    server.on("connection", (s: Socket) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    return server;
  };
  let server = make();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  let listening = true;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    retarget(url) {
      to = new URL(url);
    },
    refuse() {
      if (!listening) return;
      listening = false;
      server.close();
      for (const s of sockets) s.destroy();
    },
    async accept() {
      if (listening) return;
      server = make();
      await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
      listening = true;
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (listening) await new Promise<void>((r) => server.close(() => r()));
      listening = false;
    },
  };
}
