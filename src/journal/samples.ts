/**
 * What a progress sample costs the journal, bounded. A service may answer progress with fields
 * this client does not know (a newer version), of any size: journaled verbatim, a 900 KiB field
 * polled every second made 138 MB of journal in 30 s. So, in the journal only (live listeners
 * get the sample whole):
 *
 * - a field the client does not know (`PROGRESS_SPEC`, `VERIFIER_PROGRESS_SPEC`) that is the same
 *   as in the previous journaled sample of that instance is left out and named in the event's
 *   `unchanged` list (readers put it back: `restoreSample`);
 * - a field whose JSON is over `SAMPLE_FIELD_CAP` bytes is replaced by a short string saying so;
 * - a sample still over `SAMPLE_CAP` bytes loses its largest unknown fields the same way.
 *
 * Known fields are kept in every sample (every reader of a journal can read a sample alone).
 * Each writer starts over (a resumed journal's first sample is whole), and so do readers at a
 * resume marker.
 */
import { createHash } from "node:crypto";
import { PROGRESS_SPEC, VERIFIER_PROGRESS_SPEC } from "../api/types.js";
import type { RunEvent } from "../events.js";
import { isObject } from "./format.js";

/** Bytes of one field's JSON above which its value is not journaled. */
export const SAMPLE_FIELD_CAP = 4096;
/** Bytes of one sample's JSON above which its largest unknown fields are not journaled. */
export const SAMPLE_CAP = 16_384;

const KNOWN = {
  progress: new Set(Object.keys(PROGRESS_SPEC)),
  verifier: new Set(Object.keys(VERIFIER_PROGRESS_SPEC)),
};

export const omittedText = (bytes: number): string => `[not journaled: ${bytes} bytes]`;

/** A field's fingerprint: short values as they are, long ones by hash (never kept whole in memory). */
function fingerprint(json: string): string {
  return json.length <= 64 ? json : `${json.length}:${createHash("sha1").update(json).digest("hex")}`;
}

/** What would make a string's JSON longer than its length + 2: a quote, a backslash, a control character, a lone surrogate (a pair is sent the slow way too, to keep this cheap). */
// eslint-disable-next-line no-control-regex -- the control characters JSON escapes are what it looks for
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * `JSON.stringify(v).length` for a number, a boolean, null or a string with nothing to escape;
 * undefined for anything else (the caller stringifies it).
 */
export function plainJsonLength(v: unknown): number | undefined {
  switch (typeof v) {
    case "number":
      return Number.isFinite(v) ? String(v).length : 4;
    case "boolean":
      return v ? 4 : 5;
    case "string":
      return ESCAPED.test(v) ? undefined : v.length + 2;
    case "object":
      return v === null ? 4 : undefined;
    default:
      return undefined;
  }
}

/** One writer's bounder: remembers each instance's last journaled sample. */
export function createSampleBounder(): (event: RunEvent) => RunEvent {
  const last = new Map<string, Map<string, string>>();
  return (event) => {
    let key: string;
    let known: ReadonlySet<string>;
    let value: unknown;
    if (event.type === "progress.sampled") {
      key = `i${event.instance.index}`;
      known = KNOWN.progress;
      value = event.progress;
    } else if (event.type === "verifier.sampled") {
      key = "verifier";
      known = KNOWN.verifier;
      value = event.progress;
    } else return event;
    if (!isObject(value)) return event;
    const before = last.get(key);
    const now = new Map<string, string>();
    const out: Record<string, unknown> = {};
    const sizes = new Map<string, number>();
    const unchanged: string[] = [];
    // the sample's JSON length, counted as it is built (braces, keys, colons, commas): an upper
    // bound of JSON.stringify(out).length, which is computed only when this passes the cap
    let total = 1;
    for (const [k, v] of Object.entries(value)) {
      // most of a sample is a known field with a plain value: measured without JSON.stringify
      // (a fleet's answers pass here one by one inside the write-stop window, issue 41)
      const plain = known.has(k) ? plainJsonLength(v) : undefined;
      if (plain !== undefined && plain <= SAMPLE_FIELD_CAP) {
        out[k] = v;
        total += (plainJsonLength(k) ?? JSON.stringify(k).length) + 2 + plain;
        continue;
      }
      const json = JSON.stringify(v) ?? "null";
      // a known field is journaled every time: only an unknown one is compared with the last sample
      // (a hash of a long field per answer was most of the journal's cost of a fleet read, issue 41)
      if (!known.has(k)) {
        const fp = fingerprint(json);
        now.set(k, fp);
        if (before?.get(k) === fp) {
          unchanged.push(k);
          continue;
        }
      }
      const capped = json.length > SAMPLE_FIELD_CAP;
      out[k] = capped ? omittedText(json.length) : v;
      sizes.set(k, Math.min(json.length, SAMPLE_FIELD_CAP));
      total += JSON.stringify(k).length + 2 + (capped ? omittedText(json.length).length + 2 : json.length);
    }
    // still too big: the largest unknown fields go first
    if (total > SAMPLE_CAP) total = JSON.stringify(out).length;
    if (total > SAMPLE_CAP) {
      const unknown = [...sizes].filter(([k]) => !known.has(k)).sort((a, b) => b[1] - a[1]);
      for (const [k, n] of unknown) {
        if (total <= SAMPLE_CAP) break;
        out[k] = omittedText(n);
        total -= n;
      }
    }
    last.set(key, now);
    const bounded = { ...event, progress: out, ...(unchanged.length ? { unchanged } : {}) };
    return bounded as RunEvent;
  };
}

/**
 * A reader's side: puts back the fields a journaled sample names as `unchanged` from the previous
 * sample of the same instance. Call `reset()` at each resume marker (a new writer starts over).
 */
export function createSampleRestorer(): { restore(event: RunEvent): RunEvent; reset(): void } {
  const last = new Map<string, Record<string, unknown>>();
  return {
    reset: () => last.clear(),
    restore(event) {
      if (event.type !== "progress.sampled" && event.type !== "verifier.sampled") return event;
      const key =
        event.type === "progress.sampled"
          ? `i${isObject(event.instance) ? String(event.instance.index) : "?"}`
          : "verifier";
      if (!isObject(event.progress)) return event;
      const raw = event as RunEvent & { unchanged?: unknown };
      let progress: Record<string, unknown> = event.progress;
      if (Array.isArray(raw.unchanged)) {
        const prev = last.get(key) ?? {};
        progress = { ...progress };
        for (const k of raw.unchanged) if (typeof k === "string" && k in prev) progress[k] = prev[k];
        const { unchanged: _u, ...rest } = raw;
        event = { ...rest, progress } as RunEvent;
      }
      last.set(key, progress);
      return event;
    },
  };
}

/**
 * A journal's events as they were emitted, line by line: each sample's `unchanged` fields put back
 * (`createSampleRestorer`), afresh at each resume marker. Every reader that hands a journal's events
 * on (the report's `readJournal`, a resume's history, src/run/earlier.ts) restores them here.
 */
export function journalEventRestorer(): (event: RunEvent) => RunEvent {
  const samples = createSampleRestorer();
  return (event) => {
    if (event.type === ("journal.resumed" as string)) samples.reset();
    return samples.restore(event);
  };
}
