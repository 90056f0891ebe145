/** Features of the start body newer than the runbook's `serviceVersion`. */
import type { StartRequest } from "../runbook/types.js";
import type { LintContext, RuleInfo, YamlPath } from "./context.js";
import { compareVersions, q } from "./context.js";
import { REGEX_FIELDS } from "./namespaces.js";

export const rules: RuleInfo[] = [
  {
    id: "version-feature",
    severity: "error",
    description:
      "A start field newer than `serviceVersion` (includeNamespaces and sharding 1.1, buildIndexes 1.3.0, excludeNamespaces and regex filters 1.6, verification 1.9).",
    spec: "Feature introductions (service version numbers): sharding option and includeNamespaces filter: 1.1; buildIndexes: 1.3.0; ... exclude filter: 1.6.",
    source: "sync-service-api.md",
    hint: "Remove the field, or raise `serviceVersion` once every instance runs a version that has it.",
  },
  {
    id: "service-version-missing",
    severity: "info",
    description: "The runbook uses version-gated features but declares no `serviceVersion`, so lint cannot check them.",
    spec: "serviceVersion: lowest version of the deployed service; lint gates features on it.",
    source: "DESIGN.md",
    hint: 'Add `serviceVersion: "1.x.y"`: the lowest version any instance runs.',
  },
];

/** Start-body features and the service version that introduced each. */
export const FEATURE_VERSIONS: readonly { field: keyof StartRequest; since: string; what: string }[] = [
  { field: "includeNamespaces", since: "1.1", what: "the includeNamespaces filter" },
  { field: "sharding", since: "1.1", what: "the sharding option" },
  { field: "buildIndexes", since: "1.3.0", what: "buildIndexes" },
  { field: "excludeNamespaces", since: "1.6", what: "the exclude filter (excludeNamespaces)" },
  { field: "verification", since: "1.9", what: "the embedded verifier option (verification)" },
];
export const REGEX_SINCE = "1.6";

export function check(ctx: LintContext): void {
  const version = ctx.runbook.serviceVersion;
  let gated: YamlPath | undefined;
  ctx.runbook.steps.forEach((step, i) => {
    if (!("start" in step) || !step.start) return;
    const s = step.start;
    const at: YamlPath = ["steps", i, "start"];
    for (const f of FEATURE_VERSIONS) {
      if (s[f.field] === undefined) continue;
      gated ??= [...at, f.field];
      if (version !== undefined && compareVersions(version, f.since) < 0) {
        ctx.report(
          "version-feature",
          [...at, f.field],
          `${f.what} needs service ${f.since} or newer; serviceVersion is ${q(version)}.`,
          { key: true },
        );
      }
    }
    for (const list of ["includeNamespaces", "excludeNamespaces"] as const) {
      s[list]?.forEach((entry, j) => {
        for (const field of REGEX_FIELDS) {
          if (!entry[field]) continue;
          gated ??= [...at, list, j, field];
          if (version !== undefined && compareVersions(version, REGEX_SINCE) < 0) {
            ctx.report(
              "version-feature",
              [...at, list, j, field],
              `Regular-expression filters (${field}) need service ${REGEX_SINCE} or newer; serviceVersion is ${q(version)}.`,
              {
                key: true,
              },
            );
          }
        }
      });
    }
  });
  if (version === undefined && gated) {
    ctx.report(
      "service-version-missing",
      gated,
      "This field depends on the service version, and the runbook declares no `serviceVersion`.",
      { key: true },
    );
  }
}
