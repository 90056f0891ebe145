/**
 * Preflight: the runbook checked against the real clusters, read-only, with the official driver.
 *
 * `runPreflight(loaded, opts)` connects to every cluster of `clusters:` that has a `uri`, reads
 * its facts (read.ts), runs the check families (checks/*.ts, pure functions over those facts),
 * and returns lint-shaped diagnostics (redacted, positioned at the runbook line they concern)
 * plus the synced namespace set. It prints nothing and emits nothing, takes an AbortSignal, and
 * closes every connection it opened: a step kind or the CLI decides what to show.
 */
import { createRedactor, uriPassword } from "../redact.js";
import { sortDiagnostics, type Diagnostic } from "../diagnostics.js";
import { diagnosticAt, type RunbookView } from "../runbook/view.js";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import { durationMs, formatDuration } from "../runbook/duration.js";
import { checkInfo } from "./catalogue.js";
import * as capacity from "./checks/capacity.js";
import * as indexes from "./checks/indexes.js";
import * as namespaces from "./checks/namespaces.js";
import * as privileges from "./checks/privileges.js";
import * as sharding from "./checks/sharding.js";
import * as topology from "./checks/topology.js";
import * as versions from "./checks/versions.js";
import { ConnectError, connectCluster, shardUri, type ClusterConnection } from "./connect.js";
import { Findings, clusterPath, type CheckInput, type Finding, type StartAt } from "./findings.js";
import { readCluster, readOplog } from "./read.js";
import { selectNamespaces, type Selection } from "./selection.js";
import type { ClusterFacts, NamespaceEntry } from "./types.js";
import { parseRate } from "./units.js";
import { formatBytes } from "../text.js";
import { lintCommand } from "../next-run.js";

export { PREFLIGHT_CHECKS, checkInfo, type PreflightCheckInfo } from "./catalogue.js";
export { READ_COMMANDS } from "./connect.js";
export type { ClusterFacts, NamespaceEntry } from "./types.js";

const FAMILIES = [topology, versions, namespaces, indexes, capacity, sharding, privileges] as const;

export const DEFAULT_COPY_RATE = "20MB/s";
export const DEFAULT_OPLOG_HEADROOM = 2;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export interface PreflightOptions {
  /** The runbook's first start request (`firstStartRequest`, src/steps/index.ts). */
  start: StartAt | undefined;
  /** How many steps send `reverse` (`stepsSending`, src/steps/index.ts): more than one is the roles table's "Multiple Reversals". */
  reverses?: number;
  signal?: AbortSignal;
  /** Overrides `preflight.connectTimeout`. */
  connectTimeoutMs?: number;
  /** Overrides `preflight.copyRate` (bytes per second, or `50MB/s`). */
  copyRate?: number | string;
  /** The clock, for the namespace list's `readAt` (tests). */
  now?: () => Date;
}

/** The synced namespaces, as `syncbook preflight --list-namespaces --format json` prints them (format 1). */
export interface NamespaceList {
  format: 1;
  source: string;
  destination: string;
  readAt: string;
  /** False when some namespaces or sizes could not be read: the list or the totals are then a lower bound. */
  complete: boolean;
  totals: { collections: number; documents: number; bytes: number };
  namespaces: NamespaceEntry[];
}

export interface PreflightResult {
  file: string;
  /** Sorted by line; every message and hint redacted. */
  diagnostics: Diagnostic[];
  /** Undefined when the runbook has no start step or the source could not be read. */
  namespaces: NamespaceList | undefined;
  /** The clusters it reached and read: none means it proved nothing. */
  checked: string[];
}

/** Redact the runbook's secrets and, besides, every connection string's password however it is spelt. */
function redactor(loaded: RunbookView, uris: string[]): (s: string) => string {
  const secrets = new Set<string>();
  for (const uri of uris) {
    secrets.add(uri);
    const p = uriPassword(uri);
    if (p === undefined) continue;
    secrets.add(p);
    try {
      secrets.add(decodeURIComponent(p));
    } catch {
      // not percent-encoded text: the raw form is redacted
    }
  }
  // every encoding of each (src/redact.ts), on top of the runbook's own secrets
  return createRedactor(secrets, loaded.redact);
}

function toDiagnostic(loaded: RunbookView, f: Finding, redact: (s: string) => string): Diagnostic {
  const info = checkInfo(f.id);
  // the runbook's secrets and the clusters' (`redact`), not only the loader's
  const view = { file: loaded.file, locate: loaded.locate.bind(loaded), redact };
  return diagnosticAt(view, {
    rule: f.id,
    severity: info.severity,
    path: f.path,
    key: f.key ?? false,
    message: f.message,
    hint: f.hint ?? info.hint,
  });
}

