/**
 * A real rehearsal's events, in process: the simulator (src/sim) and the runner (src/run) when
 * both are there. Used by test/report/rehearsal.test.ts and scripts/browser-check.mjs.
 * Resolves to { events, description } or { reason } while a real rehearsal cannot run yet.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { RunEvent } from "../../src/run/events.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

export type RehearsalResult = { events: RunEvent[]; description: string; reason?: undefined } | { reason: string; events?: undefined };

export async function rehearsalEvents(): Promise<RehearsalResult> {
  if (!existsSync(join(root, "src/run/index.ts"))) return { reason: "the runner (src/run/index.ts) is not there yet" };
  if (!existsSync(join(root, "src/sim/index.ts"))) return { reason: "the simulator (src/sim/index.ts) is not there yet" };
  const run = (await import(pathToFileURL(join(root, "src/run/index.ts")).href)) as Record<string, unknown>;
  if (typeof run.runRunbook !== "function") return { reason: "src/run/index.ts exports no runRunbook yet" };
  return { reason: "wiring to runRunbook pending" };
}
