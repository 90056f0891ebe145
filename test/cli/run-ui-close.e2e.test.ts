/**
 * The run's terminal output is closed on every way out of `execute` (src/cli/run.ts): a run that
 * threw left the list renderer open, its last steps pending and the cursor hidden (the 17:01
 * session's note). A step after the run (`how.after`) that throws stands in for any throw.
 */
import { afterEach, expect, it, vi } from "vitest";
import type * as UiModule from "../../src/ui/index.js";
import { execute } from "../../src/cli/run.js";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import { parseRunbook } from "../../src/runbook/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";
import { runbookFor, sim, START } from "../support/run.js";

const closes = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/ui/index.js", async (importOriginal) => {
  const real = await importOriginal<typeof UiModule>();
  return {
    ...real,
    createUi: (opts: Parameters<typeof real.createUi>[0]) => {
      const ui = real.createUi(opts);
      return {
        ...ui,
        close: async () => {
          closes.count++;
          await ui.close();
        },
      };
    },
  };
});

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

it("a run that throws after its steps still closes its output, once; one that ends closes it once", async () => {
  const s = await sim();
  sims.push(s);
  const loaded = await parseRunbook(runbookFor(s, START), "rb.yaml", { env: {} });
  const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    await expect(
      execute(loaded, registry, { renderer: "silent" }, [], [], {
        mode: "run",
        after: () => Promise.reject(new Error("thrown after the run")),
      }),
    ).rejects.toThrow("thrown after the run");
    expect(closes.count).toBe(1);
    closes.count = 0;
    // a sync RUNNING already: the start is refused, and the run ends as it says, closed once
    await execute(loaded, registry, { renderer: "silent" }, [], [], { mode: "run" });
    expect(closes.count).toBe(1);
  } finally {
    stderr.mockRestore();
  }
});
