/**
 * `/state.json`: what `syncbook watch` serves, its shape versioned (`WATCH_FORMAT`; docs/watch.md
 * documents each field, like report.json's). The cutover's read model as the journals show it
 * (`model`, src/model/contract.ts, its own `version`), what watch read of the fleet and the
 * verifier itself (`live`), whether the runner is alive and what it left (`runner`), and why each
 * instance is not ready to commit, with an ETA (`readiness`, src/model/readiness.ts, the one
 * wording `status` prints too). Redacted leaf by leaf, keys included, before it is served.
 */
import type { CutoverModel, ModelInstance } from "../model/contract.js";
import { fleetReadiness, pastTheCommit, urlsAt, type Readiness } from "../model/readiness.js";
import { syncCommits } from "../model/fold.js";
import { redactLeaves } from "../redact.js";
import type { LiveView } from "./live.js";
import type { RunnerVerdict } from "./runner.js";
import type { DeadManRecord } from "./dead-man.js";
import { modelVerification, verificationShown, verificationText } from "../steps/index.js";

/** 1: the first shape (issue 38). A change a reader of the JSON could notice raises it. */
export const WATCH_FORMAT = 1;

export interface WatchState {
  format: typeof WATCH_FORMAT;
  /** When this state was made (epoch ms). */
  at: number;
  /** What watch follows: the journal folder, and the runbook when it was given one. */
  source: { folder: string; runbook?: string; journals: string[]; skippedLines: number };
  runner: RunnerVerdict;
  /** The dead-man's switch: the runbook's notifiers told that the runner is gone (once per run; dead-man.ts). */
  told?: DeadManRecord;
  /** Per instance, from watch's own reads when it has them, else from the journal's last samples. */
  readiness: Readiness[];
  /** The runbook's `lagBelow` that readiness measures against (seconds), when one was found. */
  lagBelowSeconds?: number;
  live: LiveView;
  model: CutoverModel;
  /**
   * Whether the cutover is verified, and why not: src/steps/kit/earned.ts `verification`, asked as
   * the report asks it (a review: the page said "result earned" of a generation after writesOff
   * that the verify step had refused: it compared nothing).
   */
  verification: ({ verified: true; filter?: string } | { verified: false; why: string }) & {
    /** In the words every output uses (`verificationText`). */
    text: string;
    /**
     * The verdict in capitals where every output says it (`verificationShown`: the destination may
     * take writes, or the last run ended ok at the runbook's end), as report.html's banner does;
     * absent before. The page's runner section and cutover line say it then.
     */
    headline?: string;
  };
}

/** Keys of our own that are not data to mask (a short secret equal to one would mask the shape). */
const OWN_WORDS: ReadonlySet<string> = new Set(["format", "version", "state", "source", "model", "live", "runner"]);

export function buildState(p: {
  now: number;
  folder: string;
  runbook?: string;
  journals: string[];
  skippedLines: number;
  model: CutoverModel;
  live: LiveView;
  runner: RunnerVerdict;
  told?: DeadManRecord;
  lagBelowSeconds?: number;
  embeddedVerifierOff?: boolean;
  /** The URLs of the instances an earlier cutover's commit that may still take effect may have reached (src/watch/journal-feed.ts). */
  earlierSentTo?: readonly string[];
  redact: (s: string) => string;
}): WatchState {
  // watch's own reads are now; the journal's samples are the runner's last
  const fresh = p.live.instances.some((i) => i.answeredAt !== undefined || i.down);
  const instances: ModelInstance[] = fresh ? p.live.instances : p.model.fleet.instances;
  const copy = fresh ? p.live.copy : p.model.fleet.copy;
  // this cutover's own commit sent: an earlier one is not what holds its instances (as status,
  // which asks about an earlier commit only where its journal's sync has none sent)
  const own = sentTo(p.model);
  const earlier = own.size ? new Set<string>() : urlsAt(p.earlierSentTo ?? [], instances);
  const state: WatchState = {
    format: WATCH_FORMAT,
    at: p.now,
    source: {
      folder: p.folder,
      ...(p.runbook !== undefined ? { runbook: p.runbook } : {}),
      journals: p.journals,
      skippedLines: p.skippedLines,
    },
    runner: p.runner,
    ...(p.told !== undefined ? { told: p.told } : {}),
    readiness: pastTheCommit(
      fleetReadiness(
        { instances, copy },
        {
          now: p.now,
          ...(p.lagBelowSeconds !== undefined ? { lagBelowSeconds: p.lagBelowSeconds } : {}),
          ...(p.embeddedVerifierOff === true ? { embeddedVerifierOff: true } : {}),
        },
      ),
      // a commit whose requests left counts as sent, its fan-out ended or not; the sync that runs
      // now's only (after a reverse, the commits before it were the other sync's)
      own,
      earlier,
    ),
    ...(p.lagBelowSeconds !== undefined ? { lagBelowSeconds: p.lagBelowSeconds } : {}),
    live: p.live,
    model: p.model,
    verification: verdict(p.model),
  };
  // every string once more, leaf by leaf and keys included: what a service says may echo a secret
  return redactLeaves(state, p.redact, OWN_WORDS);
}

/** Whether the cutover is verified, as the report asks it (src/report/model.ts), in the one wording. */
function verdict(m: CutoverModel): WatchState["verification"] {
  const v = modelVerification(m);
  const shown = verificationShown(m);
  return { ...v, text: verificationText(v), ...(shown !== undefined ? { headline: shown.headline } : {}) };
}

function sentTo(m: CutoverModel): ReadonlySet<string> {
  const sync = syncCommits(m);
  return new Set([...sync.commits.flatMap((c) => c.instances), ...(sync.requested?.instances ?? [])]);
}
