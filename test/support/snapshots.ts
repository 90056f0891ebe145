/** Hand-built fleet snapshots for the identity and condition unit tests. */
import { TransportError, type Progress } from "../../src/api/index.js";
import type { FleetSnapshot, InstanceSample } from "../../src/fleet/index.js";

export const GiB = 2 ** 30;

/** A RUNNING instance in change event application, overridable field by field. */
export function running(i: number, over: Partial<Progress> = {}): Progress {
  return {
    state: "RUNNING",
    canCommit: true,
    canWrite: false,
    info: "change event application",
    lagTimeSeconds: 2,
    totalEventsApplied: 1000,
    collectionCopy: { estimatedTotalBytes: GiB, estimatedCopiedBytes: GiB },
    directionMapping: { Source: "cluster0: rs0/a:27017", Destination: "cluster1: mongos:27017" },
    mongosyncID: `id-${i}`,
    coordinatorID: "id-0",
    ...over,
  };
}

/** In state IDLE "all fields except `state` and `canCommit` are null". */
export function idle(): Progress {
  return {
    state: "IDLE",
    canCommit: false,
    canWrite: null,
    info: null,
    lagTimeSeconds: null,
    totalEventsApplied: null,
    collectionCopy: null,
    directionMapping: null,
    mongosyncID: null,
    coordinatorID: null,
  };
}

export function down(i: number): TransportError {
  return new TransportError(
    `http://127.0.0.1:${27182 + i}`,
    "progress",
    "connect",
    "cannot connect: connect ECONNREFUSED",
    { sysCode: "ECONNREFUSED", requestSent: false },
  );
}

/** A snapshot from per-instance progress (or an error); instance i is `http://127.0.0.1:2718(2+i)`, named `s<i>` when `named`. */
export function snap(items: (Progress | TransportError)[], named = false): FleetSnapshot {
  return {
    at: 0,
    instances: items.map((it, index): InstanceSample => {
      const ref = { url: `http://127.0.0.1:${27182 + index}`, index, ...(named ? { name: `s${index}` } : {}) };
      return it instanceof TransportError ? { ref, error: it } : { ref, progress: it };
    }),
  };
}
