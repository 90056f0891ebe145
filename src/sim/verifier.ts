/**
 * The simulated migration verifier, after its published source (facts: "The migration verifier").
 *
 * Life of a check: `check` is answered at once; the verifier then sets itself up
 * (`model.verifierSetupSeconds`, during which its progress does not answer: the check holds the
 * lock progress needs) and runs generations. Generation 0 verifies every collection's metadata,
 * then its documents in partitions; each later generation (phase `recheck`) re-verifies what
 * the previous one found different, plus the documents the source changed meanwhile. The
 * counters are those of the current generation only (they start again at every generation).
 * Once `writesOff` has reached it, the generation under way is followed by one last generation,
 * and then the phase is `idle`: the last generation's counters are the result.
 *
 * `generationStats` is the current generation's too, as the source computes it (verifier source,
 * tag v0.2.1, internal/verifier/statistics.go `perNsStatsPipelineTemplate`, over the current
 * generation's verify-collection and verify-documents tasks; the same meaning from v0.1.6):
 * `docsCompared` / `srcBytesCompared` add up the documents found on the source by its finished
 * document tasks; `totalDocs` is, "In generation 0 … the total docs from the verify-collection
 * tasks" (tasks/task.go: "the source collection's estimated docs count", set as each collection
 * task starts, so it grows while the collections are sized), and "In generation 1+ … the # of
 * documents to recheck"; `totalSrcBytes` adds up the sized collections' estimated sizes
 * (omitempty: absent while 0, so in a generation with no collection task). `gen0Stats` (api.go
 * from v0.1.10: "the final doc/byte counts from generation 0 … absent during generation 0
 * itself") is generation 0's, read from the metadata (progress.go `getComparisonStatistics(egCtx,
 * 0, false)`), so a resumed verification shows the earlier process's generation 0; `/summary`'s
 * `checkStats` is generationStats in generation 0 and gen0Stats after (summary_api.go
 * `buildCheckStats`).
 *
 * What it finds depends on the destination at the moment a task runs, not on the sync's state:
 * - a collection missing on the destination (no instance has begun its copy) is an error: the
 *   check fails and the verifier exits;
 * - documents not yet copied fail their task, and are rechecked in the next generation;
 * - collections with unique, TTL or hidden indexes differ in index metadata until every
 *   instance is COMMITTED (the service keeps unique indexes non-unique, TTL at their largest
 *   value and hidden indexes visible before commit, as mongodb/docs-cluster-to-cluster-sync's
 *   source/reference/api/commit.txt, "Collection Characteristic Changes", says `commit` resets
 *   them; the verifier compares index specs, its `indexSpecIgnore` dropping only mismatches from
 *   its reports, README.md v0.2.1): metadataMismatchTasks, re-verified in the next generation;
 * - lost writes and fleet errors fail tasks in every generation.
 *
 * Restarts (facts: the verifier keeps its state in its metadata database; `--clean` drops it only
 * when the first check arrives): `persisted()` is what a process leaves behind, and a process built
 * on it answers idle, generation 0, with generation 0's persisted counters (tasks that were
 * processing still say so) until a check, **with or without `--clean`**. Then, without `--clean`,
 * the check resumes the persisted generation where it was (its pending tasks again, the writes
 * made meanwhile rechecked), without the old process's writesOff; with `--clean` it drops the old
 * metadata and starts afresh at generation 0 (verifier source, tag v0.2.1 and v0.1.6 to v0.2.0,
 * internal/verifier/check.go `CheckDriver`: "if verifier.startClean { … Drop(ctx) … } else {
 * genOpt, err := verifier.readGeneration(ctx) … "Resuming in-progress verification." }"; main
 * only sets the flag: main/migration_verifier.go `v.SetStartClean(cCtx.Bool(startClean))`).
 *
 * Started without `--verifyAll` or `--srcNamespace` (`namespaces: "none"`), a fresh verification's
 * generation 0 has no task (verifier source, tag v0.2.1, internal/verifier/check.go lines 500-505,
 * `CreateInitialTasksIfNeeded`: "if !verifier.verifyAll { if len(verifier.srcNamespaces) == 0 {
 * return nil } …"): it ends at once, its counters and amounts all 0 (`totalNamespaces` 0), and so is
 * gen0Stats (progress.go lines 81-97 read generation 0's statistics from generation 1 on; with no
 * task, summary.go lines 362-365 "if len(stats) == 0 { return comparisonStatistics{}, nil }"). Its
 * change readers are not limited to namespaces then (change_stream.go `GetChangeStreamFilter`: with
 * no namespaces, every user database but the verifier's own): documents written meanwhile are
 * rechecked in the later generations as with `--verifyAll` (check.go `ensureCreateRecheckTaskIfNeeded`
 * creates a generation's recheck task whenever its recheck queue holds a document), so a later
 * generation may compare documents; with no writes every generation is empty. After `writesOff` it
 * finishes (idle) as with namespaces. A check whose filter matches no simulated document
 * (`filterMatchesNothing`, from the world's `checkFilterMatches: "none"`) verifies every
 * collection's metadata, and its document tasks find no document on either side: they complete
 * having compared 0 documents (docsCompared 0 of totalDocs, the collections' unfiltered estimated
 * count).
 *
 * DDL on the source during verification (`ddl`: an event the source's change reader reads, from a
 * check's setup until the writes-off timestamp), as migration-verifier v0.2.1 handles it
 * (internal/verifier/change_stream.go lines 218-232, change_reader.go `allowedSrcDDLOpTypes`; the
 * same from v0.2.0). Its change reader knows insert, update, replace and delete; any other event:
 * - under `--ddlHandling failAll` (the default, `ddlHandling: "failAll"`) is an `UnknownEventError`:
 *   the verifier process exits (README: "Under `failAll` any DDL change events will crash the
 *   verifier"), so its progress is never answered again; a DDL event read during the setup makes it
 *   exit at the setup's end, when its change reader starts;
 * - under `--ddlHandling warnMost` is warned of and counted when it is one of create, modify,
 *   createIndexes, dropIndexes, shardCollection, reshardCollection, refineCollectionShardKey
 *   (README: "skip most DDL events. (In this case you **MUST** manually confirm that the change is
 *   replicated to the destination.)"): no task verifies it, no task fails for it, and
 *   `srcChangeStats.eventCounts.<type>` grows by it (api/change_event_counts.go). drop, rename and
 *   dropDatabase still make it exit ("Drop and rename changes still trigger a crash under
 *   `warnMost`").
 * The counts are the change reader's `cumulativeEventCounts` ("all change events seen since the
 * verifier first started … persisted alongside the resume token so it survives restarts"): a
 * verification resumed without `--clean` goes on from them, a fresh one (`--clean`, new metadata)
 * counts from 0. DDL before a check or after the writes-off timestamp is not read (`ddl` says so).
 * The DDL a process exits on is past the resume token it persisted (change_stream.go returns the
 * error before its batch reaches the persistor): a verification resumed without `--clean` reads it
 * again and exits again (under `warnMost`, a type it allows is then counted); a fresh one starts
 * after it.
 */
