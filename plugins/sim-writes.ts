/**
 * `sim-writes`: the simulator's application write switch, for rehearsals. Stops (or starts) the
 * simulated source application's writes with `POST <control>/sim/writes {"enabled": false}`;
 * its undo switches them back. Against a real service the request fails (404): it is a
 * rehearsal-only hook.
 *
 * ```yaml
 * - stopWrites: { use: sim-writes }                        # the first instance's /sim/writes
 * - stopWrites: { use: sim-writes, with: { url: http://127.0.0.1:27182 } }
 * - stopWrites: { use: sim-writes, check: { use: sim-writes-stopped } }   # re-read before commit
 * ```
 *
 * `sim-writes-stopped` reads the switch (`GET <control>/sim/writes`) and fails while the simulated
 * application writes: the `check` of a stopWrites, the model of a real write-switch read.
 */
import { definePlugin, curlCommand, sendHttp, durationOr, DURATION_SCHEMA } from "../src/plugin/public.js";

export interface SimWritesOptions {
  url?: string;
  enabled?: boolean;
  rate?: number;
  timeout?: string | number;
}

/** `http://h:p`, `http://h:p/sim` or `http://h:p/sim/writes` → the writes switch URL. */
export function writesUrl(base: string): string {
  const u = new URL(base);
  const path = u.pathname.replace(/\/+$/, "");
  u.pathname = path.endsWith("/sim/writes") ? path : path.endsWith("/sim") ? `${path}/writes` : `${path}/sim/writes`;
  u.search = "";
  return u.href;
}

/** Where the switch is: both hooks take it the same way. */
const CONTROL_URL = {
  type: "string",
  format: "uri",
  description:
    "The simulator's control URL: any simulated instance's base URL (`http://127.0.0.1:27182`), its `/sim`, or `/sim/writes`. Default: the runbook's first instance.",
} as const;

export default definePlugin<SimWritesOptions>({
  name: "sim-writes",
  description:
    "Switch the simulator's source application writes off (or on); the undo switches them back. `sim-writes-stopped` reads the switch.",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    properties: {
      url: CONTROL_URL,
      enabled: {
        type: "boolean",
        default: false,
        description: "Writes on (true) or off (false, the default: stop writes).",
      },
      rate: { type: "number", minimum: 0, description: "Also set the application's write rate (writes per second)." },
      timeout: { ...DURATION_SCHEMA, description: "Time limit of the request (default 10s)." },
    },
  },
  hooks: {
    "sim-writes": {
      // under stopWrites it must switch writes off, as its undo on: lint and the runner check it
      writes: (o) => (o.enabled === true ? "on" : "off"),
      command: (o, where) => {
        const base = o.url ?? where.instances[0];
        if (base === undefined) return undefined;
        const enabled = o.enabled ?? false;
        return curlCommand({
          method: "POST",
          url: writesUrl(base),
          body: o.rate === undefined ? { enabled } : { enabled, rate: o.rate },
        });
      },
      run: async (ctx) => {
        const base = ctx.options.url ?? ctx.fleet[0]?.instance.url;
        if (!base) throw new Error("no `url` given and the runbook has no instance to take it from");
        const url = writesUrl(base);
        const enabled = ctx.options.enabled ?? false;
        const timeoutMs = durationOr(ctx.options.timeout, 10_000);
        const send = (on: boolean, signal: AbortSignal, rate?: number) =>
          sendHttp({
            url,
            method: "POST",
            body: rate === undefined ? { enabled: on } : { enabled: on, rate },
            expectStatus: "2xx",
            timeoutMs,
            signal,
            redact: ctx.redact,
            log: ctx.log,
          });
        await send(enabled, ctx.signal, ctx.options.rate);
        return {
          summary: `simulated application writes ${enabled ? "on" : "off"}`,
          undo: async (signal) => {
            await send(!enabled, signal);
          },
        };
      },
    },
    "sim-writes-stopped": {
      description: "Succeed only while the simulated application writes nothing (a read: it changes nothing).",
      optionsSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        additionalProperties: false,
        properties: {
          url: CONTROL_URL,
          timeout: { ...DURATION_SCHEMA, description: "Time limit of the request (default 10s)." },
        },
      },
      run: async (ctx) => {
        const base = ctx.options.url ?? ctx.fleet[0]?.instance.url;
        if (!base) throw new Error("no `url` given and the runbook has no instance to take it from");
        const url = writesUrl(base);
        const answer = await sendHttp({
          url,
          method: "GET",
          expectStatus: "2xx",
          timeoutMs: durationOr(ctx.options.timeout, 10_000),
          signal: ctx.signal,
          redact: ctx.redact,
          log: ctx.log,
        });
        let writes: { enabled?: unknown; ratePerSecond?: unknown } | undefined;
        try {
          writes = (JSON.parse(answer.text) as { writes?: typeof writes }).writes;
        } catch {
          // judged below: an answer that does not say is not "stopped"
        }
        if (writes === undefined || typeof writes.enabled !== "boolean")
          throw new Error(`GET ${url}: the answer does not say whether the application writes`);
        if (writes.enabled && writes.ratePerSecond !== 0)
          throw new Error(`the simulated application writes (${String(writes.ratePerSecond)}/s)`);
        return { summary: "the simulated application writes nothing", value: { writes } };
      },
    },
  },
});
