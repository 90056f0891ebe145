/**
 * Fleet identity: are the instances of the runbook one fleet syncing the clusters it names?
 * Catches a URL listed twice (same mongosyncID), an instance of another fleet (another
 * coordinatorID or direction), a missing instance (nobody is the coordinator) and a runbook
 * pointed at the wrong deployment (clusters not in directionMapping).
 *
 * Only what is known is checked: in IDLE every field but `state` and `canCommit` is null (spec,
 * progress rule 1), ids are absent before 1.3, and an instance that did not answer says nothing.
 */
import { stripUserinfo as redactText } from "../redact.js";
import type { Progress } from "../api/types.js";
import { instanceLabel, type InstanceRef } from "../events.js";
import type { FleetSnapshot } from "./fleet.js";

export interface IdentityExpectation {
  /**
   * The cluster settings the runbook names (`clusters:` keys, or its start's source and
   * destination): both sides of directionMapping must be among them.
   */
  clusters?: readonly string[] | undefined;
  /** The cluster expected as directionMapping.Source (e.g. after a reverse, the old destination). */
  source?: string | undefined;
  destination?: string | undefined;
  /**
   * How many instances the fleet has (default: the snapshot's). A read of only some of them (the
   * instances a condition reads) cannot tell whether the coordinator is one of the fleet's.
   */
  fleetSize?: number | undefined;
}

export interface IdentityProblem {
  /** The instance that differs; undefined for a problem of the whole fleet. */
  instance: InstanceRef | undefined;
  message: string;
}

/** The cluster name of a `<cluster_name>: <host>:<port>` directionMapping value. */
export function clusterName(side: string): string {
  const i = side.indexOf(": ");
  return (i >= 0 ? side.slice(0, i) : side).trim();
}

const q = (v: string): string => JSON.stringify(redactText(v));
const others = (n: number): string => (n === 1 ? "1 other instance reports" : `${n} other instances report`);

interface Known<T> {
  ref: InstanceRef;
  value: T;
}

/** Groups by key; the largest group first (ties: the one seen first). */
function groups<T>(items: Known<T>[], key: (v: T) => string): { key: string; members: Known<T>[] }[] {
  const m = new Map<string, Known<T>[]>();
  for (const it of items) {
    const k = key(it.value);
    const g = m.get(k);
    if (g) g.push(it);
    else m.set(k, [it]);
  }
  return [...m.entries()]
    .map(([k, members]) => ({ key: k, members }))
    .sort((a, b) => b.members.length - a.members.length);
}

function known<T>(snapshot: FleetSnapshot, pick: (p: Progress) => T | null | undefined): Known<T>[] {
  const out: Known<T>[] = [];
  for (const s of snapshot.instances) {
    if (!s.progress) continue;
    const v = pick(s.progress);
    if (v !== null && v !== undefined) out.push({ ref: s.ref, value: v });
  }
  return out;
}

export function identityProblems(snapshot: FleetSnapshot, expect: IdentityExpectation = {}): IdentityProblem[] {
  const problems: IdentityProblem[] = [];

  // distinct instance ids
  const ids = known(snapshot, (p) => p.mongosyncID);
  for (const g of groups(ids, (v) => v)) {
    const [first, ...dups] = g.members;
    for (const d of dups) {
      problems.push({
        instance: d.ref,
        message: `${instanceLabel(d.ref)} (${d.ref.url}) reports mongosyncID ${q(g.key)}, the same as ${instanceLabel(first!.ref)} (${first!.ref.url}): is one instance listed twice?`,
      });
    }
  }

  // exactly one coordinator
  const coords = known(snapshot, (p) => p.coordinatorID);
  const coordGroups = groups(coords, (v) => v);
  const main = coordGroups[0];
  for (const g of coordGroups.slice(1)) {
    for (const m of g.members) {
      problems.push({
        instance: m.ref,
        message: `${instanceLabel(m.ref)} reports coordinatorID ${q(g.key)}; ${others(main!.members.length)} ${q(main!.key)}: is it an instance of another fleet?`,
      });
    }
  }
  // the coordinator must be one of the runbook's instances; decidable only when every instance was
  // read and told its id
  const whole = snapshot.instances.length === (expect.fleetSize ?? snapshot.instances.length);
  if (
    coordGroups.length === 1 &&
    whole &&
    ids.length === snapshot.instances.length &&
    !ids.some((i) => i.value === main!.key)
  ) {
    problems.push({
      instance: undefined,
      message: `no instance of the runbook is the coordinator ${q(main!.key)} (instances report ${ids.map((i) => q(i.value)).join(", ")}): is an instance missing from the runbook?`,
    });
  }

  // one direction everywhere
  const dirs = known(snapshot, (p) => {
    const d = p.directionMapping;
    return d && typeof d.Source === "string" && typeof d.Destination === "string"
      ? { source: d.Source, destination: d.Destination }
      : undefined;
  });
  const dirGroups = groups(dirs, (v) => `${v.source}\n${v.destination}`);
  const arrow = (v: { source: string; destination: string }): string =>
    `${redactText(v.source)} → ${redactText(v.destination)}`;
  const mainDir = dirGroups[0];
  for (const g of dirGroups.slice(1)) {
    for (const m of g.members) {
      problems.push({
        instance: m.ref,
        message: `${instanceLabel(m.ref)} syncs ${arrow(m.value)}; ${others(mainDir!.members.length)} ${arrow(mainDir!.members[0]!.value)}`,
      });
    }
  }

  // the clusters the runbook names
  if (mainDir) {
    const v = mainDir.members[0]!.value;
    const src = clusterName(v.source);
    const dst = clusterName(v.destination);
    const named = expect.clusters;
    if (named && named.length > 0) {
      for (const [side, c] of [
        ["source", src],
        ["destination", dst],
      ] as const) {
        if (!named.includes(c))
          problems.push({
            instance: undefined,
            message: `the fleet syncs ${arrow(v)}: ${side} cluster ${q(c)} is not one the runbook names (${named.map(q).join(", ")})`,
          });
      }
    }
    if (expect.source !== undefined && expect.source !== src)
      problems.push({
        instance: undefined,
        message: `expected source cluster ${q(expect.source)}, but the fleet syncs ${arrow(v)}`,
      });
    if (expect.destination !== undefined && expect.destination !== dst) {
      problems.push({
        instance: undefined,
        message: `expected destination cluster ${q(expect.destination)}, but the fleet syncs ${arrow(v)}`,
      });
    }
  }
  return problems;
}