import type { ModelParams } from "./model.js";

export type VerifierPhase = "idle" | "check" | "recheck";

/**
 * The namespaces the verifier process was started with: `all` (`--verifyAll`, or a
 * `--srcNamespace` for each collection), or `none` (neither flag: generation 0 creates no task).
 */
export const VERIFIER_NAMESPACES = ["all", "none"] as const;
export type VerifierNamespaces = (typeof VERIFIER_NAMESPACES)[number];

/**
 * The verifier process's `--ddlHandling` (migration-verifier v0.2.1 README): `failAll` (its default:
 * any DDL event on the source makes it exit) or `warnMost` (most are warned of, counted and skipped).
 */
export const VERIFIER_DDL_HANDLINGS = ["failAll", "warnMost"] as const;
export type VerifierDdlHandling = (typeof VERIFIER_DDL_HANDLINGS)[number];

/**
 * The source DDL events `warnMost` skips and counts (change_reader.go `allowedSrcDDLOpTypes`; the
 * keys of `eventCounts`, api/change_event_counts.go).
 */
export const WARN_MOST_DDL = [
  "create",
  "modify",
  "createIndexes",
  "dropIndexes",
  "shardCollection",
  "reshardCollection",
  "refineCollectionShardKey",
] as const;
/** The source DDL events the simulator can put on the source: those, and three that crash either way. */
export const SOURCE_DDL_TYPES = [...WARN_MOST_DDL, "drop", "rename", "dropDatabase"] as const;
export type SourceDdlType = (typeof SOURCE_DDL_TYPES)[number];
type DdlCounts = Record<(typeof WARN_MOST_DDL)[number], number>;
const noDdl = (): DdlCounts => ({
  create: 0,
  modify: 0,
  createIndexes: 0,
  dropIndexes: 0,
  shardCollection: 0,
  reshardCollection: 0,
  refineCollectionShardKey: 0,
});

