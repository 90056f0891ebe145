/** Topology and shard count against `clusters:` (hello: replica set, mongos; listShards). */
import { clusterPath, type CheckInput, type Findings } from "../findings.js";

const SAYS = { replicaSet: "a replica set", sharded: "a sharded cluster (through mongos)" } as const;

export function check(input: CheckInput, out: Findings): void {
  for (const [name, facts] of input.clusters) {
    const declared = input.runbook.clusters?.[name];
    if (!declared) continue;
    const at = clusterPath(name);
    const kind = facts.hello.kind;
    if (kind === "standalone") {
      out.add(
        "preflight-topology",
        [...at, "uri"],
        `Cluster \`${name}\` is a standalone server: the service needs a replica set or a sharded cluster (it reads change streams).`,
        { hint: "Convert the server to a single-member replica set, or point `uri` at the replica set or the mongos." },
      );
      continue;
    }
    if (kind !== declared.topology) {
      out.add(
        "preflight-topology",
        [...at, "topology"],
        `Cluster \`${name}\` is declared ${SAYS[declared.topology]}, but the server at its uri is ${SAYS[kind]}${facts.hello.setName ? ` (\`${facts.hello.setName}\`)` : ""}.`,
      );
    }
    if (kind === "sharded" && facts.shards) {
      if (!facts.shards.ok) out.notChecked(at, "the shard count", `listShards failed (${facts.shards.why})`);
      else if (declared.shards !== undefined && declared.shards !== facts.shards.value.length) {
        out.add(
          "preflight-shard-count",
          [...at, "shards"],
          `Cluster \`${name}\` is declared with ${declared.shards} shards and has ${facts.shards.value.length} (${facts.shards.value.map((s) => s.id).join(", ")}).`,
        );
      }
    }
  }
}
