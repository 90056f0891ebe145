/**
 * A real rehearsal's events, in process: `runbooks/rs-to-sharded.yaml` against the simulator
 * (src/sim, via `prepareRehearsal`), run by the runner (`runRunbook`, mode "rehearse", the
 * rehearsal's time scale, confirms answered yes) with a listener that keeps every event, exactly
 * as `syncbook rehearse` does minus the UI. Used by test/report/rehearsal.e2e.test.ts and
 * scripts/browser-check.mjs.
 *
 * Resolves to { events, description, result, verdict }, or { reason } when the rehearsal could
 * not run (the runbook does not lint clean, its plugins do not load, the run throws): the test
 * then fails on the reason rather than skipping.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { lintRunbook } from "../../src/lint/index.js";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import { prepareRehearsal, type Verdict } from "../../src/rehearse/index.js";
import type { ActiveFault, RequestCounts } from "../../src/sim/index.js";
import { runRunbook, type RunResult } from "../../src/run/index.js";
import type { RunEvent } from "../../src/events.js";
import { loadRunbook, parseRunbook } from "../../src/runbook/index.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

export const REHEARSAL_RUNBOOK = join(root, "runbooks/rs-to-sharded.yaml");

export type RehearsalResult =
  | {
      events: RunEvent[];
      description: string;
      result: RunResult;
      verdict: Verdict;
      /** What the simulator counted when the run ended: requests per instance and endpoint, and each fault's hits. */
      counts: RequestCounts;
      faults: ActiveFault[];
      reason?: undefined;
    }
  | { reason: string; events?: undefined };

export interface RehearsalEventsOptions {
  /** The runbook to rehearse (default runbooks/rs-to-sharded.yaml). */
  file?: string;
  /** Simulated seconds per wall second (default: the rehearsal's, 50). */
  timeScale?: number;
  /** Data to copy (default 2GiB, as `syncbook rehearse`). */
  data?: string;
  seed?: number;
  /** The runbook's text, when it differs from the file's (an adapted copy); `file` still names it. */
  text?: string;
  /** `--var` overrides. */
  vars?: Record<string, string | number | boolean>;
  /** Simulator faults (`syncbook rehearse --fault`), e.g. `http500=0.3@0/progress`. */
  faults?: string[];
}

export async function rehearsalEvents(opts: RehearsalEventsOptions = {}): Promise<RehearsalResult> {
  const file = opts.file ?? REHEARSAL_RUNBOOK;
  const shown = file.startsWith(root) ? file.slice(root.length) : file;
  const loaded =
    opts.text !== undefined
      ? await parseRunbook(opts.text, file, { env: {}, ...(opts.vars ? { vars: opts.vars } : {}) })
      : await loadRunbook(file, { env: {}, ...(opts.vars ? { vars: opts.vars } : {}) });
  const errors = [...loaded.diagnostics, ...(loaded.runbook ? lintRunbook(loaded) : [])].filter(
    (d) => d.severity === "error",
  );
  if (!loaded.runbook || errors.length)
    return {
      reason: `${shown} does not lint clean: ${errors.map((d) => `${d.line}:${d.column} ${d.message}`).join("; ")}`,
    };

  const reh = await prepareRehearsal(loaded, {
    ...(opts.timeScale !== undefined ? { timeScale: opts.timeScale } : {}),
    ...(opts.data !== undefined ? { data: opts.data } : {}),
    ...(opts.faults ? { faults: opts.faults } : {}),
    seed: opts.seed ?? 1,
  });
  try {
    const { registry, diagnostics } = await loadRunbookPlugins(reh.loaded, { callKinds: PLUGIN_CALL_KINDS });
    const bad = diagnostics.filter((d) => d.severity === "error");
    if (bad.length) return { reason: `${shown}: plugin problems: ${bad.map((d) => d.message).join("; ")}` };
    const events: RunEvent[] = [];
    const t0 = performance.now();
    const result = await runRunbook({
      loaded: reh.loaded,
      registry,
      mode: "rehearse",
      timeScale: reh.timeScale,
      yes: true,
      env: {},
      listeners: [(e) => void events.push(e)],
      // the runbook's notify step: not the test's output
      print: () => undefined,
    });
    const wallMs = performance.now() - t0;
    // before the verdict, which reads the verifier itself
    const counts = reh.sim.control.counts();
    const faults = reh.sim.control.faults();
    const verdict = await reh.verdict(result);
    const description = `${shown}, ${reh.sim.instances.length} instance(s), time ×${reh.timeScale}, outcome ${result.outcome}, ${verdict.committed}/${verdict.instances} committed, ${(wallMs / 1000).toFixed(1)} s`;
    return { events, description, result, verdict, counts, faults };
  } catch (err) {
    return { reason: `the rehearsal of ${shown} threw: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    await reh.close();
  }
}