/**
 * The verifier releases the simulator emulates: v0.2.1 (the one a cutover should use), and v0.2.0
 * for the releases v0.1.6 to v0.2.0, whose progress answers an empty HTTP 500 until the first
 * check (facts: fixed in v0.2.1, "Fix /progress crash when idle"). Both have `gen0Stats` (api.go from
 * v0.1.10): v0.1.6 to v0.1.9, without it, are not emulated; readers are tested without it.
 */
export const VERIFIER_RELEASES = ["v0.2.1", "v0.2.0"] as const;
export type VerifierRelease = (typeof VERIFIER_RELEASES)[number];
export const LATEST_VERIFIER_RELEASE: VerifierRelease = "v0.2.1";

/** The six counters of the published verifier (there is no `recheckTasks`). */
export interface VerificationStatus {
  totalTasks: number;
  addedTasks: number;
  processingTasks: number;
  failedTasks: number;
  completedTasks: number;
  metadataMismatchTasks: number;
}

interface ChangeStats {
  eventsPerSecond: number | null;
  lagSecs: number | null;
  bufferSaturation: number;
  eventCounts: Record<string, number>;
}

/** api.go `GenerationStats`: one generation's amounts (see the file's comment for each field). */
export interface GenerationStats {
  docsCompared: number;
  totalDocs: number;
  srcBytesCompared: number;
  /** omitempty in the published source: absent while 0. */
  totalSrcBytes?: number;
  totalNamespaces: number;
}

export interface VerifierProgressBody {
  phase: VerifierPhase;
  generation: number;
  /** The current generation's (they start over at every generation). */
  generationStats: GenerationStats;
  /** Generation 0's final amounts: absent during generation 0 (v0.1.10 and later; both releases emulated have it). */
  gen0Stats?: GenerationStats;
  /** Always null in a successful answer of the published verifier; the verifier-error fault fills it. */
  error: string | null;
  verificationStatus: VerificationStatus;
  srcLastRecheckedTS: { $timestamp: { t: number; i: number } } | null;
  dstLastRecheckedTS: { $timestamp: { t: number; i: number } } | null;
  srcChangeStats: ChangeStats;
  dstChangeStats: ChangeStats;
  docsComparedPerSecond: number;
  srcBytesComparedPerSecond: number;
  totalRechecksDone: number;
}

/** The simulated data set: how many collections, and how many have indexes whose metadata the service changes until commit. */
export interface DataSet {
  collections: number;
  unique: number;
  ttl: number;
  hidden: number;
}

export const DEFAULT_DATA_SET: DataSet = { collections: 12, unique: 2, ttl: 1, hidden: 1 };

/** Collections whose index metadata differs on the destination until commit. */
export const specialCollections = (d: DataSet): number => Math.min(d.collections, d.unique + d.ttl + d.hidden);

/** What the verifier learns from the world for the stretch it is advanced over. */
export interface VerifierInputs {
  /** Since when every instance's destination has the collections (its copy began); undefined: not yet. */
  collectionsFrom: number | undefined;
  /** Since when every instance's copy has been complete; undefined: not yet. */
  copiedFrom: number | undefined;
  /** Since when every instance has been COMMITTED (indexes restored); undefined: not yet. */
  committedFrom: number | undefined;
  /** Fleet-wide source writes produced up to t. */
  sourceWrites(t: number): number;
  /** Problems found up to t, each worth one failing task (lost-write batches, fleet errors). */
  issues(t: number): number;
}

type Status = "new" | "setup" | "running" | "finished";

/** What a verifier process leaves in its metadata database (what a restart without --clean resumes). */
export interface PersistedVerification {
  generation: number;
  /** Generation 0's counters as stored: shown by a new process until its check. */
  generation0: VerificationStatus;
  /** Generation 0's amounts as stored (its tasks' counts): the generationStats of a new process until its check. */
  generation0Stats: GenerationStats;
  g: Generation;
  carry: { special: number; rechecks: number };
  docsAcc: number;
  srcEvents: number;
  /** The source's writes when this verification first started: its change events count from there. */
  srcEventsBase: number;
  issuesCounted: number;
  ddlDuring: number;
  /** The source DDL events counted (warnMost), persisted with the change reader's resume token. */
  srcDdl: DdlCounts;
  /**
   * The DDL the process exited on: past the resume token it persisted, so a change reader resumed
   * from that token (a restart without --clean) reads it again (`Verifier.ddl`).
   */
  unreadDdl?: { type: SourceDdlType; count: number };
}

