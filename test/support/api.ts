/**
 * Helpers of the API and fleet tests: a tiny local HTTP server (127.0.0.1, port 0) for answer
 * shapes the simulator never produces, and simulator shortcuts.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startSimulator, type Simulator, type SimulatorOptions } from "../../src/sim/index.js";

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
  requests: { method: string; path: string; headers: IncomingMessage["headers"]; body: string }[];
  close(): Promise<void>;
}

/** Answers every request with `answer(path)` (a fixed answer or a function of the path). */
export async function localServer(answer: Canned | ((path: string) => Canned)): Promise<LocalServer> {
  const requests: LocalServer["requests"] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
      const a = typeof answer === "function" ? answer(req.url ?? "") : answer;
      const text = typeof a.body === "string" ? a.body : JSON.stringify(a.body);
      res.writeHead(a.status ?? 200, { "content-type": a.contentType ?? "application/json" });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The start body of a replica set → sharded sync (the simulator's default clusters). */
export const RS_TO_SHARDED = { source: "cluster0", destination: "cluster1", sharding: { shardingEntries: [] } };

/** A simulator with a frozen clock (move it with control.advance), 1 GiB of data. */
export function frozenSim(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ timeScale: 0, data: "1GiB", ...options });
}
