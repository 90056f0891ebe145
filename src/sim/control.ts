/**
 * The control API, under /sim/ only (never under /api/v1/, which is the contract's), served on
 * every instance port and on the verifier port, and the same operations in-process through
 * `Simulator.control`. Tests and `syncbook rehearse` use it; a rehearsal's stop-writes hook
 * calls `POST /sim/writes {"enabled":false}`.
 *
 *   GET    /sim                      this list
 *   GET    /sim/state                the whole world: time, writes, instances, verifier, fleetErrors, faults
 *   GET    /sim/counts               requests per instance and endpoint (`METHOD /path`); DELETE resets
 *   GET    /sim/writes               {"writes": {"enabled", "ratePerSecond"}}: the switch, read (a stopWrites `check`)
 *   POST   /sim/writes               {"enabled": bool, "rate": writes per second} (either or both)
 *   POST   /sim/ddl                  DDL on the source: {"type": "createIndexes" (the default) | "create" |
 *                                   "modify" | "dropIndexes" | "shardCollection" | "reshardCollection" |
 *                                   "refineCollectionShardKey" | "drop" | "rename" | "dropDatabase",
 *                                   "count": n (default 1)}; read by a verification in progress, it
 *                                   makes the verifier exit (--ddlHandling failAll) or, under
 *                                   warnMost, is counted in srcChangeStats.eventCounts and skipped
 *                                   (drop, rename, dropDatabase: exit either way)
 *   GET    /sim/clock                {"simSeconds", "timeScale"}
 *   POST   /sim/clock                {"timeScale": x} and/or {"advance": simulated seconds}
 *   GET    /sim/faults               the faults in force
 *   POST   /sim/faults               {"spec": "http500=0.2@1"} or {"specs": [...]} or a FaultSpec object
 *   DELETE /sim/faults               remove every fault;  DELETE /sim/faults/:id  remove one
 *   POST   /sim/instances/:i/down    the instance stops accepting connections
 *   POST   /sim/instances/:i/up      ... and comes back (a restart)
 *   POST   /sim/instances/:i/upgrade a live upgrade now (spec progress rule 4; refused from 1.11)
 *   POST   /sim/verifier/restart     a new verifier process (after it exited, or to start over) on the
 *                                   old one's metadata: {"clean": true} (the default, --clean: dropped
 *                                   when its first check arrives) or false (that check resumes it,
 *                                   and reads again the DDL the old one exited on: it exits again);
 *                                   {"newMetadata": true}: an empty metadata database;
 *                                   {"namespaces": "none"}: started without --verifyAll or
 *                                   --srcNamespace ("all": with --verifyAll; default: as before);
 *                                   {"ddlHandling": "failAll" | "warnMost"}: its --ddlHandling
 *                                   (default: as before)
 */
import { errorReply, type Reply } from "./replies.js";
import type { SimWorld } from "./world.js";
import { normalizeFault, parseFault, type FaultSpec } from "./faults.js";

export const CONTROL_ROUTES = [
  "GET /sim/state",
  "GET /sim/counts",
  "DELETE /sim/counts",
  "GET /sim/writes",
  "POST /sim/writes",
  "POST /sim/ddl",
  "GET /sim/clock",
  "POST /sim/clock",
  "GET /sim/faults",
  "POST /sim/faults",
  "DELETE /sim/faults",
  "DELETE /sim/faults/:id",
  "POST /sim/instances/:i/down",
  "POST /sim/instances/:i/up",
  "POST /sim/instances/:i/upgrade",
  "POST /sim/verifier/restart",
] as const;

const ok = (extra: Record<string, unknown> = {}): Reply => ({ status: 200, body: { success: true, ...extra } });
const bad = (description: string): Reply => errorReply(400, "InvalidRequest", description);

