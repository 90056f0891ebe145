/** The sync service instances and the verifier: addresses, duplicates, count, presence. */
import { isLoopbackHost, sameService, serviceKey } from "../instance-identity.js";
import type { LintContext, RuleInfo, YamlPath } from "./context.js";
import { q } from "./context.js";
import { noCanWriteReason } from "../runbook/can-write.js";
import { conditions, startRequests } from "./kinds.js";

export const rules = [
  {
    id: "instance-url",
    severity: "error",
    description:
      "An instance or verifier URL that cannot be used: not a URL (`http://[::1`), a port out of range, a bad percent-escape in its user info, a query or a fragment.",
    spec: "The base address of the service is {base_url}; the verifier has its own base address {verifier_url}. All paths below are relative to those addresses.",
    source: "sync-service-api.md",
    hint: "Give a base address such as http://127.0.0.1:27182; in user info, percent-encode `#`, `/`, `?`, `@`, `:` and `%` (e.g. `#` as %23).",
  },
  {
    id: "instance-insecure",
    severity: "warning",
    description: "An instance or verifier URL is neither loopback nor https: the control API has no authentication.",
    spec: "The start, commit and progress endpoints carry no authentication; the service does not protect them. By default the API binds to the local host only.",
    source: "sync-service-api.md",
    hint: "Reach the instance over loopback (an SSH tunnel: http://127.0.0.1:<port>) or through an https proxy that authenticates.",
  },
  {
    id: "instance-duplicate",
    severity: "error",
    description:
      "The same instance URL is listed twice, in any spelling (case, default port, trailing slash, user info; two loopback spellings at one port), or the verifier has an instance's address.",
    spec: "When several service instances sync between sharded clusters, identical API commands must be sent to every instance.",
    source: "sync-service-api.md",
    hint: "List each instance once: a duplicate would be sent start and commit twice.",
  },
  {
    id: "instance-name",
    severity: "warning",
    description:
      "An instance `name` that `--only` cannot name safely: two instances have it, it holds a comma, it is spelled like a place (`#2`), or it has whitespace at its start or end.",
    spec: "Display name used in output and reports, and by `--only`, which names instances by name, by place (`#2`) or by URL, split at commas and each part trimmed: unique, without commas, not `#` and digits, without whitespace at its start or end (lint `instance-name`).",
    source: "runbook.schema.json",
    hint: "Give each instance a unique name without commas, not `#` followed by digits (that is a place: `#2` is the second instance) and without spaces at its start or end, e.g. `shard-a`. Until then `--only` refuses a name two instances answer to, and the ways on name such an instance by its place (`#2`). A warning, not an error: a cutover under way with such a name must still be resumed or called off.",
  },
  {
    id: "instance-count",
    severity: "warning",
    description:
      "The number of instances does not match the source: one for a replica set; for a sharded source one (through mongos) or one per source shard.",
    spec: "A sharded source runs either **one** instance connected through mongos (no `--id`, no `replicaSet` option) or one instance per source shard (`--id <shardId>`), each on its own port.",
    source: "service-facts.md",
    hint: "List one instance per source shard, or one instance connected through mongos (a replica set source has one instance), or correct `shards` under `clusters`.",
  },
  {
    id: "instance-url-path",
    severity: "warning",
    description: "An instance or verifier URL already contains `/api/`: it should be the base address.",
    spec: "The base address of the service is {base_url}; ... All paths below are relative to those addresses.",
    source: "sync-service-api.md",
    hint: "Give the base address only, e.g. http://127.0.0.1:27182; syncbook appends /api/v1/... itself.",
  },
  {
    id: "can-write-no-first-process",
    severity: "error",
    description:
      "A `canWrite` condition (the shorthand or an `expect` path) on a fleet of several instances, none of which is declared the first process (`startedFirst: true`): no instance's canWrite may be read.",
    spec: 'If you are running multiple mongosync instances, only check that canWrite is true on the first mongosync process. The canWrite status of any subsequent mongosync processes is not valid. (Which process is "first" is not published: the runbook says so, or none is read.)',
    source: "service-facts.md",
    docs: "https://www.mongodb.com/docs/cluster-to-cluster-sync/current/reference/cutover-process/",
    hint: "Mark the instance the operator starts first with `startedFirst: true` and list it first; or wait for `state: COMMITTED` instead (the page: you can write to the destination once the state is COMMITTED).",
  },
  {
    id: "started-first-not-first",
    severity: "error",
    description: "`startedFirst: true` on an instance that is not listed first.",
    spec: "Only the first mongosync process's `canWrite` is valid; the runbook names it by listing it first and marking it `startedFirst: true`.",
    source: "service-facts.md",
    hint: "Move the instance the operator starts first to the top of `instances`, and keep `startedFirst: true` on it alone.",
  },
  {
    id: "verify-without-verifier",
    severity: "error",
    description: "A `startVerification` or `verify` step, but no `verifier` URL.",
    spec: "A separate verifier compares documents, views and indexes between the clusters; the verifier has its own base address {verifier_url}.",
    source: "sync-service-api.md",
    hint: "Add `verifier: http://127.0.0.1:27020` (the verifier's base address) at the top level.",
  },
  {
    id: "stop-writes-simulator-switch",
    severity: "warning",
    description:
      "A `stopWrites` hook (or its undo) is the simulator's write switch (`sim-writes`, or a URL ending in `/sim/writes`) while the runbook names a real fleet: an instance or the verifier off loopback, or a cluster with a `uri`.",
    spec: "`stopWrites` runs the hook that stops application writes to the source; commit needs writes stopped, or data written during commit may be lost.",
    source: "DESIGN.md",
    hint: "Point the stopWrites hook and its undo at your application's own write switch (`syncbook init` writes the simulator's, for rehearsals; `syncbook rehearse` replaces the hook anyway).",
  },
] as const satisfies readonly RuleInfo[];