export interface Generation {
  coll: number;
  special: number;
  partitions: number;
  rechecks: number;
  failing: number;
  completed: number;
  failed: number;
  mismatch: number;
  /** Collection tasks done (each sized its collection: its estimated count and size). */
  sized: number;
  /** Documents (and their bytes) found on the source by the finished document tasks. */
  docs: number;
  bytes: number;
  /** Generation 1 and later: the documents its recheck tasks hold ("the # of documents to recheck"). */
  toRecheck: number;
  /** The namespaces its tasks cover. */
  namespaces: number;
}
const emptyGen = (): Generation => ({
  coll: 0,
  special: 0,
  partitions: 0,
  rechecks: 0,
  failing: 0,
  completed: 0,
  failed: 0,
  mismatch: 0,
  sized: 0,
  docs: 0,
  bytes: 0,
  toRecheck: 0,
  namespaces: 0,
});

export class Verifier {
  status: Status = "new";
  /** Why the verifier process exited (null: it runs). */
  exited: string | null = null;
  t = 0;
  setupUntil = 0;
  /** This setup follows a finished verification: the published verifier panics at its end. */
  #setupAfterFinish = false;
  /** `writesOff` was received (set even when fetching the cluster times then failed). */
  writesOff = false;
  /** The change readers got the writes-off timestamp: the verifier can finish. */
  finalTs = false;
  generation = 0;
  lastGeneration = false;
  checks = 0;
  /** Source DDL events its change reader read (whatever it then did with them). */
  ddlDuring = 0;
  /** The source DDL events counted and skipped under warnMost (`srcChangeStats.eventCounts`). */
  #srcDdl: DdlCounts = noDdl();
  /** A DDL event read during the setup under failAll: the process exits when its change reader starts. */
  #ddlExit: string | undefined;
  /** The DDL this process exits on (persisted as `unreadDdl`: a resumed change reader reads it again). */
  #exitedOn: { type: SourceDdlType; count: number } | undefined;
  /** Set by a verifier-error fault: the verifier stops and reports it. */
  error: string | null = null;
  #g: Generation = emptyGen();
  #carry = { special: 0, rechecks: 0 };
  #docsAcc = 0;
  #issuesCounted = 0;
  #budget = 0;
  #waiting = false;
  #rechecksDone = 0;
  #srcEvents = 0;
  /**
   * The source's writes when this verification first started. migration-verifier v0.2.1
   * internal/verifier/change_reader.go: `cumulativeEventCounts` "tallies all change events seen
   * since the verifier first started … persisted alongside the resume token so it survives
   * restarts": a fresh verification (new metadata, --clean) counts from 0, a resumed one goes on.
   */
  #srcEventsBase = 0;
  #lastRecheckedAt: number | null = null;
  readonly #partitionsTotal: number;
  readonly #special: number;
  /** Generation 0's counters once it ended (what the metadata database keeps of it). */
  #generation0: VerificationStatus | undefined;
  /** Generation 0's amounts once it ended: gen0Stats. */
  #generation0Stats: GenerationStats | undefined;
  /** What the metadata database holds of an earlier process (until a check with --clean drops it). */
  #held: PersistedVerification | undefined;
  /** A check resumed what the metadata held (without --clean). */
  resumed = false;
  /** The current check's filter matches no simulated document: its document tasks compare none. */
  filterMatchesNothing = false;
  /**
   * Its progress the moment the check's setup ended, before any task ran: the answer of a progress
   * read that waited for the setup. The source's setup holds the verifier's lock (check.go
   * `CheckDriver`: `verifier.mux.Lock()` … `persistGenerationWhileLocked` … `verifier.mux.Unlock()`,
   * then `CheckWorker` starts the workers) and progress takes it to read (progress.go
   * `GetProgress`: `verifier.mux.RLock()`), so the waiting read is answered as the lock is released.
   */
  atSetupEnd: VerifierProgressBody | undefined;