function parseObject(text: string, allowEmpty: boolean): Record<string, unknown> | Reply {
  if (text.trim() === "")
    return allowEmpty ? {} : errorReply(400, "BadJSON", "this control endpoint needs a JSON object body");
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return errorReply(400, "BadJSON", "the request body is not valid JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return bad("the request body must be a JSON object");
  return v as Record<string, unknown>;
}
const isReply = (v: unknown): v is Reply =>
  typeof v === "object" && v !== null && "status" in v && "body" in v && typeof (v as Reply).status === "number";

function unknownKeys(o: Record<string, unknown>, allowed: string[]): string | undefined {
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  return extra.length
    ? `unknown field(s) ${extra.map((k) => JSON.stringify(k)).join(", ")}; allowed: ${allowed.join(", ")}`
    : undefined;
}

/** Handles one /sim request. Never throws: every failure is a JSON error answer. */
export async function handleControl(world: SimWorld, method: string, path: string, text: string): Promise<Reply> {
  try {
    return await route(world, method, path, text);
  } catch (err) {
    return bad((err as Error)?.message ?? String(err));
  }
}

async function route(world: SimWorld, method: string, path: string, text: string): Promise<Reply> {
  const notAllowed = (allowed: string): Reply =>
    errorReply(405, "MethodNotAllowed", `${path} accepts ${allowed}, not ${method}`);
  if (path === "/sim" || path === "/sim/") return method === "GET" ? ok({ routes: CONTROL_ROUTES }) : notAllowed("GET");
  if (path === "/sim/state") return method === "GET" ? ok({ state: world.state() }) : notAllowed("GET");
  if (path === "/sim/counts") {
    if (method === "GET") return ok({ counts: world.counts() });
    if (method === "DELETE") {
      world.resetCounts();
      return ok();
    }
    return notAllowed("GET, DELETE");
  }
  if (path === "/sim/writes") {
    if (method === "GET") {
      const w = world.state().writes;
      return ok({ writes: { enabled: w.enabled, ratePerSecond: w.ratePerSecond } });
    }
    if (method !== "POST") return notAllowed("GET, POST");
    const o = parseObject(text, false);
    if (isReply(o)) return o;
    const extra = unknownKeys(o, ["enabled", "rate"]);
    if (extra) return bad(extra);
    if (o.enabled === undefined && o.rate === undefined)
      return bad('give "enabled" (boolean) and/or "rate" (writes per second)');
    return ok({ writes: world.setWrites(o) });
  }
  if (path === "/sim/ddl") {
    if (method !== "POST") return notAllowed("POST");
    const o = parseObject(text, true);
    if (isReply(o)) return o;
    const extra = unknownKeys(o, ["type", "count"]);
    if (extra) return bad(extra);
    return ok(world.ddl(o));
  }
  if (path === "/sim/clock") {
    if (method === "GET") return ok({ simSeconds: world.clock.now(), timeScale: world.clock.timeScale });
    if (method !== "POST") return notAllowed("GET, POST");
    const o = parseObject(text, false);
    if (isReply(o)) return o;
    const extra = unknownKeys(o, ["timeScale", "advance"]);
    if (extra) return bad(extra);
    if (o.timeScale === undefined && o.advance === undefined)
      return bad('give "timeScale" and/or "advance" (simulated seconds)');
    if (o.timeScale !== undefined && typeof o.timeScale !== "number") return bad("timeScale must be a number");
    if (o.advance !== undefined && typeof o.advance !== "number")
      return bad("advance must be a number of simulated seconds");
    if (typeof o.timeScale === "number") world.setTimeScale(o.timeScale);
    if (typeof o.advance === "number") world.advance(o.advance);
    return ok({ simSeconds: world.clock.now(), timeScale: world.clock.timeScale });
  }
  if (path === "/sim/faults") {
    if (method === "GET") return ok({ faults: world.faults() });
    if (method === "DELETE") {
      world.clearFaults();
      return ok();
    }
    if (method !== "POST") return notAllowed("GET, POST, DELETE");
    const o = parseObject(text, false);
    if (isReply(o)) return o;
    let specs: (string | FaultSpec)[];
    if (typeof o.spec === "string" && Object.keys(o).length === 1) specs = [o.spec];
    else if (Array.isArray(o.specs) && Object.keys(o).length === 1 && o.specs.every((s) => typeof s === "string"))
      specs = o.specs;
    else if (typeof o.kind === "string") specs = [o as unknown as FaultSpec];
    else return bad('give {"spec": "http500=0.2@1"}, {"specs": [...]} or a fault object with "kind"');
    if (specs.length > 100) return bad("at most 100 faults at once");
    // Parse them all before adding any, so a bad one adds nothing.
    for (const s of specs) {
      if (typeof s === "string") parseFault(s);
      else normalizeFault(s, s.kind);
    }
    return ok({ faults: specs.map((s) => world.addFault(s)) });
  }
  if (path === "/sim/verifier/restart") {
    if (method !== "POST") return notAllowed("POST");
    const o = parseObject(text, true);
    if (isReply(o)) return o;
    const extra = unknownKeys(o, ["clean", "newMetadata", "namespaces", "ddlHandling"]);
    if (extra) return bad(extra);
    if (o.clean !== undefined && typeof o.clean !== "boolean") return bad('"clean" must be true or false');
    if (o.newMetadata !== undefined && typeof o.newMetadata !== "boolean")
      return bad('"newMetadata" must be true or false');
    if (o.namespaces !== undefined && o.namespaces !== "all" && o.namespaces !== "none")
      return bad('"namespaces" must be "all" or "none"');
    if (o.ddlHandling !== undefined && o.ddlHandling !== "failAll" && o.ddlHandling !== "warnMost")
      return bad('"ddlHandling" must be "failAll" or "warnMost"');
    await world.verifierHost.restart({
      ...(o.namespaces !== undefined ? { namespaces: o.namespaces } : {}),
      ...(o.ddlHandling !== undefined ? { ddlHandling: o.ddlHandling } : {}),
      ...(o.clean === false ? { clean: false } : {}),
      ...(o.newMetadata === true ? { newMetadata: true } : {}),
    });
    return ok();
  }
  const one = /^\/sim\/faults\/(\d{1,9})$/.exec(path);
  if (one) {
    if (method !== "DELETE") return notAllowed("DELETE");
    return world.removeFault(Number(one[1])) ? ok() : errorReply(404, "NotFound", `no fault with id ${one[1]}`);
  }
  const inst = /^\/sim\/instances\/(\d{1,6})\/(down|up|upgrade)$/.exec(path);
  if (inst) {
    if (method !== "POST") return notAllowed("POST");
    const i = Number(inst[1]);
    if (i >= world.instances.length)
      return errorReply(404, "NotFound", `there is no instance ${i} (the fleet has ${world.instances.length})`);
    if (inst[2] === "down") await world.down(i);
    else if (inst[2] === "up") await world.up(i);
    else world.liveUpgrade(i);
    return ok();
  }
  return errorReply(404, "NotFound", `no such control endpoint: ${method} ${path.slice(0, 200)} (GET /sim lists them)`);
}
