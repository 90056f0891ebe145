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

export type SyncType = "default" | "write-blocking" | "reversing" | "multiple-reversals";

/**
 * The self-managed roles table of "User Permissions" (all roles on the admin database), as the
 * documentation publishes it (service facts, "User permissions, self-managed clusters": the table
 * of `mongodb/docs-cluster-to-cluster-sync`, `source/includes/table-permissions-self-hosted.rst` on
 * its master branch, which the current page `mongodb/docs`
 * `content/mongosync/current/source/reference/permissions.txt` includes), row for row: "Default",
 * "Dual Write-Blocking", "Reversing", "Multiple Reversals". A role the table does not ask for is
 * not asked for (facts: "a role the table does not ask for is not an error"): no `backup` on a
 * dual write-blocking destination. From 1.20 every sync is judged as one with dual write blocking
 * (which configuration controls it is "Not published": checks/privileges.ts).
 */
export const REQUIRED_ROLES: Readonly<Record<SyncType, { source: string[]; destination: string[] }>> = {
  default: {
    source: ["backup", "clusterMonitor", "readAnyDatabase"],
    destination: ["clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"],
  },
  "write-blocking": {
    source: ["backup", "clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"],
    destination: ["clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"],
  },
  reversing: {
    source: ["backup", "clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"],
    destination: [
      "backup",
      "clusterManager",
      "clusterMonitor",
      "dbAdminAnyDatabase",
      "readWriteAnyDatabase",
      "restore",
    ],
  },
  "multiple-reversals": {
    source: ["backup", "clusterManager", "clusterMonitor", "dbAdminAnyDatabase", "readWriteAnyDatabase", "restore"],
    destination: [
      "backup",
      "clusterManager",
      "clusterMonitor",
      "dbAdminAnyDatabase",
      "readWriteAnyDatabase",
      "restore",
    ],
  },
};

/**
 * A source older than 6.0 needs `clusterManager` as well, whatever the sync type, or the minimum
 * privileges the page lists for it (facts: "A 5.0 source needs `clusterManager` as well, or the
 * minimum privileges listed for 5.0" [permissions page, current, "Pre-6.0 Migrations"]). The
 * 1.10–1.13 pages say the same of a 4.4 source (`mongodb/docs-cluster-to-cluster-sync`,
 * `source/reference/permissions.txt` on v1.10–v1.13 and master: "When migrating from a 4.4 source
 * cluster, the source cluster should either have clusterManager or the minimum permissions listed
 * for v4.4"): every source below this server version.
 */
export const PRE_6_0_SOURCE = { belowServer: "6.0", role: "clusterManager" } as const;

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