function summary(facts: ClusterFacts, input: CheckInput): string {
  const h = facts.hello;
  const parts: string[] = [];
  parts.push(
    h.kind === "replicaSet"
      ? `replica set \`${h.setName ?? "?"}\` (${h.hosts.length} member${h.hosts.length === 1 ? "" : "s"})`
      : h.kind === "sharded"
        ? `sharded cluster${facts.shards?.ok ? ` (${facts.shards.value.length} shards)` : ""}`
        : "standalone server",
  );
  if (facts.version.ok) parts.push(`server ${facts.version.value}${facts.fcv.ok ? ` (FCV ${facts.fcv.value})` : ""}`);
  if (facts === input.source && input.selection) {
    const { bytes } = capacity.syncedBytes(input);
    parts.push(`${input.selection.synced.length} synced namespaces, ${formatBytes(bytes)}`);
  }
  if (facts.oplog?.ok && facts.oplog.value.length > 0)
    parts.push(`oplog window ${formatDuration(1000 * Math.min(...facts.oplog.value.map((o) => o.last - o.first)))}`);
  if (facts.disk?.ok && facts.disk.value.length > 0)
    parts.push(
      `${formatBytes(facts.disk.value.reduce((s, d) => s + Math.max(0, d.totalBytes - d.usedBytes), 0))} free`,
    );
  const role = facts === input.source ? " (source)" : facts === input.destination ? " (destination)" : "";
  return `\`${facts.name}\`${role}: ${parts.join(", ")}.`;
}

function namespaceList(input: CheckInput, sel: Selection, readAt: Date): NamespaceList {
  const body = input.start?.body;
  const entries = body?.sharding?.shardingEntries ?? [];
  const sourceSharded = new Map(
    (input.source?.shardedCollections?.ok ? input.source.shardedCollections.value : []).map((s) => [s.ns, s.key]),
  );
  let complete = sel.unlisted.length === 0;
  let documents = 0;
  let bytes = 0;
  const list: NamespaceEntry[] = sel.synced.map((n) => {
    const s = n.collection.stats;
    const stats = s?.ok ? s.value : undefined;
    if (n.collection.type !== "view" && !stats) complete = false;
    documents += stats?.documents ?? 0;
    bytes += stats?.bytes ?? 0;
    const entry = entries.find((e) => e.database === n.database && e.collection === n.collection.name);
    const own = sourceSharded.get(`${n.database}.${n.collection.name}`);
    return {
      database: n.database,
      collection: n.collection.name,
      type: n.collection.type,
      documents: stats ? stats.documents : null,
      bytes: stats ? stats.bytes : null,
      shardKey: entry
        ? entry.shardCollection.key.map((k) => ({ ...k }) as Record<string, number | string>)
        : own
          ? own.map(([f, v]) => ({ [f]: v }))
          : null,
    };
  });
  list.sort((a, b) =>
    a.database === b.database ? (a.collection < b.collection ? -1 : 1) : a.database < b.database ? -1 : 1,
  );
  return {
    format: 1,
    source: input.source?.name ?? "",
    destination: input.destination?.name ?? body?.destination ?? "",
    readAt: readAt.toISOString(),
    complete,
    totals: { collections: list.length, documents, bytes },
    namespaces: list,
  };
}

/**
 * Check the runbook against its clusters. `loaded` must be schema-valid (`loaded.runbook`); a
 * runbook that is not is a UserError (exit 2). Connection failures are findings
 * (`preflight-connect`), not exceptions; an abort rejects with the signal's reason.
 */
