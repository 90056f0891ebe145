/** Server versions and feature compatibility versions against the service's documented requirements and `serverVersion`. */
import { SERVER, atLeast, compareVersions } from "../../api/versions.js";
import { clusterPath, startPath, type CheckInput, type Findings } from "../findings.js";
import { MIN_FCV, isRapidRelease, majorMinor, serverRules } from "../docs.js";
import type { ClusterFacts } from "../types.js";

function writeBlocking(input: CheckInput): boolean {
  const b = input.start?.body;
  if (!b) return false;
  const wb = b.enableUserWriteBlocking;
  return b.reversible === true || wb === true || wb === "sourceAndDestination" || wb === "destinationOnly";
}

export function check(input: CheckInput, out: Findings): void {
  const svc = input.runbook.serviceVersion;
  const rules = serverRules(svc);
  const forSvc = svc === undefined ? "the newest service version" : `service ${svc}`;
  const versionOf = (f: ClusterFacts | undefined): string | undefined => (f?.version.ok ? f.version.value : undefined);

  for (const [name, facts] of input.clusters) {
    const at = clusterPath(name);
    if (!facts.version.ok) {
      out.notChecked(at, "the server version", `buildInfo failed (${facts.version.why})`);
      continue;
    }
    const v = facts.version.value;
    const mm = majorMinor(v);
    const declared = input.runbook.clusters?.[name]?.serverVersion;
    if (declared !== undefined) {
      const parts = declared.split(".").length;
      const same = parts === 2 ? majorMinor(v) === declared : compareVersions(v, declared) === 0;
      if (!same)
        out.add(
          "preflight-declared-version",
          [...at, "serverVersion"],
          `Cluster \`${name}\` is declared as server ${declared} and runs ${v}.`,
        );
    }
    const role = facts === input.source ? "source" : facts === input.destination ? "destination" : undefined;
    if (isRapidRelease(v)) {
      out.add(
        "preflight-server-version",
        at,
        `Cluster \`${name}\` runs ${v}, a rapid or minor release; the service supports major releases only (${rules.sources.join(", ")}).`,
        { key: true },
      );
    } else if (role !== undefined) {
      const supported = role === "source" ? rules.sources : rules.destinations;
      if (!supported.includes(mm)) {
        out.add(
          "preflight-server-version",
          at,
          `Cluster \`${name}\` (the ${role}) runs ${v}; ${forSvc} supports ${role}s on ${supported.join(", ")}.`,
          { key: true },
        );
      } else {
        const min = rules.minPatch[mm];
        if (min !== undefined && !atLeast(v, min))
          out.add(
            "preflight-server-version",
            at,
            `Cluster \`${name}\` runs ${v}, below the minimum patch release ${min} that ${forSvc} requires for ${mm}.`,
            { key: true },
          );
      }
    }
    if (!facts.fcv.ok)
      out.notChecked(at, "the feature compatibility version", `getParameter failed (${facts.fcv.why})`);
    else {
      const min = MIN_FCV[mm];
      if (min !== undefined && !atLeast(facts.fcv.value, min))
        out.add(
          "preflight-fcv",
          at,
          `Cluster \`${name}\` runs ${v} with feature compatibility version ${facts.fcv.value}; the service needs at least ${min} on ${mm}.`,
          { key: true },
        );
    }
  }

  // the pair, and write blocking's 6.0 source
  const sv = versionOf(input.source);
  const dv = versionOf(input.destination);
  if (input.source && input.destination && sv !== undefined && dv !== undefined) {
    const ok = rules.pairs[majorMinor(sv)] ?? [];
    if (rules.sources.includes(majorMinor(sv)) && !ok.includes(majorMinor(dv)))
      out.add(
        "preflight-server-version",
        startPath(input, "destination"),
        `${forSvc[0]?.toUpperCase() ?? ""}${forSvc.slice(1)} cannot sync a ${majorMinor(sv)} source (\`${input.source.name}\`) to a ${majorMinor(dv)} destination (\`${input.destination.name}\`); from ${majorMinor(sv)} it syncs to ${ok.join(", ") || "nothing"}.`,
      );
  }
  if (
    input.source &&
    sv !== undefined &&
    writeBlocking(input) &&
    !atLeast(majorMinor(sv), SERVER.sourceForWriteBlocking.server)
  )
    out.add(
      "preflight-server-version",
      startPath(input, "enableUserWriteBlocking"),
      `Write blocking (or reversible) needs a source on server ${SERVER.sourceForWriteBlocking.server} or newer; \`${input.source.name}\` runs ${sv}.`,
      { key: true },
    );
}
