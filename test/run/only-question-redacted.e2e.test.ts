/**
 * The question a targeted command asks names the `--only` it came from, redacted as every output:
 * an instance named by its URL with its password showed the password in the terminal's question
 * (an outside review; src/run/runner.ts builds the reason through the runbook's redactor).
 */
import { afterEach, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import { runRunbook } from "../../src/run/runner.js";
import { parseRunbook } from "../../src/runbook/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";
import { posts, runbookFor, runYaml, sim, START } from "../support/run.js";

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

it("a --only typed with an instance's password: the question shows it redacted, and nothing is sent on a no", async () => {
  const s = await sim({ instances: 2 });
  sims.push(s);
  const started = await runYaml(runbookFor(s, START));
  expect(started.result.exitCode).toBe(0);
  // sync0 has the pause already: the rest of it to sync1 alone is a targeted command, asked
  const r = await fetch(`${s.instances[0]!.url}/api/v1/pause`, { method: "POST", body: "{}" });
  expect(r.status).toBe(200);
  const withPassword = s.instances[1]!.url.replace("http://", "http://ops:pa55word@");
  const yaml = runbookFor(s, "  - { id: pause, pause: {} }\n").replace(s.instances[1]!.url, withPassword);
  expect(yaml).toContain(withPassword);
  const loaded = await parseRunbook(yaml, "rb.yaml", { env: {} });
  const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
  const questions: string[] = [];
  const events: RunEvent[] = [];
  const printed: string[] = [];
  const result = await runRunbook({
    loaded,
    registry,
    from: "pause",
    only: [withPassword],
    listeners: [(e) => void events.push(e)],
    print: (line: string) => void printed.push(line),
    prompt: {
      confirm: (message: string) => (questions.push(message), Promise.resolve(false)),
      stepChoice: () => Promise.reject(new Error("not asked")),
    },
  });
  expect(questions).toHaveLength(1);
  expect(questions[0]).toMatch(/^Send pause to sync1 only \(--only http:\/\/\*\*\*@127\.0\.0\.1:\d+\)\?$/);
  expect(result.exitCode).not.toBe(0);
  expect(posts(s, "pause")).toEqual([1, 0]);
  const everything = [...questions, ...printed, JSON.stringify(events)].join("\n");
  expect(everything).not.toContain("pa55word");
});
