/**
 * One runner per fleet, not per runbook file (issue 30): the journal folder's lock (lock.ts) is
 * keyed by the runbook's real path, so two checkouts of one runbook, or a hard link in another
 * folder, each hold "the" lock and both send start. These locks are keyed by what the runs act
 * on: one lock per sync service instance, named by a hash of its canonical URL, in a per-user
 * state folder. Every instance's lock is taken (in one order, so two runners never hold parts
 * of each other's fleets), so two runbooks that share even one instance exclude each other.
 *
 * The folder: one place per user whatever the shell's environment (issue 42: `XDG_RUNTIME_DIR` is
 * set in one login and not in `sudo -iu`, cron or some tmux sessions, so two runners of one user
 * each found "the" folder empty): `.local/state/syncbook/locks` under the user's home directory as
 * the system's user database has it (`os.userInfo().homedir`, getpwuid(3), not `$HOME`), and only
 * where this user has no entry there (a container's arbitrary uid) `$HOME`'s. Tests point
 * `$SYNCBOOK_STATE_DIR` at their temp folder. A lock left by a boot that is over is stale by its
 * holder's boot id (lock.ts). What they cannot see: a run by another user of this machine or on
 * another machine. There the fleet's own state is the guard: start's interlock refuses a
 * fleet that is not IDLE, and the service refuses a start that is not from IDLE (spec: "start is
 * allowed only in IDLE"), so a second runner's start is never accepted.
 *
 * The runbook's migration verifier is locked alike (its own `verifier-` lock): it runs one
 * verification per process, so two cutovers that name one verifier would each take the other's
 * check for theirs (an adversarial run: a second runbook pointed at the first's verifier adopted
 * its running check and ended "verified" with the first's sync RUNNING).
 *
 * Which service a URL names is `serviceKey` (src/instance-identity.ts, the one home): every
 * spelling of one service one key, and loopback spellings at one port one key too (reading them
 * as one fails safe: a second runner is refused, never let through).
 */
import { createHash } from "node:crypto";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { serviceKey } from "../instance-identity.js";
import { acquireLock, lockHolderText, type Lock, type LockInfo } from "./lock.js";

/** The per-user folder of the fleet locks (see the header). */
export function fleetLockDir(
  env: NodeJS.ProcessEnv = process.env,
  userHome: () => string = () => userInfo().homedir,
): string {
  if (env.SYNCBOOK_STATE_DIR) return join(env.SYNCBOOK_STATE_DIR, "locks");
  let home: string;
  try {
    home = userHome();
  } catch {
    // no entry in the user database (an arbitrary container uid): the environment's is all there is
    home = homedir();
  }
  return join(home, ".local", "state", "syncbook", "locks");
}

/** The lock file of one instance (or verifier): its canonical URL hashed (a URL may hold a secret; a hash never shows it). */
export function instanceLockName(url: string, kind: LockedService = "instance"): string {
  return `${kind}-${createHash("sha256")
    .update(serviceKey(url) ?? url)
    .digest("hex")
    .slice(0, 32)}.lock`;
}

/** What a lock guards: a sync service instance, or the runbook's migration verifier. */
export type LockedService = "instance" | "verifier";

export interface FleetLock {
  /** The instances whose lock a runner that had died left, taken over, and what each lock said (for the run's log: `tookOverLines`). */
  readonly tookOver: { label: string; from: LockInfo | { unreadable: string } }[];
  /** Releases every instance's lock; idempotent. */
  release(): void;
}

/**
 * Takes the lock of every instance of the fleet, or throws the UserError of the first one held
 * (naming the instance as `label` words it: redacted), after releasing those already taken.
 */
export function acquireFleetLock(
  instances: readonly { url: string; label: string; kind?: LockedService }[],
  /**
   * `runbook` and `journalDir` (resolved) are written into each lock: the next runner refused
   * names the holder's `syncbook status` by them (another copy, another journal folder); `status`,
   * this runner's, is said for a holder that wrote none.
   */
  opts: { runbook: string; journalDir?: string | undefined; status?: string; env?: NodeJS.ProcessEnv },
): FleetLock {
  const dir = fleetLockDir(opts.env);
  const byName = new Map(instances.map((i) => [instanceLockName(i.url, i.kind), i]));
  const held: Lock[] = [];
  const tookOver: { label: string; from: LockInfo | { unreadable: string } }[] = [];
  const release = (): void => {
    for (const l of held.splice(0).reverse()) l.release();
  };
  try {
    for (const [name, inst] of [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      try {
        const lock = acquireLock(dir, {
          fileName: name,
          guards: `${inst.kind ?? "instance"} ${inst.label}`,
          runbook: opts.runbook,
          ...(opts.journalDir !== undefined ? { journalDir: opts.journalDir } : {}),
          ...(opts.status !== undefined ? { status: opts.status } : {}),
          elsewhere: "or point SYNCBOOK_STATE_DIR at a writable folder (the fleet's locks live there)",
        });
        held.push(lock);
        // the instances' lines say the runner before is gone; its verifier's lock, one more, says nothing new
        if (lock.staleFrom && inst.kind !== "verifier") tookOver.push({ label: inst.label, from: lock.staleFrom });
      } catch (err) {
        // the instance first: the operator knows it by its URL, not by a hashed file name (a
        // folder that cannot be written is not an instance in use: that error says so as it is)
        const io = err instanceof UserError && typeof (err.options.cause as NodeJS.ErrnoException)?.code === "string";
        throw err instanceof UserError && !io
          ? new UserError(`${inst.kind ?? "instance"} ${inst.label} is in use: ${err.message}`, {
              ...err.options,
              cause: err,
            })
          : err;
      }
    }
  } catch (err) {
    release();
    throw err;
  }
  return { tookOver, release };
}

/**
 * The run's log of the locks it took over: a line per runner that left them. A kill -9 leaves a
 * lock on every instance of its fleet, all one runner's; 64 lines of the same holder, each with
 * its JSON, scrolled the one fact (the runner before is gone, this run goes on) off the screen
 * after a kill -9 in the window. One instance's line reads as before.
 */
export function tookOverLines(tookOver: FleetLock["tookOver"]): string[] {
  const by = new Map<string, { labels: string[]; from: FleetLock["tookOver"][number]["from"] }>();
  for (const t of tookOver) {
    // one runner: its process (pid, host, boot, start), whatever time it took each lock at
    // an unreadable lock tells no holder: never taken as one runner's with another, a line of its own
    const key =
      "unreadable" in t.from
        ? `unreadable:${t.label}`
        : JSON.stringify([t.from.pid, t.from.host, t.from.pidns, t.from.boot, t.from.start]);
    const g = by.get(key);
    if (g) g.labels.push(t.label);
    else by.set(key, { labels: [t.label], from: t.from });
  }
  return [...by.values()].map(({ labels, from }) =>
    labels.length === 1
      ? `fleet: took over the stale lock of instance ${labels[0]} (left by ${lockHolderText(from)})`
      : `fleet: took over the stale locks of ${labels.length} instances (${labels.slice(0, 3).join(", ")}${labels.length > 3 ? ` and ${labels.length - 3} more` : ""}), all left by one runner: ${lockHolderText(from)}`,
  );
}
