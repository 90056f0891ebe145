/**
 * Why an instance is not ready to commit, and when it will be: the one wording, read from the
 * read model's instance (`ModelInstance`, folded from progress answers), for every reader that
 * says it (`syncbook watch`'s page and `/state.json`, `syncbook status`, the run's live view:
 * each through `fleetReadiness`).
 *
 * What `canCommit` waits for, quoted from the current documentation's progress response table
 * (mongodb/docs, content/mongosync/current/source/includes/api/tables/progress-response.rst,
 * included by reference/api/progress.txt; the `canCommit` row): "The initial sync has completed and is applying change events. The embedded verifier is
 * in an appropriate state for commit. The lag for `mongosync` and the embedded verifier is 30
 * seconds or less." and, with `buildIndexes` `afterDataCopy`, "also indicates that index builds
 * are complete"; "versionchanged 1.21: `canCommit` is `false` when `mongosync` or the embedded
 * verifier reports more than 30 seconds of lag" (service-facts.md says the same). The embedded
 * verifier's phases are `not started`, `initial hashing` and `stream hashing`; the cutover waits
 * for both sides in `stream hashing` (service-facts.md, "The embedded verifier (1.9)").
 *
 * The ETA is an estimate from the trend, never a promise: the copy's from the fleet's copied
 * bytes (src/fleet/eta.ts, the one copy ETA), the lag's from its change per second over the last
 * answers (`lagRate`). A trend that does not bring the figure down says "not converging".
 */
import type { CopyView } from "../fleet/eta.js";
import { sameService } from "../instance-identity.js";
import { durationMs, formatDuration } from "../runbook/duration.js";
import type { ModelInstance } from "./contract.js";

/** The lag limit above which `canCommit` is false from 1.21 (seconds; quoted above). */
export const SERVICE_LAG_LIMIT_S = 30;

/**
 * 1.22's `ceaStage` while change event application still drains the backlog the collection copy
 * left ("collection copy drain"; the other value is "steady state": service-facts.md's progress
 * table). Read: mongodb/docs content/mongosync/current/source/reference/api/progress.txt
 * (cebf01bd), which includes includes/api/tables/progress-response.rst: neither stored version of
 * that table (1fb72261, 5dabe30f) has the field yet; the 1.22 release notes
 * (content/mongosync/current/source/release-notes/1.22.txt, 42e877ed) say it "reports whether
 * Change Event Application (CEA) is still draining the backlog of change events that accumulated
 * during collection copy or is now applying change events that occurred after collection copy
 * finished". While the backlog drains, the lag measures the copy's backlog, not the sync keeping
 * up with the source: a lag that does not fall then is no verdict on convergence, so readiness
 * says "draining" and no ETA rather than "not converging". Only this exact value counts: an
 * answer without the field (before 1.22) or with another value is judged as before.
 */
export const CEA_DRAIN = "collection copy drain";

export interface Readiness {
  instance: string;
  /** `canCommit` true and nothing below holds it back. */
  ready: boolean;
  /** Each thing that holds it back, in words (empty when ready). */
  reasons: string[];
  /** When it will be ready, from the trend: `about 4m`, `not converging`, `unknown`; undefined when ready. */
  eta?: string;
  /**
   * Past the question, said as such, never as "ready": its state (COMMITTING, COMMITTED,
   * REVERSING), or `commit sent` where the journal shows the commit sent to it (`pastTheCommit`).
   */
  past?: string;
}

export interface ReadinessOptions {
  /** The runbook's `lagBelow` (seconds) for the wait before the commit, when known. */
  lagBelowSeconds?: number;
  /** The fleet's copy and its ETA (src/fleet/eta.ts `copyProgress`). */
  copy?: CopyView;
  /** Now (epoch ms), for "not answering for 2m". */
  now?: number;
  /**
   * The cutover's start turned the embedded verifier off (`verification: { enabled: false }`):
   * its phases then stay `not started` and hold nothing back. Without this, a page read
   * "not ready" for ever on a fleet the runner was already committing.
   */
  embeddedVerifierOff?: boolean;
}

/** What readiness needs from the runbook: its `lagBelow` and whether the embedded verifier is off. */
export type ReadinessPlan = Pick<ReadinessOptions, "lagBelowSeconds" | "embeddedVerifierOff">;

/** States past the point of readiness: the question is over. */
const PAST = new Set(["COMMITTING", "COMMITTED", "REVERSING"]);