/**
 * What makes a runbook's fleet real rather than the simulator: an instance or the verifier off
 * loopback, or a cluster with a `uri` (the simulator has no clusters to connect to). A real fleet
 * reached through SSH tunnels on loopback, without `uri`s, looks like the simulator: lint cannot
 * tell, and says nothing (the run's first hook request still fails against a service, 404).
 */
function realFleetSign(rb: LintContext["runbook"]): string | undefined {
  const urls = [...rb.instances.map((i) => (typeof i === "string" ? i : i.url)), ...(rb.verifier ? [rb.verifier] : [])];
  for (const url of urls) {
    const u = url.includes("${") ? undefined : parse(url);
    if (u && !isLoopbackHost(u.hostname)) return `${q(url)} is not on loopback`;
  }
  for (const [name, c] of Object.entries(rb.clusters ?? {}))
    if ((c as { uri?: unknown }).uri !== undefined) return `cluster ${q(name)} has a \`uri\``;
  return undefined;
}

/** Why a hook is the simulator's write switch: its plugin, or a URL of the simulator's control API in its options. */
function simulatorSwitch(hook: { use?: unknown; with?: unknown } | undefined): string | undefined {
  if (!hook) return undefined;
  if (hook.use === "sim-writes") return "`use: sim-writes`";
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") strings.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(hook.with);
  const hit = strings.find((x) => /\/sim\/writes\/?(?=$|[?#\s"'])/.test(x));
  return hit === undefined ? undefined : `it calls ${q(hit)}`;
}

function checkSimulatorSwitch(ctx: LintContext): void {
  const real = realFleetSign(ctx.runbook);
  if (!real) return;
  for (const { bound, at } of ctx.steps) {
    const call = bound.opensWriteStop ? bound.hookCall() : undefined;
    const why = simulatorSwitch(call) ?? simulatorSwitch(call?.undo);
    if (!why) continue;
    ctx.report(
      "stop-writes-simulator-switch",
      at,
      `This ${bound.kind} step uses the simulator's write switch (${why}), but the fleet is real (${real}): against it the hook stops nothing, so commit would run while the application still writes.`,
      { key: true },
    );
  }
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * Why a base URL cannot be used, or undefined. The checks the client would otherwise fail on at
 * run time (an internal error) or silently get wrong (a query dropped, a `#` in a password
 * turning the rest into a fragment).
 */
export function unusableUrl(url: string): string | undefined {
  const u = parse(url);
  if (!u) {
    const port = /^[a-z]+:\/\/(?:[^@/]*@)?(?:\[[^\]]*\]|[^:/?#]*):(\d+)/i.exec(url)?.[1];
    if (port !== undefined && Number(port) > 65535) return `its port ${port} is out of range (1-65535)`;
    return "it is not a valid URL";
  }
  for (const [part, v] of [
    ["user name", u.username],
    ["password", u.password],
  ] as const) {
    try {
      decodeURIComponent(v);
    } catch {
      return `its ${part} has a bad percent-escape (a \`%\` not followed by two hex digits)`;
    }
  }
  if (u.hash !== "" || url.includes("#")) return "it has a fragment (`#…`): a `#` in a password must be written %23";
  if (u.search !== "") return "it has a query (`?…`), which is not part of a base address";
  return undefined;
}

export function check(ctx: LintContext): void {
  const rb = ctx.runbook;
  checkCanWrite(ctx);
  checkSimulatorSwitch(ctx);
  checkNames(ctx);
  const urls: { url: string; at: YamlPath; what: string }[] = rb.instances.map((inst, i) =>
    typeof inst === "string"
      ? { url: inst, at: ["instances", i], what: "Instance" }
      : { url: inst.url, at: ["instances", i, "url"], what: "Instance" },
  );
  if (rb.verifier !== undefined) urls.push({ url: rb.verifier, at: ["verifier"], what: "Verifier" });

  const seen = new Map<string, { at: YamlPath; what: string; url: string }>();
  for (const { url, at, what } of urls) {
    // an `${env.*}` lint cannot see (CI has no secrets) is judged when the runbook runs
    const bad = url.includes("${") ? undefined : unusableUrl(url);
    if (bad) {
      ctx.report("instance-url", at, `${what} URL ${q(url)} cannot be used: ${bad}.`);
      continue;
    }
    const u = parse(url);
    if (!u) continue;
    if (u.protocol !== "https:" && !isLoopbackHost(u.hostname)) {
      ctx.report(
        "instance-insecure",
        at,
        `${what} ${q(url)} is reached over plain http on a non-loopback address; the API has no authentication.`,
      );
    }
    if (/\/api(\/|$)/.test(u.pathname)) {
      ctx.report(
        "instance-url-path",
        at,
        `${what} URL ${q(url)} contains ${q(u.pathname)}; requests would go to ${q(`${u.pathname.replace(/\/$/, "")}/api/v1/...`)}.`,
      );
    }
    // one service, whatever the spelling; two loopback spellings at one port may be one service,
    // and a duplicate would be sent start and commit twice: read as one (src/instance-identity.ts)
    const key = serviceKey(url) ?? url;
    const first = seen.get(key);
    if (first) {
      const maybe =
        sameService(url, first.url) === "maybe"
          ? ` (${q(first.url)}: two spellings of this machine at one port may be one service, an SSH tunnel written two ways; give one spelling, or different ports)`
          : "";
      const msg =
        what === "Verifier"
          ? `The verifier ${q(url)} has the address of the instance at line ${ctx.lineOf(first.at)}${maybe}; the verifier is a separate process with its own address.`
          : `Instance ${q(url)} is already listed at line ${ctx.lineOf(first.at)}${maybe}.`;
      ctx.report("instance-duplicate", at, msg);
    } else seen.set(key, { at, what, url });
  }

  // a sharded source: one instance through mongos, or one per source shard; neither is a mistake
  const source = startRequests(ctx)[0]?.request.source;
  const cluster = source !== undefined ? rb.clusters?.[source] : undefined;
  const n = rb.instances.length;
  if (cluster?.topology === "sharded" && cluster.shards !== undefined && n > 1 && cluster.shards !== n) {
    ctx.report(
      "instance-count",
      ["instances"],
      `Source ${q(source)} has ${cluster.shards} shards but ${n} instances are listed: a sharded source runs one instance per source shard, or one instance through mongos.`,
      {
        key: true,
      },
    );
  } else if (cluster?.topology === "replicaSet" && n > 1) {
    ctx.report(
      "instance-count",
      ["instances"],
      `Source ${q(source)} is a replica set, which one instance syncs, but ${n} instances are listed.`,
      { key: true },
    );
  }

  // verify needs the verifier's address
  if (rb.verifier === undefined) {
    for (const { bound, at } of ctx.steps)
      if (bound.usesVerifier)
        ctx.report(
          "verify-without-verifier",
          at,
          `This ${bound.kind} step talks to the migration verifier, and the runbook sets no \`verifier\` URL.`,
          { key: true },
        );
  }
}

/**
 * Instance names as `--only` reads them (src/run/plan.ts `instanceTargets`: by name, by place
 * `#2` or by URL, its argument split at commas and each part trimmed) and as a run's way on writes
 * them back (`onlyAsOffered` joins the names with commas): a name that does not read back as
 * itself would send the command to another instance, or to none. Every output names instances by
 * name too, so two with one name cannot be told apart. An `${env.*}` lint cannot see is judged by
 * the text around it: its value is not known here (CI has no secrets).
 */
function checkNames(ctx: LintContext): void {
  const first = new Map<string, YamlPath>();
  ctx.runbook.instances.forEach((inst, i) => {
    if (typeof inst !== "object" || inst.name === undefined) return;
    const name = inst.name;
    const at: YamlPath = ["instances", i, "name"];
    const why: string[] = [];
    const earlier = first.get(name);
    if (earlier)
      why.push(
        `the instance at line ${ctx.lineOf(earlier)} has the same name (\`--only\` by this name reaches only that one, and no output tells the two apart)`,
      );
    else first.set(name, at);
    if (name.includes(",")) why.push(`it holds a comma, where \`--only\` splits its argument (${onlyLooksFor(name)})`);
    if (/^#\d+$/.test(name))
      why.push(
        "it is spelled like a place (`--only` reads `#` and digits as the instance listed there: `#2`, the second)",
      );
    if (name !== name.trim())
      why.push(`it has whitespace at its start or end, which \`--only\` trims (${onlyLooksFor(name)})`);
    if (why.length > 0)
      ctx.report("instance-name", at, `\`--only\` cannot name instance ${q(name)} safely: ${why.join("; ")}.`);
  });
}

/** What `--only <name>` would look for: the name's parts at commas, trimmed, the empty ones dropped. */
function onlyLooksFor(name: string): string {
  const parts = name
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  return parts.length === 0 ? "nothing is left to look for" : `it would look for ${parts.map(q).join(" and ")}`;
}

/**
 * `canWrite` conditions and the first process (src/runbook/can-write.ts): with several instances
 * only the first process's value is valid, and the runbook says which instance that is
 * (`startedFirst: true`, on the instance listed first); without it, no canWrite may be read.
 */
function checkCanWrite(ctx: LintContext): void {
  const rb = ctx.runbook;
  rb.instances.forEach((inst, i) => {
    if (i > 0 && typeof inst === "object" && inst.startedFirst === true)
      ctx.report(
        "started-first-not-first",
        ["instances", i, "startedFirst"],
        `Instance ${q(inst.name ?? inst.url)} is marked \`startedFirst\`, but it is listed ${ordinal(i + 1)}: the first process is the instance listed first.`,
        { key: true },
      );
  });
  const why = noCanWriteReason(rb);
  if (why === undefined) return;
  for (const { condition: body, at, kind } of conditions(ctx)) {
    const path = (body.expect ?? []).findIndex((e) => e.path === "canWrite");
    if (body.canWrite === undefined && path < 0) continue;
    ctx.report(
      "can-write-no-first-process",
      body.canWrite !== undefined ? [...at, "canWrite"] : [...at, "expect", path, "path"],
      `This ${kind} reads canWrite, but ${why}: it could never hold, and after commit it would keep application writes stopped until its timeout.`,
      { key: body.canWrite !== undefined },
    );
  }
}

const ordinal = (n: number): string =>
  `${n}${n % 10 === 2 && n % 100 !== 12 ? "nd" : n % 10 === 3 && n % 100 !== 13 ? "rd" : n % 10 === 1 && n % 100 !== 11 ? "st" : "th"}`;
