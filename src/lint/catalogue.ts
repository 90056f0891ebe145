/**
 * The rule catalogue: every rule id a user can meet from `syncbook lint` (the loader's, the
 * plugin checks', then each lint rule family's), with its severity, description, the sentence it
 * enforces, its hint and where it is documented. `--list-rules`, SARIF and the docs read this.
 * Each entry lives beside the code that reports it (a rule family's `rules`, a step kind's `rules`
 * for lint's state model, `LOADER_RULES`, `PLUGIN_RULES`): adding a rule is one entry there.
 */
import type { RuleInfo } from "../diagnostics.js";
import { PLUGIN_RULES } from "../plugin/rules.js";
import { LOADER_RULES } from "../runbook/rules.js";
import { RULES } from "./rules.js";

export const RULE_CATALOGUE: readonly RuleInfo[] = Object.freeze([...LOADER_RULES, ...PLUGIN_RULES, ...RULES]);

const BY_ID: ReadonlyMap<string, RuleInfo> = new Map(RULE_CATALOGUE.map((r) => [r.id, r]));

/** The catalogue's entry for an id (any id a finding of lint can carry). */
export function ruleInfo(id: string): RuleInfo | undefined {
  return BY_ID.get(id);
}
