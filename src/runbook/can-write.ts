/**
 * Whose `canWrite` is valid, and when the destination takes the application's writes: the one
 * home of both readings, for conditions, the write-stop window, lint, `status`, the live view and
 * the report.
 *
 * The cutover page (`mongodb/docs` `content/mongosync/current/source/reference/cutover-process.txt`,
 * and the 1.11–1.21 pages): "If you are running multiple mongosync instances, only check that
 * canWrite is true on the first mongosync process. The canWrite status of any subsequent mongosync
 * processes is not valid." Which process is "first" is not published (service facts, "Not
 * published"): the reading that fails safe takes the instance the runbook lists first, and only
 * where the runbook says that is the first process the operator starts (`startedFirst: true`);
 * otherwise no instance's `canWrite` is read, and the destination takes writes once every instance
 * is COMMITTED (the page: "you can write to the destination after /progress reports canWrite: true
 * or when the state is COMMITTED"). The other instances' `canWrite` is never waited on: it is not
 * valid and may never turn true.
 */
import { wireStartBody } from "../api/start-body.js";
import { UNCITED, atLeast, versionSpan } from "../api/versions.js";
import type { Runbook, StartRequest } from "./types.js";

/**
 * The index of the instance whose `canWrite` is valid: the only instance, or (of several) the one
 * listed first when it is declared `startedFirst: true`; undefined when none may be read.
 */
export function canWriteInstance(rb: Pick<Runbook, "instances">): number | undefined {
  if (rb.instances.length === 1) return 0;
  const first = rb.instances[0];
  return typeof first === "object" && first.startedFirst === true ? 0 : undefined;
}

/** Why no instance's `canWrite` may be read on this runbook's fleet, or undefined. */
export function noCanWriteReason(rb: Pick<Runbook, "instances">): string | undefined {
  return canWriteInstance(rb) === undefined
    ? `only the first mongosync process's canWrite is valid (the others' "is not valid"), and none of the ${rb.instances.length} instances is declared the first process the operator starts (\`startedFirst: true\` on the instance listed first)`
    : undefined;
}

/** When the destination takes the application's writes. */
export type DestinationWrites = { on: "canWrite"; instance: number } | { on: "committed"; why: string };

/**
 * On 1.11–1.19, a start without write blocking (`enableUserWriteBlocking: false` or `"none"`): the
 * page says to write to the destination only once COMMITTED unless the embedded verifier is on
 * (src/api/versions.ts, `UNCITED.committedBeforeWritesWithoutBlocking`). From 1.11, not 1.14 as
 * service-facts.md dates it: mongodb/docs at commit 2139bd83d9f25f6ed66e068d9a98b60464d40af9,
 * content/mongosync/v1.11/source/reference/cutover-process.txt, "canWrite and COMMITTED": "If you
 * set ``enableUserWriteBlocking`` to either ``"sourceAndDestination"`` or ``"destinationOnly"``, or
 * the verifier is turned on, you can write to the destination after ``/progress`` reports
 * ``canWrite: true``. Otherwise, wait until the state is ``COMMITTED``." (read 2026-11-29; the
 * v1.17 page at e8571bb98d9b89454ac6b9c074f8986316899cf5 says the same, read 2026-12-06).
 *
 * A start with `preExistingDestinationData: true` has no write blocking either, whatever it says of
 * `enableUserWriteBlocking`: mongodb/docs at 873eea744c26fd8965290b945219d29469122b3b,
 * content/mongosync/v1.17/source/reference/api/start.txt: "``mongosync`` does not enable
 * write-blocking when you enable this feature" and "The default write-blocking mode is changed
 * from ``"destinationOnly"`` to ``"none"``" (read 2026-12-06; the current page: "``mongosync``
 * does not block writes on the source or destination cluster"). Both fields are read as the
 * service reads them, `x-passthrough` merged (`wireStartBody`).
 *
 * A runbook that declares no `serviceVersion` may drive 1.11–1.19 (`enableUserWriteBlocking`
 * exists only before 1.20): the reading that fails safe takes the rule as holding (an outside
 * conformance read; it said nothing, and the window closed on `canWrite`).
 *
 * Whether the verifier is on is not the start request's to say alone, so a start that leaves it on
 * does not make `canWrite` valid here: mongodb/docs-cluster-to-cluster-sync, branch v1.13,
 * source/includes/opts/disableVerification.rst, the 1.10+ process option and setting: "Disables
 * the Embedded Verifier … Verification remains disabled for subsequent restarts and reversals";
 * source/includes/fact-verification-support-1.9.0.rst: "If you live upgrade from any version before
 * 1.9.0, ``mongosync`` disables embedded verification" (read 2026-11-30). Neither shows in a
 * runbook, and what a disabled verifier reports in progress is not published: the reading that
 * fails safe is COMMITTED whenever write blocking is off.
 * `start`: the runbook's first start request (src/steps `firstStartRequest`); a runbook that does
 * not start the sync says nothing of it (write blocking is on by default from 1.11).
 */
export function committedBeforeWrites(
  rb: Pick<Runbook, "serviceVersion">,
  start: StartRequest | undefined,
): string | undefined {
  if (!start) return undefined;
  const v = rb.serviceVersion;
  const range = UNCITED.committedBeforeWritesWithoutBlocking;
  if (v !== undefined && (!atLeast(v, range.since) || atLeast(v, range.until))) return undefined;
  const body = wireStartBody(start);
  const wb = body.enableUserWriteBlocking;
  const turnedOff = wb === false || wb === "none";
  const preExisting = body.preExistingDestinationData === true;
  if (!turnedOff && !preExisting) return undefined;
  const off = turnedOff
    ? "the start turns write blocking off"
    : 'the start sets `preExistingDestinationData: true`, with which the service enables no write blocking (its default mode becomes "none")';
  const verifier =
    start.verification?.enabled === false
      ? "and its start turns the embedded verifier off"
      : "and whether the embedded verifier is on cannot be told from the runbook (the process option `--disableVerification`, or a live upgrade from before 1.9, turns it off whatever the start request says)";
  const where =
    v === undefined
      ? `the runbook declares no serviceVersion (it may drive ${versionSpan(range.since, range.until)}), and there`
      : `on ${versionSpan(range.since, range.until)}`;
  return `${where} ${off}, ${verifier}: the cutover page says to write to the destination only once the state is COMMITTED`;
}

/**
 * When the destination takes writes on this runbook's fleet: `canWrite: true` of the first
 * process, or COMMITTED on every instance (no first process declared; or the 1.11–1.19 pages'
 * "Otherwise, wait until the state is COMMITTED").
 */
export function destinationWrites(
  rb: Pick<Runbook, "instances" | "serviceVersion">,
  start: StartRequest | undefined,
): DestinationWrites {
  const instance = canWriteInstance(rb);
  if (instance === undefined) return { on: "committed", why: noCanWriteReason(rb)! };
  const late = committedBeforeWrites(rb, start);
  return late ? { on: "committed", why: late } : { on: "canWrite", instance };
}
