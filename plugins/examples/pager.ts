/**
 * An example plugin: a pager notifier (PagerDuty Events API v2 shape). Copy it into your
 * runbook repository as a starting point — it is not built in. In your repository, import from
 * the package instead: `import { definePlugin, sendHttp } from "syncbook";`.
 *
 * ```yaml
 * plugins: [./plugins/pager.ts]          # relative to the runbook
 * notify:
 *   - use: pager
 *     with: { routingKey: "${env.PAGER_ROUTING_KEY}" }
 *     on: [wait.slow, step.failed, hook.failed, run.finished]
 * ```
 *
 * Each notification becomes one event: `trigger` for warnings and worse (a stalled wait, a
 * failed step, a failed undo), `resolve` when the run finishes ok (so the page closes itself),
 * nothing for plain info. All events of one run share a `dedup_key`, so the on-call gets one
 * incident per cutover, not one per event.
 */
import { definePlugin, sendHttp } from "../../src/plugin/public.js";

interface PagerOptions {
  routingKey: string;
  url?: string;
  component?: string;
  group?: string;
  resolveOnSuccess?: boolean;
}

export default definePlugin<PagerOptions>({
  name: "pager",
  description: "Page the on-call (PagerDuty Events API v2) when a cutover stalls or fails.",
  // The options, as JSON Schema: `syncbook lint` checks every `with:` against it and points
  // at the offending line. Describe every property: editors show the descriptions.
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    required: ["routingKey"],
    properties: {
      routingKey: {
        type: "string",
        minLength: 1,
        description: "The integration's routing key. A secret: write `${env.NAME}`.",
      },
      url: {
        type: "string",
        format: "uri",
        default: "https://events.pagerduty.com/v2/enqueue",
        description: "Events API endpoint.",
      },
      component: { type: "string", description: "Component named in the incident (default: the runbook's name)." },
      group: { type: "string", description: "Logical group of the component, e.g. `databases`." },
      resolveOnSuccess: {
        type: "boolean",
        default: true,
        description: "Resolve the incident when the run finishes ok.",
      },
    },
  },
  notifiers: {
    // `ctx.options` is typed and already checked; `ctx.text` and `ctx.severity` describe the
    // notification; `ctx.signal` aborts at the notifier's time limit.
    pager: async (notification, ctx) => {
      const o = ctx.options;
      const succeeded = notification.type === "run.finished" && notification.outcome === "ok";
      let action: "trigger" | "resolve";
      if (succeeded) {
        if (o.resolveOnSuccess === false) return;
        action = "resolve";
      } else if (ctx.severity === "info") {
        ctx.log.debug(`not paging for: ${ctx.text}`);
        return;
      } else action = "trigger";
      await sendHttp({
        url: o.url ?? "https://events.pagerduty.com/v2/enqueue",
        method: "POST",
        expectStatus: [200, 202],
        retries: 2,
        timeoutMs: 10_000,
        signal: ctx.signal,
        redact: ctx.redact,
        body: {
          routing_key: o.routingKey,
          event_action: action,
          dedup_key: `syncbook/${ctx.runbook.name}`,
          payload: {
            summary: ctx.text.slice(0, 1024),
            source: "syncbook",
            severity: ctx.severity,
            component: o.component ?? ctx.runbook.name,
            ...(o.group ? { group: o.group } : {}),
            custom_details: { event: notification.type, runbook: ctx.runbook.file },
          },
        },
      });
      ctx.log.info(`${action === "trigger" ? "paged" : "resolved"}: ${ctx.text}`);
    },
  },
});
