/** The connecting user's roles against the documented roles of the service's user, by sync type. */
import { BEHAVIOUR, atLeast, serviceAtLeast } from "../../api/versions.js";
import { clusterPath, type CheckInput, type Findings } from "../findings.js";
import { PRE_6_0_SOURCE, REQUIRED_ROLES, effectiveRoles, type SyncType } from "../docs.js";

/** Which row of the permissions table applies. */
export function syncType(input: CheckInput): SyncType {
  const b = input.start?.body;
  if (b?.reversible === true) {
    // the table's "Multiple Reversals" row: a runbook that reverses more than once
    return input.reverses > 1 ? "multiple-reversals" : "reversing";
  }
  const wb = b?.enableUserWriteBlocking;
  if (wb === true || wb === "sourceAndDestination") return "write-blocking";
  // from 1.20 the service manages write blocking on both sides itself; from which configuration is
  // not published (service facts, "Not published"): the reading that fails safe asks for the roles
  // of a sync with write blocking, the larger set
  if (serviceAtLeast(input.runbook, BEHAVIOUR.writeBlockingFromConfig.since)) return "write-blocking";
  return "default";
}

export function check(input: CheckInput, out: Findings): void {
  const type = syncType(input);
  for (const [role, facts] of [
    ["source", input.source],
    ["destination", input.destination],
  ] as const) {
    if (!facts) continue;
    const at = clusterPath(facts.name);
    if (!facts.auth.ok) {
      out.notChecked(at, `the roles of the user on the ${role}`, `connectionStatus failed (${facts.auth.why})`);
      continue;
    }
    const auth = facts.auth.value;
    if (auth.users.length === 0) {
      out.notChecked(
        at,
        `the roles of the user on the ${role}`,
        "no user is logged in (authorization disabled, or a connection string without credentials)",
        "Give preflight the connection string the service uses: the checks are only as good as the user they run as.",
      );
      continue;
    }
    const have = effectiveRoles(auth.roles);
    const preSix = role === "source" && olderThan6(input, facts);
    const need = [...REQUIRED_ROLES[type][role], ...(preSix ? [PRE_6_0_SOURCE.role] : [])].filter(
      (r, i, all) => all.indexOf(r) === i,
    );
    const missing = need.filter((r) => !have.has(r));
    if (missing.length === 0) continue;
    const custom = auth.roles.filter((r) => !effectiveRolesKnown.has(r.role)).map((r) => `${r.role}@${r.db}`);
    const who = auth.users.map((u) => `${u.user}@${u.db}`).join(", ");
    out.add(
      "preflight-privileges",
      at,
      `The user ${who} on the ${role} \`${facts.name}\` lacks ${missing.map((r) => `\`${r}\``).join(", ")} (${TYPE_WORDS[type]}${preSix ? ` from a source on server ${preSix}` : ""} needs ${need.join(", ")}${preSix && missing.includes(PRE_6_0_SOURCE.role) ? `; instead of \`${PRE_6_0_SOURCE.role}\`, the minimum privileges the permissions page lists for a pre-6.0 source will do` : ""})${custom.length ? `; custom roles (${custom.join(", ")}) are not judged` : ""}.`,
      { key: true },
    );
  }
}

const TYPE_WORDS: Record<SyncType, string> = {
  default: "a default sync",
  "write-blocking": "a sync with dual write blocking",
  reversing: "a reversible sync",
  "multiple-reversals": "a sync reversed more than once",
};

/**
 * The source's server version when it is older than 6.0 (read from the cluster, else the
 * runbook's `serverVersion`); undefined when it is 6.0 or newer, or not known (then nothing more
 * is asked for: the table's roles are the reading).
 */
function olderThan6(input: CheckInput, facts: NonNullable<CheckInput["source"]>): string | undefined {
  const declared = input.runbook.clusters?.[facts.name]?.serverVersion;
  const v = facts.version.ok ? facts.version.value : declared;
  return v !== undefined && !atLeast(v, PRE_6_0_SOURCE.belowServer) ? v : undefined;
}

/** Built-in roles preflight knows; others are custom roles it cannot judge by name. */
const effectiveRolesKnown = new Set([
  "read",
  "readWrite",
  "dbAdmin",
  "dbOwner",
  "userAdmin",
  "readAnyDatabase",
  "readWriteAnyDatabase",
  "userAdminAnyDatabase",
  "dbAdminAnyDatabase",
  "backup",
  "restore",
  "clusterMonitor",
  "clusterManager",
  "clusterAdmin",
  "hostManager",
  "root",
  "__system",
  "enableSharding",
  "directShardOperations",
  "searchCoordinator",
]);
