/** Runbooks and clusters for the preflight tests. */
import type { Document } from "mongodb";
import { parseRunbook, type LoadedRunbook } from "../../src/runbook/index.js";
import type { FakeUser } from "./mongo-wire/fake-cluster.js";

/** The password of the test user: JSON and URL metacharacters, so any leak of it in any escaping shows. */
export const PASSWORD = 'p@ss:w/rd"{}\\%25&?#=';
export const USER = "syncer";

export const SOURCE_ROLES = [
  { role: "readAnyDatabase", db: "admin" },
  { role: "backup", db: "admin" },
  { role: "clusterMonitor", db: "admin" },
];
export const DEST_ROLES = [
  { role: "readWriteAnyDatabase", db: "admin" },
  { role: "restore", db: "admin" },
  { role: "clusterMonitor", db: "admin" },
  { role: "clusterManager", db: "admin" },
];
export const user = (roles: FakeUser["roles"]): FakeUser[] => [{ user: USER, password: PASSWORD, roles }];

export interface RunbookShape {
  source?: "replicaSet" | "sharded";
  destination?: "replicaSet" | "sharded";
  serviceVersion?: string;
  /** The start body, besides source and destination (YAML flow, e.g. `includeNamespaces: [...]`). */
  start?: string;
  clusters?: { cluster0?: string; cluster1?: string };
  preflight?: string;
  /** More steps after the start and its wait (YAML, each line a list item at the steps' indent, e.g. `- reverse: {}`). */
  steps?: string;
}

/** A runbook whose clusters take their uri from SOURCE_URI / DEST_URI. */
export function runbookText(shape: RunbookShape = {}): string {
  const src = shape.source ?? "replicaSet";
  const dst = shape.destination ?? "replicaSet";
  return `runbook: 1
name: preflight-test
serviceVersion: "${shape.serviceVersion ?? "1.17.0"}"
clusters:
  cluster0: { topology: ${src}, uri: "\${env.SOURCE_URI}"${shape.clusters?.cluster0 ?? ""} }
  cluster1: { topology: ${dst}, uri: "\${env.DEST_URI}"${shape.clusters?.cluster1 ?? ""} }
${shape.preflight ? `preflight: ${shape.preflight}\n` : ""}instances:
  - http://127.0.0.1:27182
steps:
  - id: start
    start:
      source: cluster0
      destination: cluster1
${(shape.start ?? "")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => `      ${l}`)
  .join("\n")}
  - waitFor: { canCommit: true }
${(shape.steps ?? "")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => `  ${l}\n`)
  .join("")}`;
}

export async function loadText(text: string, env: Record<string, string>): Promise<LoadedRunbook> {
  const loaded = await parseRunbook(text, "runbooks/preflight-test.yaml", { env });
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length) throw new Error(`test runbook does not load: ${JSON.stringify(errors)}`);
  return loaded;
}

/** A collection with sizes, for fixtures. */
export const coll = (count: number, size: number, more: Document = {}): Document => ({ count, size, ...more });

/** Commands a read-only preflight may send (its reads, plus the driver's handshake, auth and session cleanup). */
export const ALLOWED_ON_THE_WIRE = new Set([
  "hello",
  "isMaster",
  "ismaster",
  "saslStart",
  "saslContinue",
  "endSessions",
  "ping",
  "buildInfo",
  "getParameter",
  "connectionStatus",
  "listDatabases",
  "listCollections",
  "listIndexes",
  "aggregate",
  "find",
  "getMore",
  "killCursors",
  "dbStats",
  "listShards",
  "balancerStatus",
]);
