/** The connecting user's roles against the documented roles of the service's user, by sync type. */
import { BEHAVIOUR, serviceAtLeast } from "../../api/versions.js";
import { clusterPath, type CheckInput, type Findings } from "../findings.js";
import { REQUIRED_ROLES, effectiveRoles, type SyncType } from "../docs.js";

/** Which row of the permissions table applies. */
export function syncType(input: CheckInput): SyncType {
  const b = input.start?.body;
  if (b?.reversible === true) return "reversing";
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
    const need = REQUIRED_ROLES[type][role];
    const missing = need.filter((r) => !have.has(r));
    if (missing.length === 0) continue;
    const custom = auth.roles.filter((r) => !effectiveRolesKnown.has(r.role)).map((r) => `${r.role}@${r.db}`);
    const who = auth.users.map((u) => `${u.user}@${u.db}`).join(", ");
    out.add(
      "preflight-privileges",
      at,
      `The user ${who} on the ${role} \`${facts.name}\` lacks ${missing.map((r) => `\`${r}\``).join(", ")} (${type === "default" ? "a default sync" : type === "reversing" ? "a reversible sync" : "a sync with write blocking"} needs ${need.join(", ")})${custom.length ? `; custom roles (${custom.join(", ")}) are not judged` : ""}.`,
      { key: true },
    );
  }
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
