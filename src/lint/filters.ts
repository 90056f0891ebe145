/**
 * Namespace filters of `start` (includeNamespaces / excludeNamespaces): entries without a
 * database, duplicates, include/exclude contradictions, regular expressions, and database-level
 * entries. (The collection pattern is `collectionsRegex`; the schema refuses `collectionRegex`,
 * which the service does not have, with a "did you mean".)
 */
import type { FilterEntry, StartRequest } from "../runbook/types.js";
import type { LintContext, RuleInfo, YamlPath } from "./context.js";
import { q } from "./context.js";
import { startRequests } from "./kinds.js";
import { REGEX_FIELDS, badOptionLetters, compileServiceRegex, selector, type Selector } from "../runbook/namespaces.js";

export const rules = [
  {
    id: "filter-no-database",
    severity: "error",
    description: "A filter entry names no database (neither `database` nor `databaseRegex`).",
    spec: "Filter entry: `database` | string | yes | Database name.",
    source: "sync-service-api.md",
    hint: "Add `database: <name>` to the entry (or `databaseRegex` on service 1.6 or newer).",
  },
  {
    id: "filter-duplicate",
    severity: "warning",
    description:
      "Two entries of one filter select the same namespaces (duplicate or overlapping entries, or a collection listed twice).",
    spec: "A filter entry with only a database name selects all collections of that database.",
    source: "sync-service-api.md",
    hint: "Keep one entry per namespace: merge the collections into one entry, or drop the narrower entry.",
  },
  {
    id: "filter-include-exclude-overlap",
    severity: "error",
    description: "A namespace is selected explicitly by includeNamespaces and left out by excludeNamespaces.",
    spec: "includeNamespaces: Only the listed databases or collections are synced. (exclude filter): Databases or collections to leave out of sync.",
    source: "sync-service-api.md",
    hint: "Decide whether the namespace is synced: remove it from one of the two filters.",
  },
  {
    id: "regex-invalid",
    severity: "error",
    description: "A filter's regular expression does not compile.",
    spec: "collectionsRegex: Has `pattern` (string, a regular expression) and `options` (string, regex option letters such as `i`).",
    source: "sync-service-api.md",
    hint: "Fix the pattern (PCRE syntax); test it with `node -e 'new RegExp(pattern)'` or a PCRE tester.",
  },
  {
    id: "regex-options",
    severity: "error",
    description: "Regex `options` uses letters other than i, m, s, x (or repeats one).",
    spec: "A regex is `{ pattern, options }`, options any of `i`, `m`, `s`, `x`.",
    source: "service-facts.md",
    hint: "Use only the option letters i (case-insensitive), m (multi-line), s (dot matches newline) and x (extended), each once.",
  },
  {
    id: "filter-database-level",
    severity: "info",
    description:
      "A database-level include entry (or a databaseRegex): databases created after start are never added to the running filter.",
    spec: "Once a filter is in place on a source cluster with several databases, a newly created database is not added to the filter automatically. Adding it requires restarting the filtered sync from the beginning.",
    source: "sync-service-api.md",
    hint: "Create every database the application needs before start; adding one later means restarting the filtered sync from the beginning.",
  },
  {
    id: "filter-name-looks-like-regex",
    severity: "warning",
    description:
      "A `database` or `collections` name holds regular-expression or namespace characters (`orders.*`, `logs_*`, `^tmp`): those fields match a name exactly.",
    spec: "Filter entry: `database` | string | yes | Database name. `collections` | array | no | Collection names. Regex matching is `databaseRegex` / `collectionsRegex`.",
    source: "sync-service-api.md",
    hint: "Match a pattern with `databaseRegex` or `collectionsRegex` (`{ pattern, options }`); a plain name selects only that name.",
  },
] as const satisfies readonly RuleInfo[];

type ListName = "includeNamespaces" | "excludeNamespaces";

/**
 * Characters no plain name needs and a pattern does: `*`, `?`, `+`, `^`, `$`, `|`, brackets,
 * braces, parentheses, a backslash; and in a database name a `.` (a database name cannot hold
 * one: `orders.*` is a namespace pattern, not a database).
 */
const PATTERN_CHARS = /[*?+^$|()[\]{}\\]/;