export async function runPreflight(loaded: RunbookView, opts: PreflightOptions): Promise<PreflightResult> {
  const runbook = loaded.runbook;
  if (!runbook)
    throw new UserError(`${loaded.file} is not a valid runbook: preflight needs one`, {
      hint: `Run ${lintCommand(loaded.file)} and fix its errors first.`,
      exitCode: ExitCode.usage,
    });
  const settings = runbook.preflight ?? {};
  const rateSpec = opts.copyRate ?? settings.copyRate ?? DEFAULT_COPY_RATE;
  const rate = parseRate(rateSpec);
  if (rate === undefined)
    throw new UserError(`copy rate ${JSON.stringify(rateSpec)} is not a rate`, {
      hint: "Write bytes per second, or e.g. 50MB/s, 200GB/h, 30MiB/s.",
      exitCode: ExitCode.usage,
    });
  const timeoutMs =
    opts.connectTimeoutMs ??
    (settings.connectTimeout !== undefined ? durationMs(settings.connectTimeout) : undefined) ??
    DEFAULT_CONNECT_TIMEOUT_MS;
  const start = opts.start;
  const out = new Findings();
  const clusters = runbook.clusters ?? {};
  const uris = Object.entries(clusters).flatMap(([name, c]) => (c?.uri ? [[name, c.uri] as const] : []));
  const redact = redactor(
    loaded,
    uris.map(([, u]) => u),
  );
  const roles = new Map<string, "source" | "destination">();
  if (start) {
    roles.set(start.body.source, "source");
    roles.set(start.body.destination, "destination");
  }
  for (const [name, c] of Object.entries(clusters))
    if (!c?.uri && (roles.has(name) || !start))
      out.notChecked(
        clusterPath(name),
        `cluster \`${name}\``,
        "it has no `uri`",
        `Add \`uri: "\${env.${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_URI}"\` under \`clusters.${name}\` and export the connection string (the service's user) before running preflight.`,
      );
  if (uris.length === 0 && Object.keys(clusters).length === 0)
    out.notChecked([], "the clusters", "the runbook has no `clusters:`");

  const connections: ClusterConnection[] = [];
  const facts = new Map<string, ClusterFacts>();
  let selection: Selection | undefined;
  try {
    const opened = await Promise.all(
      uris.map(async ([name, uri]) => {
        try {
          const c = await connectCluster(name, uri, { timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) });
          connections.push(c);
          return { name, uri, c };
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          const e =
            err instanceof ConnectError
              ? err
              : new ConnectError(errorMessage(err), checkInfo("preflight-connect").hint);
          out.add("preflight-connect", ["clusters", name, "uri"], e.message, { hint: e.hint });
          return undefined;
        }
      }),
    );
    await Promise.all(
      opened.map(async (o) => {
        if (!o) return;
        const role = roles.get(o.name);
        try {
          const f = await readCluster(o.c.run, {
            name: o.name,
            source: role === "source",
            destination: role === "destination",
            ...(role === "source" && start
              ? {
                  detail: (dbs) => {
                    selection = selectNamespaces(dbs, start.body);
                    return selection.synced;
                  },
                }
              : {}),
            ...(role === "source" && settings.shardOplogs !== false
              ? {
                  shardOplog: async (shard) => {
                    const uri = shardUri(o.uri, shard.host);
                    if (!uri) throw new Error("its connection string cannot be derived from the cluster's");
                    const c = await connectCluster(`${o.name}/${shard.id}`, uri, {
                      timeoutMs,
                      ...(opts.signal ? { signal: opts.signal } : {}),
                    });
                    try {
                      return await readOplog(c.run, shard.id);
                    } finally {
                      await c.close();
                    }
                  },
                }
              : {}),
          });
          facts.set(o.name, f);
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          out.add(
            "preflight-connect",
            ["clusters", o.name, "uri"],
            `cannot read cluster \`${o.name}\`: ${errorMessage(err)}`,
          );
        }
      }),
    );
  } finally {
    await Promise.all(connections.map((c) => c.close()));
  }

  const source = start ? facts.get(start.body.source) : undefined;
  const destination = start ? facts.get(start.body.destination) : undefined;
  const input: CheckInput = {
    runbook,
    start,
    reverses: opts.reverses ?? 0,
    clusters: facts,
    source,
    destination,
    selection: source ? selection : undefined,
    copyRateBytesPerSecond: rate,
    oplogHeadroom: settings.oplogHeadroom ?? DEFAULT_OPLOG_HEADROOM,
  };
  if (source && !source.databases.ok)
    out.notChecked(clusterPath(source.name), "the synced namespaces", `listDatabases failed (${source.databases.why})`);
  for (const family of FAMILIES) family.check(input, out);
  for (const f of facts.values()) out.add("preflight-cluster", clusterPath(f.name), summary(f, input), { key: true });

  const diagnostics = sortDiagnostics(out.list.map((f) => toDiagnostic(loaded, f, redact)));
  const sel = input.selection;
  return {
    file: loaded.file,
    diagnostics,
    checked: [...facts.keys()],
    namespaces:
      sel && start ? redactList(namespaceList(input, sel, (opts.now ?? (() => new Date()))()), redact) : undefined,
  };
}

/** Names are data, not secrets, but nothing leaves preflight unredacted. */
function redactList(list: NamespaceList, redact: (s: string) => string): NamespaceList {
  return {
    ...list,
    namespaces: list.namespaces.map((n) => ({ ...n, database: redact(n.database), collection: redact(n.collection) })),
  };
}
