/**
 * The verifier's host in the simulated world: the process (it exits, and a new one starts), its
 * one operational request at a time, and its API handlers as the published source answers them
 * (README "The verifier"). The verifier's own model (generations, tasks, what it finds) is
 * verifier.ts; the world gives it the sync's state.
 */
import type { SimClock } from "./clock.js";
import type { FaultBook } from "./fault-book.js";
import { BAD, DROP, goType, isObject, ok, parseBody, verifierError, type Reply } from "./replies.js";
import {
  LATEST_VERIFIER_RELEASE,
  Verifier,
  specialCollections,
  type VerifierDdlHandling,
  type VerifierNamespaces,
} from "./verifier.js";
import type { WorldConfig } from "./world.js";

/** What the host reads of the world. */
export interface VerifierWorld {
  readonly clock: SimClock;
  readonly config: WorldConfig;
  readonly book: FaultBook;
  readonly closed: boolean;
  /** Brings every instance and the verifier to now; returns now. */
  syncAll(): number;
}

export class VerifierHost {
  verifier: Verifier;
  url = "";
  /**
   * Set by the HTTP layer: the verifier process exits (listener closed, connections cut; when
   * `afterInFlight`, once the request holding its lock has been answered) or starts again.
   */
  setRunning: (running: boolean, afterInFlight?: Promise<void>) => Promise<void> = async () => {};
  /**
   * Each verifier process's one operational request at a time: settles when the one in flight is
   * answered. Per process: a restarted verifier has no request in flight, whatever its dead
   * predecessor was handling (an adversarial run's restart inherited it and refused its first check).
   */
  readonly #locks = new WeakMap<Verifier, Promise<void>>();

  constructor(private readonly world: VerifierWorld) {
    const c = world.config;
    this.verifier = new Verifier(
      c.model,
      c.totalBytes,
      c.dataSet,
      undefined,
      false,
      c.verifierNamespaces,
      c.verifierDdlHandling,
    );
  }