  constructor(
    private readonly params: ModelParams,
    private readonly totalBytes: number,
    private readonly dataSet: DataSet,
    /** The metadata database the process found (undefined: a new one, or the first process). */
    held?: PersistedVerification,
    /** Started with `--clean`: the first check drops what it held, and starts afresh. */
    readonly startClean = false,
    /** Started with `--verifyAll` (or namespaces): `all`; with neither flag: `none` (no task in generation 0). */
    readonly namespaces: VerifierNamespaces = "all",
    /** `--ddlHandling`: `failAll` (any source DDL makes it exit) or `warnMost` (most are counted and skipped). */
    readonly ddlHandling: VerifierDdlHandling = "failAll",
  ) {
    this.#partitionsTotal = Math.max(1, Math.ceil(totalBytes / params.verifyBytesPerTask));
    this.#special = specialCollections(dataSet);
    this.#held = held;
  }

  /** The metadata holds an earlier verification that this process has not dropped (yet). */
  get holds(): boolean {
    return this.#held !== undefined;
  }

  /** What this process leaves in the metadata database (undefined: no check ever ran there). */
  persisted(): PersistedVerification | undefined {
    // a process that never got past a check's setup changed nothing (but a --clean drop): what it held stays
    if (this.status === "new" || this.status === "setup") return this.#held;
    return {
      generation: this.generation,
      generation0: this.generation === 0 ? this.progress().verificationStatus : this.#generation0!,
      generation0Stats: this.generation === 0 ? this.#stats(this.#g, 0) : this.#generation0Stats!,
      g: { ...this.#g },
      carry: { ...this.#carry },
      docsAcc: this.#docsAcc,
      srcEvents: this.#srcEvents,
      srcEventsBase: this.#srcEventsBase,
      issuesCounted: this.#issuesCounted,
      ddlDuring: this.ddlDuring,
      srcDdl: { ...this.#srcDdl },
      ...(this.#exitedOn ? { unreadDdl: { ...this.#exitedOn } } : {}),
    };
  }

  get phase(): VerifierPhase {
    if (this.status !== "running" && this.status !== "setup") return "idle";
    return this.generation > 0 ? "recheck" : "check";
  }

  /** A check is being set up: progress waits for it (the setup holds the lock progress needs). */
  get settingUp(): boolean {
    return this.status === "setup";
  }

  /** The change readers exist (a check got past its setup): writesOff can reach them. */
  get readers(): boolean {
    return this.status === "running" || this.status === "finished";
  }

  /**
   * POST /api/v1/check, accepted. Returns what happens: `start` (a setup begins), `ignored`
   * (one runs already), or `restart` (after a finished verification: a setup whose end crashes
   * the published verifier).
   */
  check(t: number, opts: { filterMatchesNothing?: boolean } = {}): "start" | "ignored" | "restart" {
    if (this.status === "setup" || this.status === "running") return "ignored";
    this.checks++;
    // each check sets the filter (check.go `CheckDriver`: `verifier.globalFilter = filter`)
    this.filterMatchesNothing = opts.filterMatchesNothing === true;
    // "if verifier.startClean { … Drop … }": the first thing the check does, before its setup
    if (this.startClean) this.#held = undefined;
    this.#setupAfterFinish = this.status === "finished";
    this.status = "setup";
    this.setupUntil = t + this.params.verifierSetupSeconds;
    this.t = Math.max(this.t, t);
    return this.#setupAfterFinish ? "restart" : "start";
  }

  /**
   * `count` DDL events of `type` on the source. `duringVerification`: the change reader reads them
   * (from a check's setup until the writes-off timestamp). `exit`: the reason the process exits now
   * (failAll, or a drop/rename under warnMost, read while running; read during the setup, it exits
   * at the setup's end).
   */
  ddl(type: SourceDdlType = "createIndexes", count = 1): { duringVerification: boolean; exit?: string } {
    if ((this.status !== "running" && this.status !== "setup") || this.finalTs) return { duringVerification: false };
    this.ddlDuring += count;
    const exit = this.#readDdl(type, count);
    if (exit === undefined) return { duringVerification: true };
    if (this.status === "setup") {
      this.#ddlExit ??= exit;
      return { duringVerification: true };
    }
    return { duringVerification: true, exit };
  }

  /**
   * The change reader reads `count` DDL events of `type`: counted and skipped (warnMost, a type it
   * allows), or the reason the process exits, and then they stay unread: the batch that holds them
   * never reaches the persistor (migration-verifier v0.2.1 internal/verifier/change_stream.go lines
   * 217-230 return the `UnknownEventError` before lines 262-269 send the batch and its resume
   * token; recheck_persist.go lines 89-90 persist only a received batch's token).
   */
  #readDdl(type: SourceDdlType, count: number): string | undefined {
    const skippable = (WARN_MOST_DDL as readonly string[]).includes(type);
    if (this.ddlHandling === "warnMost" && skippable) {
      // "Source in warnMost mode: warn and fall through to count it."
      this.#srcDdl[type as keyof DdlCounts] += count;
      return undefined;
    }
    this.#exitedOn ??= { type, count };
    // change_stream.go `UnknownEventError.Error()`
    return (
      `received event with unknown optype: {"operationType": "${type}"}` +
      (skippable ? "; to skip this event, run the verifier with `ddlHandling` set to `warnMost`" : "")
    );
  }

  /**
   * Moves the verifier to t. Returns the reason the verifier process must exit, if it must (the
   * world then closes its listener).
   */
  advance(t: number, inputs: VerifierInputs): string | undefined {
    if (!(t > this.t) || this.exited !== null) {
      this.t = Math.max(this.t, t);
      return undefined;
    }
    if (this.status === "setup") {
      if (this.setupUntil > t) {
        this.t = t;
        return undefined;
      }
      this.t = this.setupUntil;
      // the published verifier starts its change handling a second time, which panics
      if (this.#setupAfterFinish) return "panic: change handling already started";
      this.status = "running";
      const r = this.#held;
      if (r) {
        this.resumed = true;
        // "Resuming in-progress verification": the persisted generation, its pending tasks again
        this.generation = r.generation;
        this.#generation0 = r.generation0;
        this.#generation0Stats = r.generation0Stats;
        this.#g = { ...r.g };
        this.#carry = { ...r.carry };
        this.#docsAcc = r.docsAcc;
        this.#srcEvents = r.srcEvents;
        this.#srcEventsBase = r.srcEventsBase;
        this.#issuesCounted = r.issuesCounted;
        this.ddlDuring += r.ddlDuring;
        // the change reader's counts, loaded with its resume token (change_reader.go `loadResumeToken`)
        // (and the events read during this setup on top)
        for (const k of WARN_MOST_DDL) this.#srcDdl[k] += r.srcDdl[k];
        // the DDL the old process exited on is past that token: read again (change_stream.go lines
        // 383-411 `createChangeStream`: "Starting change stream from persisted resume token.",
        // `SetStartAfter(resumetoken)`), under this process's --ddlHandling; only --clean (check.go
        // lines 190-196 drop the metadata, the token with it) or new metadata starts after it
        if (r.unreadDdl) {
          const again = this.#readDdl(r.unreadDdl.type, r.unreadDdl.count);
          if (again !== undefined) this.#ddlExit ??= again;
        }
      } else {
        this.generation = 0;
        this.#issuesCounted = inputs.issues(this.t);
        // no namespace (neither --verifyAll nor --srcNamespace): check.go lines 500-505
        // `CreateInitialTasksIfNeeded` "if len(verifier.srcNamespaces) == 0 { return nil }", no task
        const none = this.namespaces === "none";
        this.#g = none
          ? emptyGen()
          : {
              ...emptyGen(),
              coll: this.dataSet.collections - this.#special,
              special: this.#special,
              namespaces: this.dataSet.collections,
            };
        this.#g.failing = none ? 0 : this.#issuesCounted;
        this.#srcEvents = inputs.sourceWrites(this.t);
        this.#srcEventsBase = this.#srcEvents;
      }
      this.atSetupEnd = this.progress();
      // a DDL event read during the setup, under failAll: the change reader fails as it starts
      if (this.#ddlExit !== undefined) return this.#ddlExit;
    }
    if (this.status !== "running" || this.error !== null) {
      this.t = t;
      return undefined;
    }
    const span = t - this.t;
    const step = Math.max(0.5, span / 400);
    let cur = this.t;
    while (cur < t && this.status === "running") {
      const next = Math.min(t, cur + step);
      // the change readers stop at the writes-off timestamp: later changes are not rechecked
      if (!this.finalTs) {
        const w = inputs.sourceWrites(next);
        this.#docsAcc += Math.max(0, w - this.#srcEvents);
        this.#srcEvents = w;
      }
      const issues = inputs.issues(next);
      if (issues > this.#issuesCounted) {
        this.#g.failing += issues - this.#issuesCounted;
        this.#issuesCounted = issues;
      }
      this.#budget += next - cur;
      const exit = this.#work(next, inputs);
      if (exit) {
        this.t = next;
        return exit;
      }
      cur = next;
    }
    this.t = t;
    return undefined;
  }

  #pending(): number {
    const g = this.#g;
    return g.coll + g.special + g.partitions + g.rechecks + g.failing;
  }

  /** Spends the work budget at time x (the end of a slice). */
  #work(x: number, inputs: VerifierInputs): string | undefined {
    const p = this.params;
    const small = 1 / p.recheckTasksPerSecond;
    const partition = p.verifyBytesPerTask / p.verifyBytesPerSecond;
    const g = this.#g;
    const has = (from: number | undefined): boolean => from !== undefined && from <= x;
    for (let guard = 0; guard < 100_000; guard++) {
      if (this.#pending() === 0) {
        if (!this.#endOfGeneration()) {
          this.#budget = 0; // nothing to do: an idle verifier does not save up work
          return undefined;
        }
        continue;
      }
      if (g.coll + g.special > 0) {
        if (this.#budget < small) return undefined;
        this.#budget -= small;
        // "collection … exists only on source": the check fails, and a failed check makes the verifier exit
        if (!has(inputs.collectionsFrom)) return "check failed: a collection exists only on the source";
        const special = g.special > 0;
        if (special) g.special--;
        else g.coll--;
        g.sized++;
        if (special && !has(inputs.committedFrom)) {
          g.mismatch++;
          this.#carry.special++;
        } else g.completed++;
        if (this.generation === 0) g.partitions += this.#partitionsFor();
        continue;
      }
      if (g.failing > 0) {
        if (this.#budget < small) return undefined;
        this.#budget -= small;
        g.failing--;
        g.failed++;
        continue;
      }
      const isPartition = g.partitions > 0;
      const cost = isPartition ? partition : small;
      if (this.#budget < cost) return undefined;
      this.#budget -= cost;
      if (isPartition) g.partitions--;
      else g.rechecks--;
      const bytes = isPartition
        ? this.totalBytes / this.#partitionsTotal
        : p.recheckDocsPerTask * p.averageDocumentBytes;
      const docs = isPartition ? bytes / p.averageDocumentBytes : p.recheckDocsPerTask;
      // a filter that matches no document: the task finds none on either side, and compares none
      if (!this.filterMatchesNothing) {
        g.docs += docs;
        g.bytes += bytes;
      }
      if (!isPartition) {
        this.#rechecksDone += p.recheckDocsPerTask;
        this.#lastRecheckedAt = x;
      }
      // documents not on the destination yet differ; they are rechecked in the next generation
      // (a filter that matches none finds none to differ)
      if (has(inputs.copiedFrom) || this.filterMatchesNothing) g.completed++;
      else {
        g.failed++;
        this.#carry.rechecks++;
      }
    }
    return undefined;
  }

  /** Partitions the next collection of generation 0 adds (the total split over the collections). */
  #partitionsFor(): number {
    const c = this.dataSet.collections;
    const done = c - (this.#g.coll + this.#g.special); // collections verified so far, this one included
    return Math.floor((this.#partitionsTotal * done) / c) - Math.floor((this.#partitionsTotal * (done - 1)) / c);
  }

  /** The generation has nothing left. Returns true when a new one began. */
  #endOfGeneration(): boolean {
    if (this.lastGeneration) {
      // "`idle` means either "not started" or "finished""
      this.status = "finished";
      return false;
    }
    const per = this.params.recheckDocsPerTask;
    if (this.finalTs) {
      this.lastGeneration = true;
      this.#next(Math.ceil(this.#docsAcc / per - 1e-9));
      return true;
    }
    const queued = Math.floor(this.#docsAcc / per);
    // what differs is rechecked in every generation: metadata, missing documents, lost writes
    const recurring = this.#carry.special + this.#carry.rechecks + this.#issuesCounted;
    if (queued + recurring > 0) {
      this.#next(queued);
      return true;
    }
    // nothing changed: the published verifier spins through empty generations; one is shown
    if (!this.#waiting) this.#next(0);
    return false;
  }

  #next(rechecks: number): void {
    if (this.generation === 0) {
      this.#generation0 = this.progress().verificationStatus;
      this.#generation0Stats = this.#stats(this.#g, 0);
    }
    this.#docsAcc = Math.max(0, this.#docsAcc - rechecks * this.params.recheckDocsPerTask);
    this.generation++;
    const recheckTasks = this.#carry.rechecks + rechecks;
    const toRecheck = recheckTasks * this.params.recheckDocsPerTask;
    this.#g = {
      ...emptyGen(),
      special: this.#carry.special,
      rechecks: recheckTasks,
      failing: this.#issuesCounted,
      toRecheck,
      // the simulated writes touch every collection: documents to recheck are in every namespace;
      // otherwise only the collections whose metadata is checked again have tasks
      namespaces: toRecheck > 0 ? this.dataSet.collections : this.#carry.special,
    };
    this.#carry = { special: 0, rechecks: 0 };
    this.#waiting = this.#pending() === 0;
  }

  progress(): VerifierProgressBody {
    const g = this.#g;
    const running = this.status === "running" && this.error === null;
    const pending = this.status === "new" || this.status === "setup" ? 0 : this.#pending();
    const processing = running ? Math.min(this.params.verifierWorkers, pending) : 0;
    const done = this.status === "new" ? emptyGen() : g;
    // before its check a restarted process shows generation 0's persisted counters
    const shown = this.status === "new" || this.status === "setup" ? this.#held?.generation0 : undefined;
    const status: VerificationStatus = shown
      ? { ...shown }
      : {
          totalTasks: pending + done.completed + done.failed + done.mismatch,
          addedTasks: pending - processing,
          processingTasks: processing,
          failedTasks: done.failed,
          completedTasks: done.completed,
          metadataMismatchTasks: done.mismatch,
        };
    // before its check a process shows generation 0's amounts as its metadata holds them (none: zeros)
    const before = this.status === "new" || this.status === "setup";
    const stats = before
      ? { ...(this.#held?.generation0Stats ?? this.#stats(emptyGen(), 0)) }
      : this.#stats(g, this.generation);
    // "absent during generation 0 itself" (api.go, v0.1.10 and later)
    const gen0 =
      !before && this.generation > 0 && this.#generation0Stats ? { gen0Stats: { ...this.#generation0Stats } } : {};
    // the source's change reader counts the source's writes and the DDL it skipped (warnMost); the
    // destination's reader is shown with none
    const change = (src: boolean): ChangeStats => ({
      eventsPerSecond: this.readers ? 0 : null,
      lagSecs: this.readers ? 0 : null,
      bufferSaturation: 0,
      eventCounts: {
        insert: src && this.readers ? Math.round(this.#srcEvents - this.#srcEventsBase) : 0,
        update: 0,
        replace: 0,
        delete: 0,
        ...(src && this.readers ? { ...this.#srcDdl } : noDdl()),
      },
    });
    const ts =
      this.#lastRecheckedAt === null
        ? null
        : { $timestamp: { t: 1_700_000_000 + Math.floor(this.#lastRecheckedAt), i: 1 } };
    return {
      phase: this.phase,
      generation: this.generation,
      generationStats: stats,
      ...gen0,
      error: this.error,
      verificationStatus: status,
      srcLastRecheckedTS: ts,
      dstLastRecheckedTS: ts,
      srcChangeStats: change(true),
      dstChangeStats: change(false),
      docsComparedPerSecond: running ? this.params.verifyBytesPerSecond / this.params.averageDocumentBytes : 0,
      srcBytesComparedPerSecond: running ? this.params.verifyBytesPerSecond : 0,
      totalRechecksDone: Math.round(this.#rechecksDone),
    };
  }

  /** A generation's amounts, as statistics.go adds them up from its tasks (this file's comment). */
  #stats(g: Generation, generation: number): GenerationStats {
    const c = this.dataSet.collections;
    const docsAll = this.totalBytes / this.params.averageDocumentBytes;
    const stats: GenerationStats = {
      docsCompared: Math.round(g.docs),
      totalDocs: generation === 0 ? Math.round((docsAll * g.sized) / c) : g.toRecheck,
      srcBytesCompared: Math.round(g.bytes),
      totalNamespaces: g.namespaces,
    };
    const totalSrcBytes = Math.round((this.totalBytes * g.sized) / c);
    // omitempty in the published source: absent while 0
    if (totalSrcBytes > 0) stats.totalSrcBytes = totalSrcBytes;
    return stats;
  }

  /** The collections whose metadata differed in the current generation (for /api/v1/nsMismatches). */
  mismatchedCollections(): number {
    return this.#g.mismatch;
  }

  /** Documents that differed in the current generation (for /api/v1/docMismatches and /summary). */
  failedTasks(): number {
    return this.#g.failed;
  }
}