/** What a name that reads as a pattern most likely meant, said as the fix. */
function patternHint(field: "database" | "collections", name: string): string {
  const all = /^([^.*]+)\.\*$/.exec(name);
  if (field === "database" && all)
    return `To select every collection of ${q(all[1]!)}, write \`database: ${all[1]!}\`; for a pattern use \`databaseRegex\` / \`collectionsRegex\` (\`{ pattern, options }\`).`;
  const [db, coll] = field === "database" && name.includes(".") ? name.split(/\.(.*)/s) : [undefined, undefined];
  if (db && coll && !PATTERN_CHARS.test(db))
    return `A database name holds no \`.\`: write \`database: ${db}\` and put the collection part in \`collections\` (a name) or \`collectionsRegex\` (a pattern).`;
  return field === "database"
    ? "Match databases by pattern with `databaseRegex: { pattern: ... }` (service 1.6 or newer); `database` selects one database by its exact name."
    : "Match collections by pattern with `collectionsRegex: { pattern: ... }` on the entry; `collections` lists exact names.";
}

function checkNames(ctx: LintContext, entry: FilterEntry, at: YamlPath): void {
  const db = entry.database;
  if (db !== undefined && (PATTERN_CHARS.test(db) || db.includes(".")))
    ctx.report(
      "filter-name-looks-like-regex",
      [...at, "database"],
      `database ${q(db)} looks like a ${db.includes(".") && !PATTERN_CHARS.test(db) ? "namespace (database.collection)" : "pattern"}, but \`database\` matches one name exactly${db.includes(".") ? " (and a database name cannot contain `.`)" : ""}: this entry selects nothing you meant.`,
      { hint: patternHint("database", db) },
    );
  entry.collections?.forEach((c, k) => {
    if (PATTERN_CHARS.test(c))
      ctx.report(
        "filter-name-looks-like-regex",
        [...at, "collections", k],
        `collection ${q(c)} looks like a pattern, but \`collections\` lists exact names: it selects only a collection named ${q(c)}.`,
        { hint: patternHint("collections", c) },
      );
  });
}

function describe(e: FilterEntry): string {
  const db = e.database ?? (e.databaseRegex ? `/${e.databaseRegex.pattern}/` : "?");
  if (e.collections) return e.collections.map((c) => `${db}.${c}`).join(", ");
  const rx = e.collectionsRegex;
  if (rx) return `${db}./${rx.pattern}/${rx.options ?? ""}`;
  return `${db} (all collections)`;
}

export function check(ctx: LintContext): void {
  for (const { request, at } of startRequests(ctx)) checkStart(ctx, request, at);
}

function checkStart(ctx: LintContext, start: StartRequest, at: YamlPath): void {
  const lists: Partial<Record<ListName, Selector[]>> = {};
  for (const name of ["includeNamespaces", "excludeNamespaces"] as const) {
    const list = start[name];
    if (!list) continue;
    list.forEach((entry, j) => checkEntry(ctx, entry, [...at, name, j], name));
    lists[name] = list.map((e, j) => selector(e, j));
    checkDuplicates(ctx, list, [...at, name]);
  }
  if (lists.includeNamespaces && lists.excludeNamespaces)
    checkOverlap(ctx, lists.includeNamespaces, lists.excludeNamespaces, at);
}