  /** The verifier process exits: its listener closes and its connections are cut. */
  exit(reason: string, afterInFlight: boolean): void {
    if (this.verifier.exited !== null) return;
    this.verifier.exited = reason;
    void this.setRunning(false, afterInFlight ? this.#locks.get(this.verifier) : undefined).catch(() => {});
  }

  /**
   * The verifier process exits while a control request is being answered (`POST /sim/ddl` under
   * failAll): as `exit`, but a request in flight on its port (that one, which may have come in on
   * the verifier's port) is answered before its connection is cut.
   */
  exitAnswering(reason: string): void {
    if (this.verifier.exited !== null) return;
    this.verifier.exited = reason;
    void this.setRunning(false, Promise.resolve()).catch(() => {});
  }

  /**
   * POST /sim/verifier/restart: a new verifier process on the old one's metadata database. With
   * `clean` (the default, `--clean`) it answers as one without it (idle, generation 0, the
   * persisted counters; facts: `--clean` drops the metadata only when the first check arrives)
   * and its first check starts afresh; with `clean: false` that check resumes the persisted
   * verification. With `newMetadata` it starts on an empty metadata database: no task at all.
   * `namespaces`: the new process's `--verifyAll` (`all`) or neither it nor `--srcNamespace`
   * (`none`); by default the old process's. `ddlHandling`: the new process's `--ddlHandling`
   * (`failAll` or `warnMost`); by default the old process's.
   */
  async restart(
    opts: {
      clean?: boolean;
      newMetadata?: boolean;
      namespaces?: VerifierNamespaces;
      ddlHandling?: VerifierDdlHandling;
    } = {},
  ): Promise<void> {
    this.world.syncAll();
    const old = this.verifier;
    const held = opts.newMetadata === true ? undefined : old.persisted();
    this.verifier = new Verifier(
      this.world.config.model,
      this.world.config.totalBytes,
      this.world.config.dataSet,
      held,
      opts.clean !== false,
      opts.namespaces ?? old.namespaces,
      opts.ddlHandling ?? old.ddlHandling,
    );
    this.verifier.t = this.world.clock.now();
    if (old.exited === null) {
      old.exited = "restarted";
      // graceful: this very request may have come in on the verifier's port
      await this.setRunning(false, Promise.resolve());
    }
    await this.setRunning(true);
  }

  /** Resolves once simulated time reaches t (the clock's timers also fire on `advance`). */
  #untilSim(t: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.world.clock.now() >= t) resolve();
      else this.world.clock.at(t, resolve);
    });
  }

  /** GET /api/v1/progress on the verifier. */
  async progress(): Promise<Reply> {
    let t = this.world.syncAll();
    // the check's setup holds the lock progress needs: the answer waits, and comes as the lock is
    // released (before any task ran: Verifier.atSetupEnd)
    let waited = false;
    while (this.verifier.settingUp && this.verifier.exited === null && !this.world.closed) {
      waited = true;
      await this.#untilSim(this.verifier.setupUntil);
      t = this.world.syncAll();
    }
    if (this.verifier.exited !== null || this.world.closed) return DROP;
    const released = waited ? this.verifier.atSetupEnd : undefined;
    // "v0.1.6 to v0.2.0 answer GET /progress before the first check with an empty HTTP 500"
    if (this.world.config.verifierRelease !== LATEST_VERIFIER_RELEASE && this.verifier.status === "new")
      return { status: 500, text: "", contentType: "text/plain" };
    const f = this.world.book.hit("verifier-progress-error", "verifier", t);
    // "A failure to read progress answers `{"error": …}` at the top level"
    if (f) return verifierError(200, f.message ?? "failed to read progress");
    const body: Record<string, unknown> = { progress: released ?? this.verifier.progress() };
    const huge = this.world.book.hit("huge-progress", "verifier", t);
    if (huge) (body.progress as Record<string, unknown>).simulatorPadding = "x".repeat(huge.value ?? 0);
    return { status: 200, body };
  }

  /** GET /api/v1/summary, /docMismatches, /nsMismatches (query: the raw query string). */
  report(endpoint: "summary" | "docMismatches" | "nsMismatches", query: string): Reply {
    this.world.syncAll();
    if (this.verifier.exited !== null) return DROP;
    const params = new URLSearchParams(query);
    const min = params.get("minDurationSecs");
    if (endpoint !== "nsMismatches" && min !== null && min !== "" && !/^\d{1,10}$/.test(min))
      return verifierError(400, `invalid \`minDurationSecs\`: strconv.ParseUint: parsing "${min}": invalid syntax`);
    const ignore = endpoint === "nsMismatches" ? (params.get("indexSpecIgnore") ?? "") : "";
    const tolerances = ignore === "" ? [] : ignore.split(",");
    const bad = tolerances.filter((x) => x !== "expireAfterSeconds" && x !== "unique");
    if (bad.length > 0) return verifierError(400, `invalid \`indexSpecIgnore\`: [\`${bad.join("` `")}\`]`);
    const d = this.world.config.dataSet;
    const ns = (k: number): string => `app.coll${k}`;
    // the special collections, in order: unique, TTL, hidden
    const aspects: ("unique" | "expireAfterSeconds" | "hidden")[] = [
      ...Array<"unique">(d.unique).fill("unique"),
      ...Array<"expireAfterSeconds">(d.ttl).fill("expireAfterSeconds"),
      ...Array<"hidden">(d.hidden).fill("hidden"),
    ].slice(0, specialCollections(d));
    const mismatched = Math.min(this.verifier.mismatchedCollections(), aspects.length);
    const nsMismatches = aspects
      .slice(0, mismatched)
      .flatMap((a, k) =>
        tolerances.includes(a)
          ? []
          : [{ type: "content", namespace: ns(k), aspect: "index", component: `idx_${a}`, detail: `${a} differs` }],
      );
    const failed = Math.min(this.verifier.failedTasks(), 1000);
    const docMismatches = Array.from({ length: failed }, (_, k) => ({
      type: "missingOnDst",
      namespace: ns(d.collections - 1),
      _id: k,
      durationSecs: 0,
    }));
    if (endpoint === "summary") {
      const p = this.verifier.progress();
      return {
        status: 200,
        body: {
          estCheckSecsRemaining: p.phase === "idle" && this.verifier.status === "finished" ? 0 : null,
          // summary_api.go `buildCheckStats` (v0.2.1): "During the initial check (generation 0) it
          // reports the current GenerationStats; afterwards it reports the cached final gen-0 stats"
          // (omitempty: absent when there are none)
          ...(p.generation === 0 ? { checkStats: p.generationStats } : p.gen0Stats ? { checkStats: p.gen0Stats } : {}),
          nsMismatches,
          docMismatches: {
            total: docMismatches.length,
            byType: docMismatches.length ? { missingOnDst: docMismatches.length } : {},
            byNamespace: docMismatches.length ? { [ns(d.collections - 1)]: docMismatches.length } : {},
          },
          totalRechecksDone: p.totalRechecksDone,
          srcChangeEvents: p.srcChangeStats.eventCounts,
          dstChangeEvents: p.dstChangeStats.eventCounts,
        },
      };
    }
    const lines = (endpoint === "nsMismatches" ? nsMismatches : docMismatches).map((x) => JSON.stringify(x) + "\n");
    return { status: 200, text: lines.join(""), contentType: "application/x-ndjson" };
  }

  /**
   * POST /api/v1/check and /api/v1/writesOff. "One operational request at a time": a second one
   * while the first is being handled is answered APIError, and the verifier then shuts its web
   * server down and exits.
   */
  async command(command: "check" | "writesOff", text: string): Promise<Reply> {
    // the process this request reached: a restart meanwhile leaves it the old one's
    const v = this.verifier;
    if (v.exited !== null) return DROP;
    if (this.#locks.has(v)) {
      this.exit("request in progress", true);
      return { status: 200, body: { success: false, error: "APIError", errorDescription: "request in progress" } };
    }
    let release!: () => void;
    this.#locks.set(v, new Promise<void>((r) => (release = r)));
    try {
      return command === "check" ? this.#check(v, text) : await this.#writesOff(v, text);
    } finally {
      this.#locks.delete(v);
      release();
    }
  }

  #check(v: Verifier, text: string): Reply {
    // `{}` or `{"filter": …}` (extended JSON); other fields are ignored, as the published binding does
    const parsed = parseBody(text);
    if (parsed === undefined) return verifierError(400, "EOF");
    if (parsed === BAD) return verifierError(400, "invalid JSON input");
    if (!isObject(parsed)) return verifierError(400, `cannot decode ${goType(parsed)} into a verifier.CheckRequest`);
    if (parsed.filter !== undefined && parsed.filter !== null && !isObject(parsed.filter))
      return verifierError(400, `error decoding key filter: cannot decode ${goType(parsed.filter)} into a bson.D`);
    const t = this.world.syncAll();
    // a filter with a condition, where the world's documents match none (`checkFilterMatches: "none"`)
    const filterMatchesNothing =
      this.world.config.checkFilterMatches === "none" &&
      isObject(parsed.filter) &&
      Object.keys(parsed.filter).length > 0;
    // "`check` answers success at once and starts later; a `check` after one already ran is answered success and ignored"
    v.check(t, { filterMatchesNothing });
    return ok();
  }

  async #writesOff(v: Verifier, text: string): Promise<Reply> {
    const parsed = parseBody(text);
    if (parsed === undefined) return verifierError(400, "EOF");
    if (parsed === BAD) return verifierError(400, "invalid character in JSON input");
    if (parsed !== null && !isObject(parsed))
      return verifierError(400, `json: cannot unmarshal ${goType(parsed)} into Go value of type verifier.EmptyRequest`);
    let t = this.world.syncAll();
    // the check's setup holds the verifier's own lock: writesOff waits for it (holding the request lock)
    while (v.settingUp && v.exited === null && !this.world.closed) {
      await this.#untilSim(v.setupUntil);
      t = this.world.syncAll();
    }
    if (v.exited !== null || this.world.closed) return DROP;
    // "`writesOff` a second time answers HTTP 200 `{"error": "writesOff already set"}` with no `success` field"
    if (v.writesOff) return verifierError(200, "writesOff already set");
    // set before the cluster times are read: a refusal below still leaves it set
    v.writesOff = true;
    const slow = this.world.book.hit("writes-off-slow", "verifier", t);
    // (a shutdown meanwhile still lets this answer out: the web server shuts down gracefully)
    if (slow) await new Promise((r) => setTimeout(r, (slow.value ?? 0) * 1000));
    if (this.world.closed) return DROP;
    const refused = this.world.book.hit("writes-off-refused", "verifier", this.world.clock.now());
    if (refused) return verifierError(200, `failed to fetch source's cluster time: ${refused.message ?? "error"}`);
    // no check has started its change readers: the published verifier dereferences a nil reader
    // (a panic its web framework answers with an empty 500), and can then never finish
    if (!v.readers) return { status: 500, text: "", contentType: "text/plain" };
    v.finalTs = true;
    return ok();
  }
}
