/**
 * `notify`: a message to people. A string goes to stdout and to every top-level `notify:` entry
 * that listens to `notify`; `{use, with}` sends through that notifier. A failing notifier is
 * reported and never fails the cutover.
 */
import { sendNotification, type NotifyMessage } from "../plugin/index.js";
import type { NotifyBody } from "../runbook/types.js";
import { terminalText } from "../text.js";
import { keyed, notifyStandIn, type StepKindDef } from "./kit/define.js";
import { unchanged } from "./kit/sequence.js";

export const notify: StepKindDef<NotifyBody> = {
  body: keyed("notify"),
  title: (n) => (typeof n === "string" ? `Notify: ${n}` : `Notify (${n.use})`),
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: "notifier",
    failureStopsRun: undefined,
  },
  hookCall: undefined,
  writesCheck: undefined,
  undoTimeoutMs: undefined,
  condition: undefined,
  startRequest: undefined,
  plan: () => [],
  sequence: (_b, at) => unchanged(at),
  async run(ctx, n) {
    const { registry, ctx: pctx } = ctx.run.plugins;
    if (typeof n === "string") {
      const text = pctx.redact(n);
      ctx.run.emit("log", { level: "info", index: ctx.index, message: `notify: ${text}` });
      (pctx.print ?? ((l: string) => void process.stdout.write(`${l}\n`)))(terminalText(text));
      const message: NotifyMessage = { type: "notify", text, index: ctx.index, id: ctx.id, at: Date.now() };
      for (const entry of ctx.run.runbook.notify ?? []) {
        if (!entry.on.includes("notify")) continue;
        const r = await sendNotification(
          registry,
          entry.with ? { use: entry.use, with: entry.with } : { use: entry.use },
          message,
          pctx,
        );
        if (!r.ok) ctx.run.emit("log", { level: "warn", index: ctx.index, message: `${r.error}; the run goes on` });
      }
      return;
    }
    const withOpts = (n.with ?? {}) as Record<string, unknown>;
    const text = pctx.redact(typeof withOpts.text === "string" ? withOpts.text : (ctx.step.name ?? ctx.id));
    const r = await sendNotification(
      registry,
      { use: n.use, with: withOpts },
      { type: "notify", text, index: ctx.index, id: ctx.id, at: Date.now() },
      pctx,
    );
    if (!r.ok) ctx.run.emit("log", { level: "warn", index: ctx.index, message: `${r.error}; the run goes on` });
  },
  // nobody is paged by a rehearsal, with or without --keep-hooks
  rehearsal: (step, n) =>
    typeof n === "string" ? step : notifyStandIn(step, `notification through ${n.use} not sent`),
};
