/** The source oplog window against the estimated copy time, and the destination's free disk against the documented need. */
import { clusterPath, type CheckInput, type Findings } from "../findings.js";
import { formatBytes } from "../../text.js";
import { formatDuration } from "../../runbook/duration.js";

// the oplog's span (what there is) rounds down, what it must cover rounds up: a shortfall never reads as none
const seconds = (s: number, round?: "up" | "down"): string => formatDuration(s * 1000, round);

/** Logical bytes of the synced set; `complete` is false when some sizes could not be read. */
export function syncedBytes(input: CheckInput): { bytes: number; perShard: Map<string, number>; unread: number } {
  let bytes = 0;
  let unread = 0;
  const perShard = new Map<string, number>();
  for (const n of input.selection?.synced ?? []) {
    const s = n.collection.stats;
    if (!s) continue;
    if (!s.ok) {
      unread++;
      continue;
    }
    bytes += s.value.bytes;
    for (const [shard, b] of Object.entries(s.value.perShard)) perShard.set(shard, (perShard.get(shard) ?? 0) + b);
  }
  return { bytes, perShard, unread };
}

export function check(input: CheckInput, out: Findings): void {
  if (!input.selection || !input.start) return;
  const { bytes, perShard, unread } = syncedBytes(input);
  const rate = input.copyRateBytesPerSecond;
  const partial =
    unread > 0 ? ` (${unread} collection size${unread === 1 ? "" : "s"} could not be read: at least this much)` : "";

  const src = input.source;
  if (src?.oplog) {
    const at = clusterPath(src.name);
    if (!src.oplog.ok) out.notChecked(at, "the source oplog window", src.oplog.why);
    else
      for (const o of src.oplog.value) {
        const window = o.last - o.first;
        // a shard copies its own share; a replica set all of it
        const share = perShard.size > 0 && perShard.has(o.of) ? (perShard.get(o.of) ?? 0) : bytes;
        const copy = share / rate;
        const need = copy * input.oplogHeadroom;
        if (window < need)
          out.add(
            "preflight-oplog-window",
            at,
            `The oplog of \`${o.of}\` on the source \`${src.name}\` spans ${seconds(window, "down")}; copying ${formatBytes(share)}${partial} at ${formatBytes(rate)}/s takes about ${seconds(copy)}, and the window must cover ${input.oplogHeadroom}× that (${seconds(need, "up")}).`,
            { key: true },
          );
      }
  }

  const dest = input.destination;
  if (dest?.disk) {
    const at = clusterPath(dest.name);
    if (!dest.disk.ok) out.notChecked(at, "the destination's free disk", dest.disk.why);
    else if (dest.disk.value.length > 0) {
      const free = dest.disk.value.reduce((s, d) => s + Math.max(0, d.totalBytes - d.usedBytes), 0);
      const need = 2 * bytes;
      if (free < need)
        out.add(
          "preflight-destination-disk",
          at,
          `The destination \`${dest.name}\` has ${formatBytes(free)} free${dest.disk.value.length > 1 ? ` over ${dest.disk.value.length} shards` : ""}; syncing ${formatBytes(bytes)}${partial} needs ${formatBytes(need)} (the data, and as much again for the insert oplog entries).`,
          { key: true },
        );
    }
  }
}