/** Why `i` is not ready to commit, with an ETA from the trend. */
export function readiness(i: ModelInstance, opts: ReadinessOptions = {}): Readiness {
  const reasons: string[] = [];
  const etas: (number | "not converging" | "unknown")[] = [];
  if (i.down) {
    const since = opts.now !== undefined ? ` for ${formatDuration(Math.max(0, opts.now - i.down.since))}` : "";
    reasons.push(`not answering${since}: ${i.down.error}`);
    etas.push("unknown");
  }
  if (i.state !== undefined && PAST.has(i.state))
    return { instance: i.label, ready: i.state !== "REVERSING", reasons, past: i.state };
  if (i.state === undefined && !i.down) {
    reasons.push("no progress answer yet");
    etas.push("unknown");
  } else if (i.state !== undefined && i.state !== "RUNNING") {
    reasons.push(`state ${i.state} (a commit needs RUNNING)`);
    etas.push("unknown");
  }
  const copy = opts.copy;
  if (i.info === "collection copy" || (copy?.started && copy.fraction !== undefined && copy.fraction < 1)) {
    const pct = copy?.fraction !== undefined ? `: ${Math.floor(copy.fraction * 1000) / 10}% of the fleet's copy` : "";
    reasons.push(`collection copy not done${pct}`);
    if (copy?.etaMs !== undefined) etas.push(copy.etaMs);
    else etas.push(copy?.eta === "stalled" ? "not converging" : "unknown");
  }
  const ib = i.indexBuilding;
  if (ib) {
    const built = typeof ib.indexesBuilt === "number" ? ib.indexesBuilt : undefined;
    const total = typeof ib.totalIndexesToBuild === "number" ? ib.totalIndexesToBuild : undefined;
    if (built === undefined || total === undefined || built < total) {
      reasons.push(`index builds: ${built ?? "?"} of ${total ?? "?"} indexes built`);
      etas.push("unknown");
    }
  }
  for (const side of ["source", "destination"] as const) {
    const e = opts.embeddedVerifierOff === true ? undefined : i.embedded?.[side];
    if (!e) continue;
    if (e.phase !== undefined && e.phase !== "stream hashing") {
      reasons.push(`embedded verifier (${side}): ${e.phase}, not yet stream hashing`);
      etas.push("unknown");
    }
    if (e.lagSeconds !== undefined && e.lagSeconds > SERVICE_LAG_LIMIT_S) {
      reasons.push(
        `embedded verifier (${side}) lag ${formatDuration(e.lagSeconds * 1000, "up")}, over the service's 30s limit`,
      );
      etas.push("unknown");
    }
  }
  const lag = i.lagSeconds;
  if (typeof lag === "number") {
    const limit = opts.lagBelowSeconds;
    const over =
      limit !== undefined && lag >= limit
        ? { target: limit, words: `the runbook's lagBelow ${formatDuration(limit * 1000)}` }
        : lag > SERVICE_LAG_LIMIT_S
          ? { target: SERVICE_LAG_LIMIT_S, words: "the service's 30s limit" }
          : undefined;
    if (over) {
      const rate = i.lagRate;
      const draining = i.ceaStage === CEA_DRAIN;
      const trend =
        rate === undefined
          ? "trend not known yet"
          : rate < 0
            ? `falling ${formatRate(-rate)}`
            : rate > 0
              ? `rising ${formatRate(rate)}`
              : "steady";
      const drain = draining
        ? "; still draining the collection copy's backlog (ceaStage), where a lag that does not fall is expected"
        : "";
      reasons.push(`lag ${formatDuration(lag * 1000)}, not below ${over.words} (${trend}${drain})`);
      if (rate === undefined) etas.push("unknown");
      // the drain's lag is the backlog's: no trend of it says the sync will not catch up
      else if (rate >= 0) etas.push(draining ? "unknown" : "not converging");
      else etas.push(((lag - over.target) / -rate) * 1000);
    }
  }
  if (i.canCommit === false && reasons.length === 0) {
    reasons.push("canCommit false (progress says no more)");
    etas.push("unknown");
  }
  for (const w of i.warnings ?? []) reasons.push(`service warning: ${typeof w === "string" ? w : JSON.stringify(w)}`);
  const ready = i.canCommit === true && reasons.every((r) => r.startsWith("service warning: "));
  return { instance: i.label, ready, reasons, ...(ready ? {} : { eta: etaWords(etas) }) };
}

/** Every instance's readiness, in fleet order: the one entry of status, watch and the live view. */
export function fleetReadiness(
  fleet: { instances: readonly ModelInstance[]; copy?: CopyView },
  opts: Omit<ReadinessOptions, "copy"> = {},
): Readiness[] {
  return fleet.instances.map((i) => readiness(i, { ...opts, ...(fleet.copy ? { copy: fleet.copy } : {}) }));
}

/** The latest of the estimates: any part that does not converge makes the whole not converge. */
function etaWords(etas: readonly (number | "not converging" | "unknown")[]): string {
  if (etas.includes("not converging")) return "not converging";
  if (etas.length === 0 || etas.includes("unknown")) return "unknown";
  return `about ${formatDuration(Math.max(...(etas as number[])))}`;
}

const formatRate = (perSecond: number): string =>
  `${perSecond >= 10 ? Math.round(perSecond) : Math.round(perSecond * 10) / 10}s per second`;

/** One line: `ready`, or `not ready (ETA about 4m): lag 42s, …; …`. */
export function readinessLine(r: Readiness): string {
  if (r.past !== undefined) return `past it: ${r.past}`;
  if (r.ready) return r.reasons.length ? `ready (${r.reasons.join("; ")})` : "ready";
  return `not ready (ETA ${r.eta ?? "unknown"}): ${r.reasons.join("; ")}`;
}

