/** The step kinds: one module each; the runner looks a step's implementation up here. */
import type { StepKind } from "../runbook/types.js";
import type { StepContext } from "../run/context.js";
import * as assert from "./assert.js";
import * as commit from "./commit.js";
import * as confirm from "./confirm.js";
import * as hook from "./hook.js";
import { lifecycle } from "./lifecycle.js";
import * as notify from "./notify.js";
import * as plugin from "./plugin.js";
import * as sleep from "./sleep.js";
import * as start from "./start.js";
import * as stopWrites from "./stop-writes.js";
import * as verify from "./verify.js";
import * as waitFor from "./wait-for.js";

export type StepRunner = (ctx: StepContext) => Promise<void>;

export const STEPS: Record<StepKind | "plugin", StepRunner> = {
  start: start.run,
  waitFor: waitFor.run,
  verify: verify.run,
  stopWrites: stopWrites.run,
  commit: commit.run,
  assert: assert.run,
  confirm: confirm.run,
  notify: notify.run,
  hook: hook.run,
  sleep: sleep.run,
  pause: lifecycle("pause"),
  resume: lifecycle("resume"),
  reverse: lifecycle("reverse"),
  plugin: plugin.run,
};

export { describeCondition } from "./conditions.js";
