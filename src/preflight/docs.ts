/**
 * The documentation's requirements as data, by service version: supported server versions and
 * pairs, minimum patches and feature compatibility versions, and the roles the service's user
 * needs. Sources: the mongosync documentation's "MongoDB Server Version Compatibility" and
 * "User Permissions" pages, version by version (1.9 … 1.20).
 */
import { atLeast } from "../api/versions.js";

interface ServerRules {
  /** Major.minor releases supported as a source. */
  sources: string[];
  /** Major.minor releases supported as a destination. */
  destinations: string[];
  /** source → destinations it can sync to. */
  pairs: Record<string, string[]>;
  /** Minimum patch release per major.minor. */
  minPatch: Record<string, string>;
}

/** The table in force for a service version (the newest row at or below it). */
const SERVER_RULES: { from: string; rules: ServerRules }[] = [
  {
    from: "0.0",
    rules: {
      sources: ["6.0", "7.0"],
      destinations: ["6.0", "7.0"],
      pairs: { "6.0": ["6.0", "7.0"], "7.0": ["7.0"] },
      minPatch: { "6.0": "6.0.8", "7.0": "7.0.0" },
    },
  },
  {
    // 1.10 added pre-6.0 sources; 1.12 added 8.0
    from: "1.10",
    rules: {
      sources: ["4.4", "5.0", "6.0", "7.0"],
      destinations: ["6.0", "7.0"],
      pairs: { "4.4": ["6.0"], "5.0": ["6.0", "7.0"], "6.0": ["6.0", "7.0"], "7.0": ["7.0"] },
      minPatch: { "4.4": "4.4.29", "5.0": "5.0.29", "6.0": "6.0.17", "7.0": "7.0.14" },
    },
  },
  {
    from: "1.12",
    rules: {
      sources: ["4.4", "5.0", "6.0", "7.0", "8.0"],
      destinations: ["6.0", "7.0", "8.0"],
      pairs: {
        "4.4": ["6.0"],
        "5.0": ["6.0", "7.0"],
        "6.0": ["6.0", "7.0", "8.0"],
        "7.0": ["7.0", "8.0"],
        "8.0": ["8.0"],
      },
      minPatch: { "4.4": "4.4.29", "5.0": "5.0.29", "6.0": "6.0.17", "7.0": "7.0.13", "8.0": "8.0.0" },
    },
  },
  {
    from: "1.17",
    rules: {
      sources: ["4.4", "5.0", "6.0", "7.0", "8.0"],
      destinations: ["6.0", "7.0", "8.0"],
      pairs: {
        "4.4": ["6.0"],
        "5.0": ["6.0", "7.0"],
        "6.0": ["6.0", "7.0", "8.0"],
        "7.0": ["7.0", "8.0"],
        "8.0": ["8.0"],
      },
      minPatch: { "4.4": "4.4.29", "5.0": "5.0.29", "6.0": "6.0.24", "7.0": "7.0.18", "8.0": "8.0.5" },
    },
  },
  {
    // facts: "1.19 dropped sources on 4.4 and destinations on 6.0 [notes 1.19]"
    from: "1.19",
    rules: {
      sources: ["5.0", "6.0", "7.0", "8.0"],
      destinations: ["7.0", "8.0"],
      pairs: { "5.0": ["7.0"], "6.0": ["7.0", "8.0"], "7.0": ["7.0", "8.0"], "8.0": ["8.0"] },
      minPatch: { "5.0": "5.0.29", "6.0": "6.0.24", "7.0": "7.0.18", "8.0": "8.0.5" },
    },
  },
];

/** Minimum feature compatibility version per major.minor (the same in every version of the page). */
export const MIN_FCV: Readonly<Record<string, string>> = {
  "4.4": "4.4",
  "5.0": "5.0",
  "6.0": "6.0",
  "7.0": "6.0",
  "8.0": "8.0",
};

/** The rules for a service version; undefined version: the newest (the runbook did not say). */
export function serverRules(serviceVersion: string | undefined): ServerRules {
  let pick = SERVER_RULES[SERVER_RULES.length - 1]!.rules;
  if (serviceVersion === undefined) return pick;
  for (const row of SERVER_RULES) if (atLeast(serviceVersion, row.from)) pick = row.rules;
  return pick;
}

/** `7.0.12` → `7.0`. */
export function majorMinor(version: string): string {
  const [a = "0", b = "0"] = version.split(".");
  return `${a}.${b}`;
}

/** Rapid releases (6.1, 6.2, 8.1, 8.2, …) have a non-zero minor. */
export function isRapidRelease(version: string): boolean {
  const minor = Number(version.split(".")[1] ?? "0");
  const major = Number(version.split(".")[0] ?? "0");
  return major >= 5 && minor !== 0;
}

export type SyncType = "default" | "write-blocking" | "reversing";

/**
 * The self-managed roles table of "User Permissions" (all roles on the admin database), one table
 * for every version. service-facts.md, the authority, publishes one role fact only: "reverse also
 * needs the `restore` role" (The recommended cutover), which both sides of `reversing` hold. It
 * publishes no roles table by version, so where the permissions pages differ by version or sync
 * type the table takes the reading that fails safe, the larger set (a role asked for costs a grant
 * before the window; a role missing fails the migration, or the reverse, in it):
 * - reversing asks for `dbAdminAnyDatabase` on the destination too;
 * - write blocking asks for `backup` on the destination on every version (not only from 1.20);
 * - from 1.20 every sync is judged as one with write blocking (which configuration controls it is
 *   "Not published": checks/privileges.ts).
 */
export const REQUIRED_ROLES: Readonly<Record<SyncType, { source: string[]; destination: string[] }>> = {
  default: {
    source: ["readAnyDatabase", "backup", "clusterMonitor"],
    destination: ["readWriteAnyDatabase", "restore", "clusterMonitor", "clusterManager"],
  },
  "write-blocking": {
    source: ["readWriteAnyDatabase", "backup", "restore", "clusterMonitor", "clusterManager"],
    destination: ["readWriteAnyDatabase", "backup", "restore", "clusterMonitor", "clusterManager"],
  },
  reversing: {
    source: ["readWriteAnyDatabase", "backup", "restore", "clusterMonitor", "clusterManager"],
    destination: [
      "readWriteAnyDatabase",
      "backup",
      "restore",
      "clusterMonitor",
      "clusterManager",
      "dbAdminAnyDatabase",
    ],
  },
};

/** Built-in roles that hold every privilege of another (MongoDB's built-in role hierarchy). */
const IMPLIES: Readonly<Record<string, readonly string[]>> = {
  root: [
    "readAnyDatabase",
    "readWriteAnyDatabase",
    "backup",
    "restore",
    "clusterMonitor",
    "clusterManager",
    "clusterAdmin",
    "userAdminAnyDatabase",
    "dbAdminAnyDatabase",
  ],
  __system: ["root"],
  readWriteAnyDatabase: ["readAnyDatabase"],
  clusterAdmin: ["clusterManager", "clusterMonitor", "hostManager"],
};

/** Every role a set of admin-database roles grants, with what they imply. */
export function effectiveRoles(roles: readonly { role: string; db: string }[]): Set<string> {
  const out = new Set<string>();
  const add = (r: string): void => {
    if (out.has(r)) return;
    out.add(r);
    for (const x of IMPLIES[r] ?? []) add(x);
  };
  for (const r of roles) if (r.db === "admin") add(r.role);
  return out;
}
