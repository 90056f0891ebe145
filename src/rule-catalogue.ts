/**
 * Every rule id a user can meet, in one typed catalogue: lint's (the loader's, the plugin checks',
 * each rule family's), preflight's checks and the wave's rules. Each entry is written beside the
 * code that reports it (a rule family's `rules`, `LOADER_RULES`, `PLUGIN_RULES`,
 * `PREFLIGHT_CHECKS`, `WAVE_RULES`), as typescript-eslint's rules carry their `meta`; this module
 * only joins them, says which command reports each (`tool`), and types the ids (`RuleId`).
 * docs/rules.md lists every one (test/rule-catalogue.test.ts keeps it whole and the ids unique).
 */
import type { RuleInfo } from "./diagnostics.js";
import { RULES } from "./lint/rules.js";
import { PLUGIN_RULES } from "./plugin/rules.js";
import { PREFLIGHT_CHECKS } from "./preflight/catalogue.js";
import { LOADER_RULES } from "./runbook/rules.js";
import { WAVE_RULES } from "./wave/lint.js";

/** The command that reports a rule: `syncbook lint` (and every run, which lints first), `preflight`, `wave lint`. */
export type RuleTool = "lint" | "preflight" | "wave";

/**
 * Every rule id. A plain string: the state model's rules are gathered from the step kinds at
 * import (`SEQUENCE_RULES`), so no literal union can name them all; `test/rule-catalogue.test.ts`
 * holds the catalogue against docs/rules.md instead.
 */
export type RuleId = string;

export interface CatalogueEntry extends RuleInfo {
  id: RuleId;
  tool: RuleTool;
}

const tagged = (tool: RuleTool, rules: readonly (RuleInfo & { id: RuleId })[]): CatalogueEntry[] =>
  rules.map((r) => ({ ...r, tool }));

export const CATALOGUE: readonly CatalogueEntry[] = Object.freeze([
  ...tagged("lint", LOADER_RULES),
  ...tagged("lint", PLUGIN_RULES),
  ...tagged("lint", RULES),
  ...tagged("preflight", PREFLIGHT_CHECKS),
  ...tagged("wave", WAVE_RULES),
]);

const BY_ID: ReadonlyMap<string, CatalogueEntry> = new Map(CATALOGUE.map((r) => [r.id, r]));

/** The entry of an id (any id a finding of any command can carry). */
export function catalogueEntry(id: string): CatalogueEntry | undefined {
  return BY_ID.get(id);
}
