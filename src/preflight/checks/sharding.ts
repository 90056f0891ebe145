/** Sharded clusters: the balancer (stopped on the destination; on the source, or per synced collection), and zones. */
import { clusterPath, ns, type CheckInput, type Findings } from "../findings.js";

export function check(input: CheckInput, out: Findings): void {
  const synced = new Set((input.selection?.synced ?? []).map((n) => ns(n.database, n.collection.name)));
  const filtered =
    (input.start?.body.includeNamespaces?.length ?? 0) + (input.start?.body.excludeNamespaces?.length ?? 0) > 0;

  const dest = input.destination;
  if (dest?.balancer) {
    const at = clusterPath(dest.name);
    if (!dest.balancer.ok)
      out.notChecked(at, "that the destination's balancer is stopped", `balancerStatus failed (${dest.balancer.why})`);
    else if (dest.balancer.value.mode !== "off")
      out.add(
        "preflight-balancer",
        at,
        `The balancer of the sharded destination \`${dest.name}\` is on (mode \`${dest.balancer.value.mode}\`); it must be stopped for the whole sync.`,
        { key: true },
      );
  }
  if (dest?.zones && input.selection) {
    const at = clusterPath(dest.name);
    if (!dest.zones.ok)
      out.notChecked(at, "zones on the destination", `reading config.tags failed (${dest.zones.why})`);
    else {
      const hit = [...new Set(dest.zones.value.filter((z) => synced.has(z.ns)).map((z) => `\`${z.ns}\` (${z.tag})`))];
      if (hit.length > 0)
        out.add(
          "preflight-destination-zones",
          at,
          `Synced namespaces have zone ranges on the destination \`${dest.name}\`: ${hit.join(", ")}.`,
          { key: true },
        );
    }
  }

  const src = input.source;
  if (src?.balancer) {
    const at = clusterPath(src.name);
    if (!src.balancer.ok)
      out.notChecked(at, "that the source's balancer is stopped", `balancerStatus failed (${src.balancer.why})`);
    else if (src.balancer.value.mode !== "off") {
      if (!filtered)
        out.add(
          "preflight-balancer",
          at,
          `The balancer of the sharded source \`${src.name}\` is on (mode \`${src.balancer.value.mode}\`); without a namespace filter it must be stopped until the copy is done.`,
          { key: true },
        );
      else if (!src.shardedCollections?.ok)
        out.notChecked(
          at,
          "that balancing is disabled for the synced collections",
          `reading config.collections failed (${src.shardedCollections?.ok === false ? src.shardedCollections.why : "not read"})`,
        );
      else {
        const balanced = src.shardedCollections.value
          .filter((c) => synced.has(c.ns) && !c.noBalance)
          .map((c) => `\`${c.ns}\``);
        if (balanced.length > 0)
          out.add(
            "preflight-balancer",
            at,
            `The balancer of the sharded source \`${src.name}\` is on and still balances synced collections: ${balanced.slice(0, 10).join(", ")}${balanced.length > 10 ? ` and ${balanced.length - 10} more` : ""}.`,
            {
              key: true,
              hint: "Stop the balancer (`sh.stopBalancer()`), or disable balancing of each synced collection (`sh.disableBalancing(ns)`), then wait 15 minutes before start.",
            },
          );
      }
    }
  }
  if (src?.zones?.ok && input.selection) {
    const tagged = [...new Set(src.zones.value.filter((z) => synced.has(z.ns)).map((z) => `\`${z.ns}\``))];
    if (tagged.length > 0)
      out.add(
        "preflight-source-zones",
        clusterPath(src.name),
        `Synced namespaces have zones on the source \`${src.name}\` (${tagged.join(", ")}); zones are not copied.`,
        { key: true },
      );
  }
}
