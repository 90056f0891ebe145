/**
 * Shared helpers of the simulator tests. Most tests freeze the clock (`timeScale: 0`) and move
 * it with `control.advance(seconds)`, so what they check does not depend on machine speed.
 */
import { startSimulator, type Simulator, type SimulatorOptions } from "../../src/sim/index.js";

export interface Answer {
  status: number;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test assertions read arbitrary fields
}

/** One HTTP call; the body is JSON-encoded unless it is already a string. */
export async function call(
  url: string,
  method = "GET",
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

export const RS_TO_SHARDED = { source: "cluster0", destination: "cluster1", sharding: { shardingEntries: [] } };

/** A simulator with a frozen clock (advance it with control.advance). Close it in afterEach. */
export function frozen(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ timeScale: 0, data: "1GiB", ...options });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary answer fields
export const progress = async (sim: Simulator, i = 0): Promise<any> =>
  (await call(`${sim.instances[i]!.url}/api/v1/progress`)).json;

export const post = (sim: Simulator, i: number, op: string, body: unknown = {}): Promise<Answer> =>
  call(`${sim.instances[i]!.url}/api/v1/${op}`, "POST", body);

/** Sends the same command to every instance (what the spec requires). */
export async function broadcast(sim: Simulator, op: string, body: unknown = {}): Promise<Answer[]> {
  return Promise.all(sim.instances.map((_, i) => post(sim, i, op, body)));
}

/** With the default model (1 GiB, one instance): pre-copy 3 s + copy 16 s; a margin for the backlog. */
export async function toCea(sim: Simulator, body: unknown = RS_TO_SHARDED): Promise<void> {
  await broadcast(sim, "start", body);
  sim.control.advance(40);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary answer fields
export const verifierProgress = async (sim: Simulator): Promise<any> =>
  (await call(`${sim.verifierUrl}/api/v1/progress`)).json.progress;

/** The invariants of the verifier's counters (documented in src/sim/verifier.ts). */
export function verifierInvariants(s: Record<string, number>): void {
  const sum = s.addedTasks! + s.processingTasks! + s.completedTasks! + s.failedTasks! + s.metadataMismatchTasks!;
  if (s.totalTasks !== sum) throw new Error(`totalTasks ${s.totalTasks} != sum ${sum}: ${JSON.stringify(s)}`);
  for (const [k, v] of Object.entries(s)) if (!Number.isInteger(v) || v < 0) throw new Error(`${k} = ${v}`);
}

/** Polls `check` every 10 ms until it holds (or throws after `ms`). */
export async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
