/**
 * The synced namespace set, computed from the source's real namespaces and the start body's
 * filters (the same matching lint uses: src/lint/namespaces.ts), and, per filter entry, what it
 * matched: an explicit name that matches nothing, or a regex that matches nothing, is a typo.
 */
import { selector, type Selector } from "../runbook/namespaces.js";
import type { FilterEntry, StartRequest } from "../runbook/types.js";
import type { CollectionFacts, DatabaseFacts } from "./types.js";

/** Databases the service never syncs. */
export const SYSTEM_DATABASES: ReadonlySet<string> = new Set(["admin", "local", "config"]);
/**
 * The service's internal databases, every version's names (facts: "the service's internal databases
 * are named `__mdb_internal_mongosync` (and `__mdb_internal_mongosync_verifier_{src,dst}` for the
 * embedded verifier); before 1.20 they were `mongosync_reserved_for_internal_use`,
 * `mongosync_internal_*` and `mongosync_reserved_for_verification_*`"): a filter never selects
 * them, and a destination that holds one has leftovers of an earlier sync, whatever its version.
 */
export const INTERNAL_DATABASE_PREFIXES: readonly string[] = [
  "__mdb_internal_mongosync",
  "mongosync_reserved_for_internal_use",
  "mongosync_internal_",
  "mongosync_reserved_for_verification_",
];
export const isInternalDatabase = (name: string): boolean => INTERNAL_DATABASE_PREFIXES.some((p) => name.startsWith(p));

export interface SyncedCollection {
  database: string;
  collection: CollectionFacts;
}

export interface EntryMatch {
  list: "includeNamespaces" | "excludeNamespaces";
  index: number;
  entry: FilterEntry;
  /** Namespaces it selects among the source's. */
  matched: number;
  /** Names it gives explicitly that do not exist: `db` or `db.coll`, with the path of the name. */
  missing: { name: string; path: (string | number)[] }[];
  /** The entry has a regex (databaseRegex, collectionsRegex). */
  regex: boolean;
  /** Cannot tell for some namespace (a pattern the matcher cannot evaluate). */
  unsure: boolean;
}

export interface Selection {
  synced: SyncedCollection[];
  entries: EntryMatch[];
  /** Databases whose collections could not be listed (their namespaces are unknown). */
  unlisted: { database: string; why: string }[];
}

/** Collections the service leaves out whatever the filter says. */
function replicated(coll: CollectionFacts): boolean {
  return !coll.name.startsWith("system.");
}

export function selectNamespaces(databases: readonly DatabaseFacts[], start: StartRequest): Selection {
  const all: SyncedCollection[] = [];
  const unlisted: Selection["unlisted"] = [];
  for (const db of databases) {
    if (SYSTEM_DATABASES.has(db.name) || isInternalDatabase(db.name)) continue;
    if (!db.collections.ok) {
      unlisted.push({ database: db.name, why: db.collections.why });
      continue;
    }
    for (const c of db.collections.value) if (replicated(c)) all.push({ database: db.name, collection: c });
  }
  const entries: EntryMatch[] = [];
  const selectors = (list: "includeNamespaces" | "excludeNamespaces"): Selector[] =>
    (start[list] ?? []).map((e, i) => selector(e, i));
  const include = selectors("includeNamespaces");
  const exclude = selectors("excludeNamespaces");
  const dbNames = new Set(databases.map((d) => d.name));

  for (const [list, sels] of [
    ["includeNamespaces", include],
    ["excludeNamespaces", exclude],
  ] as const) {
    for (const s of sels) {
      let matched = 0;
      let unsure = false;
      for (const n of all) {
        const d = s.db(n.database);
        const c = d === false ? false : s.coll(n.collection.name);
        if (d === true && c === true) matched++;
        else if (d === undefined || c === undefined) unsure = true;
      }
      const e = s.entry;
      const missing: EntryMatch["missing"] = [];
      if (e.database !== undefined && e.databaseRegex === undefined) {
        if (!dbNames.has(e.database)) missing.push({ name: e.database, path: [list, s.index, "database"] });
        else
          (e.collections ?? []).forEach((c, i) => {
            if (!all.some((n) => n.database === e.database && n.collection.name === c))
              missing.push({ name: `${e.database}.${c}`, path: [list, s.index, "collections", i] });
          });
      }
      entries.push({
        list,
        index: s.index,
        entry: e,
        matched,
        missing,
        regex: e.databaseRegex !== undefined || e.collectionsRegex !== undefined,
        unsure,
      });
    }
  }

  // a namespace the matcher cannot judge counts as selected: sizes and disk are then not underestimated
  const picks = (sels: Selector[], n: SyncedCollection): boolean =>
    sels.some((s) => s.db(n.database) !== false && s.coll(n.collection.name) !== false);
  const synced = all.filter(
    (n) => (include.length === 0 || picks(include, n)) && !(exclude.length > 0 && picks(exclude, n)),
  );
  return { synced, entries, unlisted };
}