/**
 * Readiness once the journal shows a commit sent to an instance: the question is over for it,
 * whatever a read from before the commit still says (watch reads the fleet once a second, so for
 * a second after the commit its last read showed RUNNING with canCommit, and the page said "ready
 * to commit: yes" under a cutover it called committed). `sentTo`: the instances' labels.
 */
export function pastTheCommit(
  rs: readonly Readiness[],
  sentTo: ReadonlySet<string>,
  /**
   * The instances an earlier cutover's commit that may still take effect may have reached
   * (src/run/earlier.ts `earlierCommitReached`): each holds it in commit's round and shows RUNNING
   * with canCommit, and the page said "ready to commit: yes" where this cutover's commit is refused.
   */
  earlierSentTo: ReadonlySet<string> = new Set(),
): Readiness[] {
  return rs.map((r) =>
    r.past !== undefined
      ? r
      : sentTo.has(r.instance)
        ? { instance: r.instance, ready: true, reasons: [], past: "commit sent" }
        : earlierSentTo.has(r.instance)
          ? { instance: r.instance, ready: true, reasons: [], past: EARLIER_COMMIT_SENT }
          : r,
  );
}

/**
 * The labels of `instances` whose URL names the service of one of `urls` (`sameService`: "maybe",
 * two loopback spellings, counts as one, as the checks that keep things apart read it).
 */
export function urlsAt(urls: readonly string[], instances: readonly { label: string; url: string }[]): Set<string> {
  return new Set(instances.filter((i) => urls.some((u) => sameService(u, i.url) !== "different")).map((i) => i.label));
}

/** What readiness says of an instance an earlier cutover's commit that may still hold may have reached. */
export const EARLIER_COMMIT_SENT = "an earlier cutover's commit sent";

/**
 * A large fleet's readiness in one line: `ready to commit: 61 of 64 instances; shard-7: not ready
 * (ETA about 2m): lag 42s …`, the first that is not ready said in full.
 */
export function readinessSummary(rs: readonly Readiness[]): string {
  // an instance past the question (COMMITTING, COMMITTED, REVERSING) is neither ready nor not
  const past = new Map<string, number>();
  for (const r of rs) if (r.past !== undefined) past.set(r.past, (past.get(r.past) ?? 0) + 1);
  const pastText = [...past].map(([s, n]) => `${s}×${n}`).join(", ");
  const open = rs.filter((r) => r.past === undefined);
  if (open.length === 0) return `ready to commit: past it (${pastText})`;
  const first = open.find((r) => !r.ready);
  return `ready to commit: ${open.filter((r) => r.ready).length} of ${rs.length} instances${
    past.size ? ` (past it: ${pastText})` : ""
  }${first ? `; ${first.instance}: ${readinessLine(first)}` : ""}`;
}

/**
 * What changes when readiness changes, for a reader that prints only changes (the line renderer,
 * `--renderer simple`): the instance, its verdict and each thing that holds it back, without the
 * figures every read moves (a lag, a percentage, a duration), the bracket after a reason (the
 * lag's trend, which turns with every wobble) and the ETA. So a lag falling from 45s to 44s is no
 * change, and an instance turning ready, or held back by something new, is.
 */
export function readinessKey(r: Readiness): string {
  return [
    r.instance,
    r.ready ? "ready" : "not ready",
    ...r.reasons.map((x) => withoutBracket(x).replace(FIGURES, "#")),
  ].join("\u0000");
}

/** A number with its unit, and the next ones of a duration in words (`1m 05s`, `45.3%`, `500ms`). */
const FIGURES = /\d[\d.]*(?:ms|[smhd%])?(?: \d[\d.]*(?:ms|[smhd]))*/g;

/** `x (y (z))` → `x`: the last bracket of a reason, nested ones with it. */
function withoutBracket(s: string): string {
  if (!s.endsWith(")")) return s;
  let depth = 0;
  for (let k = s.length - 1; k >= 0; k--) {
    if (s[k] === ")") depth++;
    else if (s[k] === "(" && --depth === 0) return s.slice(0, k).trimEnd();
  }
  return s;
}

/**
 * The runbook's `lagBelow` before its commit: the last condition with one (a wait or an assert)
 * before the first step that sends `commit`. The steps as their kinds describe them (their
 * `command` trait and `condition()`, src/steps/index.ts, handed in: the steps sit above).
 * Undefined when there is none (readiness then measures the service's own 30 s limit).
 */
export function lagBelowOf(
  steps: readonly { command: string | undefined; condition: { lagBelow?: unknown } | undefined }[],
): number | undefined {
  let found: number | undefined;
  for (const s of steps) {
    if (s.command === "commit") break;
    const v = s.condition?.lagBelow;
    if (typeof v === "string" || typeof v === "number") {
      const ms = durationMs(v);
      if (ms !== undefined) found = ms / 1000;
    }
  }
  return found;
}
