/**
 * Filters against the source's real namespaces (a name or a regex that matches nothing is a
 * typo), sharding entries that name nothing, and what the destination already holds.
 */
import { atLeast, startField } from "../../api/versions.js";
import type { YamlPath } from "../../runbook/view.js";
import { clusterPath, ns, startPath, type CheckInput, type Findings } from "../findings.js";
import { SYSTEM_DATABASES, isInternalDatabase } from "../selection.js";

/** `preExistingDestinationData: true`, in the start body or its x-passthrough. */
export function allowsPreExistingData(input: CheckInput): boolean {
  const b = input.start?.body as Record<string, unknown> | undefined;
  if (!b) return false;
  const pass = b["x-passthrough"] as Record<string, unknown> | undefined;
  return b.preExistingDestinationData === true || pass?.preExistingDestinationData === true;
}

function preExistingPath(input: CheckInput): YamlPath {
  const b = input.start?.body as Record<string, unknown> | undefined;
  return b && "preExistingDestinationData" in b
    ? startPath(input, "preExistingDestinationData")
    : startPath(input, "x-passthrough", "preExistingDestinationData");
}

export function check(input: CheckInput, out: Findings): void {
  const sel = input.selection;
  if (!input.start || !input.source) return;
  if (!sel) return; // the source's databases could not be listed: reported where they were read
  for (const u of sel.unlisted)
    out.notChecked(
      clusterPath(input.source.name),
      `the collections of database \`${u.database}\``,
      `listCollections failed (${u.why})`,
    );

  for (const e of sel.entries) {
    for (const m of e.missing)
      out.add(
        "preflight-namespace-missing",
        startPath(input, ...m.path),
        `\`${m.name}\` (${e.list}) does not exist on the source \`${input.source.name}\`.`,
      );
    if (e.regex && e.matched === 0 && !e.unsure && e.missing.length === 0)
      out.add(
        "preflight-filter-matches-nothing",
        startPath(input, e.list, e.index),
        `This ${e.list} entry matches no namespace on the source \`${input.source.name}\`.`,
      );
  }

  const sourceDbs = input.source.databases.ok ? new Set(input.source.databases.value.map((d) => d.name)) : undefined;
  (input.start.body.sharding?.shardingEntries ?? []).forEach((s, i) => {
    const exists = sel.synced.some((n) => n.database === s.database && n.collection.name === s.collection);
    if (exists) return;
    const inSource =
      sourceDbs?.has(s.database) &&
      input.source?.databases.ok &&
      input.source.databases.value.some(
        (d) => d.name === s.database && d.collections.ok && d.collections.value.some((c) => c.name === s.collection),
      );
    // one outside the filter is lint's sharding-outside-filter; here only what does not exist
    if (!inSource && sel.unlisted.every((u) => u.database !== s.database))
      out.add(
        "preflight-namespace-missing",
        startPath(input, "sharding", "shardingEntries", i, "collection"),
        `\`${ns(s.database, s.collection)}\` (shardingEntries) does not exist on the source \`${input.source?.name ?? "?"}\`.`,
      );
  });

  if (sel.synced.length === 0 && sel.unlisted.length === 0)
    out.add(
      "preflight-nothing-synced",
      startPath(input),
      `The filters select no collection on the source \`${input.source.name}\`: the sync would copy nothing.`,
      { key: true },
    );

  destination(input, out);
}

function destination(input: CheckInput, out: Findings): void {
  const dest = input.destination;
  const sel = input.selection;
  if (!dest || !sel) return;
  const at = clusterPath(dest.name);
  for (const db of dest.internalDatabases)
    out.add(
      "preflight-leftover-sync-state",
      at,
      `The destination \`${dest.name}\` holds \`${db}\`, the state of an earlier sync.`,
      { key: true },
    );
  if (!dest.databases.ok) {
    out.notChecked(at, "that the destination is empty", `listDatabases failed (${dest.databases.why})`);
    return;
  }
  const allowed = allowsPreExistingData(input);
  const svc = input.runbook.serviceVersion;
  const honoured = allowed && (svc === undefined || atLeast(svc, startField("preExistingDestinationData")?.since));
  const synced = new Set(sel.synced.map((n) => ns(n.database, n.collection.name)));
  const clash: string[] = [];
  const other: string[] = [];
  for (const db of dest.databases.value) {
    if (SYSTEM_DATABASES.has(db.name) || isInternalDatabase(db.name)) continue;
    if (!db.collections.ok) {
      out.notChecked(
        at,
        `the collections of \`${db.name}\` on the destination`,
        `listCollections failed (${db.collections.why})`,
      );
      continue;
    }
    const colls = db.collections.value.filter((c) => !c.name.startsWith("system."));
    const mine = colls.filter((c) => synced.has(ns(db.name, c.name))).map((c) => ns(db.name, c.name));
    clash.push(...mine);
    if (colls.length > mine.length) other.push(db.name);
  }
  const list = (xs: string[]): string =>
    xs
      .slice(0, 10)
      .map((x) => `\`${x}\``)
      .join(", ") + (xs.length > 10 ? ` and ${xs.length - 10} more` : "");
  if (clash.length > 0 && !honoured) {
    const why =
      allowed && !honoured
        ? ` \`preExistingDestinationData\` needs service 1.15 or newer; this runbook says ${svc}.`
        : "";
    out.add(
      "preflight-destination-not-empty",
      allowed ? preExistingPath(input) : at,
      `The destination \`${dest.name}\` already has ${clash.length === 1 ? "a synced namespace" : `${clash.length} synced namespaces`}: ${list(clash)}.${why}`,
      allowed ? {} : { key: true },
    );
  }
  if (other.length > 0 && !honoured)
    out.add(
      "preflight-destination-data",
      at,
      `The destination \`${dest.name}\` holds user data outside the synced namespaces, in ${list(other)}.`,
      { key: true },
    );
}
