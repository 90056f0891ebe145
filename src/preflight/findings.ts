/**
 * What a check family produces: findings at a runbook path, turned into lint's diagnostics (with
 * positions and redaction) in one place, index.ts. Checks stay pure functions over plain facts.
 */
import type { YamlPath } from "../runbook/view.js";
import type { Runbook, StartRequest } from "../runbook/types.js";
import type { ClusterFacts } from "./types.js";
import type { Selection } from "./selection.js";

export interface Finding {
  id: string;
  path: YamlPath;
  message: string;
  hint?: string;
  /** Point at the mapping key rather than its value. */
  key?: boolean;
}

export class Findings {
  readonly list: Finding[] = [];

  add(id: string, path: YamlPath, message: string, opts: { hint?: string; key?: boolean } = {}): void {
    this.list.push({ id, path, message, ...opts });
  }

  /** A check that could not run: a warning, never a silent pass. */
  notChecked(path: YamlPath, check: string, why: string, hint?: string): void {
    this.add("preflight-not-checked", path, `Not checked: ${check}: ${why}.`, hint === undefined ? {} : { hint });
  }
}

/**
 * The runbook's first start request, where the sync's shape is written: found by the step kinds
 * (`firstStartRequest`, src/steps/index.ts), which sit above preflight, and handed down.
 */
export interface StartAt {
  index: number;
  /** Its place: the step's kind key (`["steps", i, kind]`). */
  at: YamlPath;
  body: StartRequest;
}

export interface CheckInput {
  runbook: Runbook;
  start: StartAt | undefined;
  /** How many steps send `reverse`. */
  reverses: number;
  /** Facts of every cluster preflight reached, by runbook name. */
  clusters: ReadonlyMap<string, ClusterFacts>;
  source: ClusterFacts | undefined;
  destination: ClusterFacts | undefined;
  /** The synced namespaces, when the source's namespaces could be listed. */
  selection: Selection | undefined;
  copyRateBytesPerSecond: number;
  oplogHeadroom: number;
}

/** Path of a cluster's setting in the runbook. */
export const clusterPath = (name: string): YamlPath => ["clusters", name];

/** Path of the start body (or the top of the runbook). */
export const startPath = (input: CheckInput, ...rest: (string | number)[]): YamlPath =>
  input.start ? [...input.start.at, ...rest] : [];

export const ns = (db: string, coll: string): string => `${db}.${coll}`;
