/**
 * `http`: a hook that sends one HTTP request (undici), e.g. to switch a feature flag or drain a
 * load balancer before commit.
 *
 * ```yaml
 * - stopWrites:
 *     use: http
 *     with:
 *       method: PUT
 *       url: https://flags.example.com/api/flags/sales-writes
 *       headers: { Authorization: "Bearer ${env.FLAGS_TOKEN}" }
 *       body: { enabled: false }
 *       expectStatus: [200, 204]
 *       retries: 2
 *       timeout: 10s
 *     undo: { use: http, with: { method: PUT, url: https://flags.example.com/api/flags/sales-writes, headers: { Authorization: "Bearer ${env.FLAGS_TOKEN}" }, body: { enabled: true } } }
 * ```
 *
 * Header values, the query string and `${env.*}` values never appear in logs or errors.
 * Retries (transport errors, timeouts, 408, 429, 5xx) repeat the request: use them only for
 * requests that are safe to repeat (a PUT of a flag value, not "toggle").
 */
import { definePlugin, describeTarget, sendHttp, durationOr, DURATION_SCHEMA } from "../src/plugin/public.js";

export interface HttpHookOptions {
  url: string;
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers?: Record<string, string>;
  body?: unknown;
  expectStatus?: number | string | (number | string)[];
  retries?: number;
  retryDelay?: string | number;
  timeout?: string | number;
}

const STATUS = {
  anyOf: [
    { type: "integer", minimum: 100, maximum: 599 },
    { type: "string", pattern: "^[1-5]([0-9]{2}|xx)$" },
  ],
};

export default definePlugin<HttpHookOptions>({
  name: "http",
  description: "Send one HTTP request; fail the step unless the answer has the expected status.",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: {
      url: {
        type: "string",
        format: "uri",
        description:
          "Request URL (http or https). May carry `${env.*}` secrets; the query string is never logged. A user and password in it (https://user:pass@host/...) are sent as basic auth. A value spliced into the query string is not encoded: URL-encode it first.",
      },
      method: {
        enum: ["GET", "POST", "PUT", "PATCH", "DELETE"],
        default: "POST",
        description: "HTTP method (default POST).",
      },
      headers: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "Request headers; values may carry `${env.*}` secrets and are never logged.",
      },
      body: {
        description: "Request body: a string is sent as is, anything else as JSON (content-type application/json).",
      },
      expectStatus: {
        description: "Accepted status: a code (204), a class (`2xx`), or a list (default `2xx`).",
        anyOf: [STATUS, { type: "array", minItems: 1, items: STATUS }],
      },
      retries: {
        type: "integer",
        minimum: 0,
        maximum: 10,
        default: 0,
        description:
          "Extra attempts after a transport error, a timeout, 408, 429 or 5xx (default 0). Only for requests that are safe to repeat.",
      },
      retryDelay: { ...DURATION_SCHEMA, description: "Pause before the first retry, doubled each time (default 1s)." },
      timeout: {
        ...DURATION_SCHEMA,
        description: "Time limit of one attempt (default 30s); the step's timeout bounds all attempts.",
      },
    },
  },
  hooks: {
    http: async (ctx) => {
      const o = ctx.options;
      const answer = await sendHttp({
        url: o.url,
        method: o.method ?? "POST",
        headers: o.headers ?? {},
        body: o.body,
        expectStatus: o.expectStatus,
        retries: o.retries ?? 0,
        retryDelayMs: durationOr(o.retryDelay, 1000),
        timeoutMs: durationOr(o.timeout, 30_000),
        signal: ctx.signal,
        redact: ctx.redact,
        log: ctx.log,
      });
      return {
        summary: `${describeTarget(o.method ?? "POST", o.url, ctx.redact)} answered ${answer.status}${answer.attempts > 1 ? ` after ${answer.attempts} attempts` : ""}`,
      };
    },
  },
});
