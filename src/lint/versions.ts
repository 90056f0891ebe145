/**
 * Start fields and values against the runbook's `serviceVersion`, from the one table of the
 * service by version (src/api/versions.ts): a field newer than the version, a field the version
 * removed, a value newer than the version. Without a `serviceVersion`, what depends on it is
 * listed once, with what the documentation says. A version before the oldest supported release
 * is said once, as a warning, at the `serviceVersion` field.
 */
import {
  SUPPORT,
  atLeast,
  endOfLife,
  startField,
  startVersionProblems,
  versionDependentParts,
  versionRange,
} from "../api/versions.js";
import type { LintContext, RuleInfo, YamlPath } from "./context.js";
import { q } from "./context.js";
import { startRequests } from "./kinds.js";

export const rules = [
  {
    id: "version-feature",
    severity: "error",
    description:
      "A start field or value that `serviceVersion` does not have: newer than it (e.g. `skipDiskSpaceCheck` 1.22, `buildIndexes: afterDataCopy` 1.16), or removed by then (`enableUserWriteBlocking` from 1.20).",
    spec: "start body, by version: each field and value from its version; `enableUserWriteBlocking` … removed in 1.20: never send it to a 1.20+ service.",
    source: "service-facts.md",
    hint: "Remove the field, or raise `serviceVersion` once every instance runs a version that has it.",
  },
  {
    id: "service-version-missing",
    severity: "warning",
    description:
      "The start body uses fields or values that depend on the service version, and the runbook declares no `serviceVersion`: lint cannot check them.",
    spec: "The runner must work with every version a runbook's `serviceVersion` allows.",
    source: "service-facts.md",
    hint: 'Add `serviceVersion: "1.x.y"`: the lowest version any instance runs.',
  },
  {
    id: "service-version-eol",
    severity: "warning",
    description: `\`serviceVersion\` is older than ${SUPPORT.oldestSupported.version}, the oldest supported release: every earlier version is end of life. Said once, at the \`serviceVersion\` field.`,
    spec: "Supported versions: 1.20 is the oldest supported release; all earlier ones are end of life [release notes index]. 1.22 is the current stable release (2026-09-09).",
    source: "service-facts.md",
    hint: `Upgrade every instance to a supported release (${SUPPORT.current.version} is the current one), then raise \`serviceVersion\` to the lowest version any instance runs. No live upgrade to ${SUPPORT.oldestSupported.version} is published: upgrade before \`start\`, not while a sync runs.`,
  },
] as const satisfies readonly RuleInfo[];

const show = (v: string | boolean): string => (typeof v === "string" ? q(v) : String(v));

export function check(ctx: LintContext): void {
  const version = ctx.runbook.serviceVersion;
  // facts, "Supported versions": "1.20 is the oldest supported release; all earlier ones are end
  // of life [release notes index]": once per runbook, where the version is declared
  if (version !== undefined && endOfLife(version))
    ctx.report(
      "service-version-eol",
      ["serviceVersion"],
      `serviceVersion ${q(version)} is end of life: ${SUPPORT.oldestSupported.version} is the oldest supported release, and every earlier one is end of life (release notes index); the current release is ${SUPPORT.current.version}.`,
    );
  let missing: { at: YamlPath; parts: string[]; reversible: boolean } | undefined;
  for (const { request: s, at } of startRequests(ctx)) {
    if (version === undefined) {
      const parts = versionDependentParts(s);
      if (parts.length > 0 || s.reversible === true) {
        missing ??= { at: [...at, parts[0]?.field ?? "reversible"], parts: [], reversible: false };
        for (const p of parts) if (!missing.parts.includes(p.text)) missing.parts.push(p.text);
        missing.reversible ||= s.reversible === true;
      }
      continue;
    }
    for (const p of startVersionProblems(s, version)) {
      const where = [...at, ...p.path];
      if (p.kind === "removed") {
        ctx.report(
          "version-feature",
          where,
          `${p.field} was removed from start in service ${p.version}; serviceVersion is ${q(version)}. Never send it to a ${p.version}+ service${p.field === "enableUserWriteBlocking" ? ": from 1.20 the service manages write blocking on both sides from its own configuration" : ""}.`,
          {
            key: true,
            hint: `Remove ${q(p.field)}${p.field === "enableUserWriteBlocking" ? " (from 1.20 `reversible` needs no write blocking in the start body)" : ""}.`,
          },
        );
      } else if (p.value !== undefined) {
        const allowed = (startField(p.field)?.values ?? [])
          .filter((v) => atLeast(version, v.since))
          .map((v) => show(v.value));
        ctx.report(
          "version-feature",
          where,
          `${p.field} ${show(p.value)} needs service ${p.version} or newer; serviceVersion is ${q(version)}.`,
          {
            hint: `At ${version}: ${allowed.join(", ")}. Or raise \`serviceVersion\` once every instance runs ${p.version} or newer.`,
          },
        );
      } else {
        ctx.report(
          "version-feature",
          where,
          `${p.field} needs service ${p.version} or newer (${versionRange(p.row.since, p.row.until)}); serviceVersion is ${q(version)}: an older service refuses it like a misspelt field.`,
          { key: true },
        );
      }
    }
  }
  if (missing) {
    const what = [
      ...missing.parts,
      ...(missing.reversible
        ? [
            "reversible (before 1.20 it needs enableUserWriteBlocking on source and destination; from 1.20 enableUserWriteBlocking must not be sent)",
          ]
        : []),
    ];
    ctx.report(
      "service-version-missing",
      missing.at,
      `The runbook declares no \`serviceVersion\`, so lint cannot check what depends on it. The documentation says: ${what.join("; ")}.`,
      { key: true },
    );
  }
}
