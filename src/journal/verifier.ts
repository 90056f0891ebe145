/**
 * What a journal says the run asked the migration verifier, for `--resume` (src/steps/kit/verifier.ts
 * acts on it): the baseline of the last verification that began (`verifier.baseline`: earlier asks
 * no longer count), and that verification's check and writesOff with their answers. A request
 * with no answer line (the runner died while it was in flight), or whose answer was lost while it
 * may still arrive (timed out, or a journal that does not say), is `unknown` and in flight until
 * its time limit: it may have arrived, and is never resent blindly.
 * Also what ties a result to this run: the highest generation the verifier showed since then
 * (`verifier.sampled`), the generation writesOff was sent in
 * (`verifier.writesOff`), and the restarts seen (`verifier.restarted`: the old process's check
 * and writesOff no longer count, and the next check resumes the persisted verification); whether
 * a check whose verifier could not tell showed a fresh verification or a resumed one, refused
 * (`verifier.origin`); and a `verify` that passed (`verifier.verified`).
 */
import {
  eventsFloor,
  eventsSeen,
  reversedVerification,
  type VerifierAsk,
  type VerifierMemory,
} from "../api/verifier-memory.js";
import type { VerifierProgress } from "../api/types.js";
import { isObject } from "./format.js";

const PATH = /\/api\/v1\/(check|writesOff)\/?(?:[?#].*)?$/;

export interface VerifierJournal {
  /** One journal event, in order. */
  apply(e: Record<string, unknown> & { type: string; at: number }): void;
  /** A new writer (the file's header or a resume marker): request ids start over. */
  newWriter(): void;
  /** A `reverse` step ended ok (the fold knows step kinds, this does not). */
  reversed(step: string): void;
  state(): VerifierMemory;
}

const generationOf = (progress: unknown): number | undefined =>
  isObject(progress) && typeof progress.generation === "number" ? progress.generation : undefined;

export function verifierJournal(): VerifierJournal {
  const memory: VerifierMemory = {};
  const pending = new Map<number, "check" | "writesOff">();
  const newProcess = (progress: unknown): void => {
    for (const k of ["check", "writesOff", "writesOffGeneration", "writesOffForced"] as const) delete memory[k];
    pending.clear();
    const g = generationOf(progress);
    if (g === undefined) delete memory.highestGeneration;
    else memory.highestGeneration = g;
    eventsFloor(memory, isObject(progress) ? (progress as VerifierProgress) : undefined);
  };
  return {
    apply(e) {
      switch (e.type) {
        case "verifier.baseline":
          newProcess(e.progress);
          delete memory.verified;
          delete memory.reversed;
          if (isObject(e.progress)) memory.baseline = e.progress as unknown as VerifierProgress;
          memory.adopted = e.adopted === true;
          if (e.resumes === true) memory.resuming = true;
          else delete memory.resuming;
          if (e.oldRelease === true) memory.oldRelease = true;
          if (e.unproven === "persisted" || e.unproven === "oldRelease") memory.unproven = e.unproven;
          else {
            delete memory.unproven;
            // a check to a verifier with nothing to resume: not the verification refused before
            if (!memory.adopted && e.resumes !== true) delete memory.refused;
          }
          // an adopted check is the verification's check: it runs, nothing was sent
          if (memory.adopted) memory.check = { answered: "ok", at: e.at };
          // absent (an older syncbook's journal): not known, so no result is verified (earned.ts notFromStart)
          if (e.fromStart === true) memory.fromStart = true;
          else delete memory.fromStart;
          if (typeof e.filter === "string") memory.filter = e.filter;
          else delete memory.filter;
          return;
        case "verifier.origin":
          delete memory.unproven;
          if (e.ours === true) {
            delete memory.refused;
            memory.fromStart = true;
          } else {
            // the check showed a verification this cutover did not start: it no longer counts
            newProcess(undefined);
            delete memory.baseline;
            delete memory.adopted;
            delete memory.resuming;
            delete memory.fromStart;
            memory.refused = typeof e.why === "string" ? e.why : "refused";
          }
          return;
        case "verifier.carried":
          // a --from run's start: the memory of the journal it continued, whole (earlier.ts)
          pending.clear();
          for (const k of Object.keys(memory) as (keyof VerifierMemory)[]) delete memory[k];
          if (isObject(e.memory)) Object.assign(memory, e.memory);
          return;
        case "verifier.verified":
          memory.verified = { at: e.at, generation: generationOf(e.progress) ?? NaN };
          return;
        case "verifier.restarted":
          newProcess(e.progress);
          memory.resuming = true;
          memory.restarts = (memory.restarts ?? 0) + 1;
          return;
        case "verifier.sampled": {
          const g = generationOf(e.progress);
          if (g !== undefined && g > (memory.highestGeneration ?? -1)) memory.highestGeneration = g;
          const n = isObject(e.progress) ? eventsSeen(e.progress as VerifierProgress) : undefined;
          if (n !== undefined && n > (memory.highestEvents ?? -1)) memory.highestEvents = n;
          return;
        }
        case "verifier.writesOff":
          if (typeof e.generation === "number") memory.writesOffGeneration = e.generation;
          if (e.forced === true) memory.writesOffForced = true;
          else delete memory.writesOffForced;
          return;
        case "request.sent": {
          if (e.target !== "verifier" || typeof e.path !== "string") return;
          const op = PATH.exec(e.path)?.[1] as "check" | "writesOff" | undefined;
          if (!op) return;
          // the latest send counts, but an accepted one is never downgraded. No answer line yet: it
          // may still be on its way until its time limit (the runner died with it in flight), so a
          // resumed run does not judge a check lost, and send another, before then
          if (memory[op]?.answered !== "ok") memory[op] = { answered: "unknown", at: e.at, inFlight: true };
          if (typeof e.id === "number") pending.set(e.id, op);
          return;
        }
        case "response.received": {
          const op = typeof e.id === "number" ? pending.get(e.id) : undefined;
          if (!op) return;
          pending.delete(e.id as number);
          const ask = memory[op];
          if (!ask || ask.answered === "ok") return;
          const answered: VerifierAsk["answered"] =
            e.ok === true ? "ok" : e.errorKind === "service" || e.errorKind === "not-sent" ? "error" : "unknown";
          memory[op] = {
            answered,
            at: ask.at,
            ...(typeof e.error === "string" ? { error: e.error } : {}),
            // a lost answer is in flight as the run that lost it judged (`inFlight`, src/api/errors.ts
            // `mayStillArrive`); a journal that does not say (written before it) is read as in
            // flight, which fails safe: a second operational request while one holds the lock
            // shuts the verifier down (migration-verifier v0.2.1 internal/verifier/webserver.go,
            // `operationalAPILockMiddleware` → `operationalErrorResponse` → `signalShutdown`)
            ...(answered === "unknown" && e.inFlight !== false ? { inFlight: true } : {}),
          };
          return;
        }
        default:
          return;
      }
    },
    newWriter() {
      pending.clear();
    },
    reversed(step) {
      reversedVerification(memory, step);
    },
    state: () => memory,
  };
}