function checkEntry(ctx: LintContext, entry: FilterEntry, at: YamlPath, list: ListName): void {
  if (entry.database === undefined && entry.databaseRegex === undefined) {
    ctx.report(
      "filter-no-database",
      at,
      `This ${list} entry names no database: every filter entry needs \`database\`.`,
    );
  }
  checkNames(ctx, entry, at);
  for (const field of REGEX_FIELDS) {
    const rx = entry[field];
    if (!rx) continue;
    const options = rx.options ?? "";
    const { unknown, repeated } = badOptionLetters(options);
    if (unknown.length > 0 || repeated.length > 0) {
      const parts: string[] = [];
      if (unknown.length > 0)
        parts.push(`unknown option letter${unknown.length > 1 ? "s" : ""} ${unknown.map((l) => q(l)).join(", ")}`);
      if (repeated.length > 0) parts.push(`${repeated.map((l) => q(l)).join(", ")} given twice`);
      ctx.report(
        "regex-options",
        [...at, field, "options"],
        `${field} options ${q(options)}: ${parts.join("; ")}. The service accepts i, m, s and x.`,
      );
    }
    const compiled = compileServiceRegex(rx.pattern, options.replace(/[^imsx]/g, ""));
    if (!compiled.ok && !compiled.unsupported) {
      ctx.report(
        "regex-invalid",
        [...at, field, "pattern"],
        `${field} pattern ${q(rx.pattern)} is not a valid regular expression: ${compiled.error}.`,
      );
    }
  }
  if (list === "includeNamespaces") {
    if (entry.databaseRegex) {
      ctx.report(
        "filter-database-level",
        [...at, "databaseRegex"],
        `databaseRegex ${q(entry.databaseRegex.pattern)}: a database created after start that matches it is not added to the running filter.`,
        { key: true },
      );
    } else if (entry.database !== undefined && entry.collections === undefined && !entry.collectionsRegex) {
      ctx.report(
        "filter-database-level",
        [...at, "database"],
        `The entry selects every collection of ${q(entry.database)}; note that a database created after start is never added to a running filter.`,
        { key: true },
      );
    }
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function checkDuplicates(ctx: LintContext, list: FilterEntry[], at: YamlPath): void {
  const name = at[at.length - 1] as string;
  list.forEach((e, j) => {
    // a collection listed twice inside one entry
    const seen = new Set<string>();
    e.collections?.forEach((c, k) => {
      if (seen.has(c))
        ctx.report(
          "filter-duplicate",
          [...at, j, "collections", k],
          `${q(`${e.database ?? "?"}.${c}`)} is listed twice in this entry.`,
        );
      seen.add(c);
    });
    for (let k = 0; k < j; k++) {
      const o = list[k] as FilterEntry;
      if (e.database === undefined || o.database !== e.database) {
        if (sameJson(e, o))
          ctx.report(
            "filter-duplicate",
            [...at, j],
            `This ${name} entry repeats entry ${k + 1} (line ${ctx.lineOf([...at, k])}).`,
          );
        continue;
      }
      const eAll = e.collections === undefined && !e.collectionsRegex;
      const oAll = o.collections === undefined && !o.collectionsRegex;
      if (sameJson(e, o)) {
        ctx.report(
          "filter-duplicate",
          [...at, j],
          `This ${name} entry repeats entry ${k + 1} (line ${ctx.lineOf([...at, k])}).`,
        );
      } else if (eAll || oAll) {
        ctx.report(
          "filter-duplicate",
          [...at, j],
          `Entries ${k + 1} (line ${ctx.lineOf([...at, k])}) and ${j + 1} of ${name} overlap: ${eAll ? "this" : "the earlier"} entry already selects every collection of ${q(e.database)}.`,
        );
      } else if (e.collections && o.collections) {
        const common = e.collections.filter((c) => o.collections?.includes(c));
        if (common.length > 0) {
          ctx.report(
            "filter-duplicate",
            [...at, j],
            `${common.map((c) => q(`${e.database}.${c}`)).join(", ")} ${common.length > 1 ? "are" : "is"} already selected by entry ${k + 1} of ${name} (line ${ctx.lineOf([...at, k])}).`,
          );
        }
      }
    }
  });
}

function checkOverlap(ctx: LintContext, include: Selector[], exclude: Selector[], at: YamlPath): void {
  for (const inc of include) {
    const incAt = [...at, "includeNamespaces", inc.index];
    const db = inc.entry.database;
    if (db === undefined) continue;
    // explicitly named collections that an exclude entry leaves out
    inc.entry.collections?.forEach((c, k) => {
      for (const ex of exclude) {
        if (ex.db(db) === true && ex.coll(c) === true) {
          ctx.report(
            "filter-include-exclude-overlap",
            [...incAt, "collections", k],
            `${q(`${db}.${c}`)} is included here and excluded by excludeNamespaces entry ${ex.index + 1} (line ${ctx.lineOf([...at, "excludeNamespaces", ex.index])}): it would not be synced.`,
          );
          return;
        }
      }
    });
    if (inc.entry.collections !== undefined) continue;
    // a whole-database or pattern include whose database an exclude entry removes entirely
    for (const ex of exclude) {
      if (ex.databaseLevel && ex.db(db) === true) {
        ctx.report(
          "filter-include-exclude-overlap",
          [...incAt, "database"],
          `${q(describe(inc.entry))} is included here, but excludeNamespaces entry ${ex.index + 1} (line ${ctx.lineOf([...at, "excludeNamespaces", ex.index])}) leaves out all of ${q(db)}: nothing of it would be synced.`,
        );
        break;
      }
    }
  }
}
