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
 * As a stopWrites `check:` (a read of the switch), the answer's JSON body is what the check's
 * `expect` compares (`check: { use: http, with: { method: GET, url: … }, expect: [{ path: enabled,
 * equals: false }], until: 2m }`); `expectJson` holds it to equal values in one read.
 *
 * Header values, the query string and `${env.*}` values never appear in logs or errors.
 * Retries (transport errors, timeouts, 408, 429, 5xx) repeat the request: use them only for
 * requests that are safe to repeat (a PUT of a flag value, not "toggle").
 */
import { isDeepStrictEqual } from "node:util";
import {
  definePlugin,
  describeTarget,
  curlCommand,
  sendHttp,
  durationOr,
  DURATION_SCHEMA,
} from "../src/plugin/public.js";

export interface HttpHookOptions {
  url: string;
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers?: Record<string, string>;
  body?: unknown;
  expectStatus?: number | string | (number | string)[];
  expectJson?: Record<string, unknown>;
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
      expectJson: {
        type: "object",
        minProperties: 1,
        description:
          "What the answer's JSON body must hold: each key a dotted path (`writes.enabled`, `items.0.state`), each value what must be there (compared deeply). Any other answer fails the step: the way a stopWrites `check:` reads a switch over HTTP.",
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
    http: {
      command: (o) =>
        curlCommand({
          method: o.method ?? "POST",
          url: o.url,
          ...(o.headers ? { headers: o.headers } : {}),
          body: o.body,
        }),
      run: async (ctx) => {
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
        const target = describeTarget(o.method ?? "POST", o.url, ctx.redact);
        if (o.expectJson) {
          const wrong = jsonMismatch(answer.text, o.expectJson);
          if (wrong) throw new Error(ctx.redact(`${target} answered ${answer.status}, but ${wrong}`));
        }
        return {
          summary: `${target} answered ${answer.status}${o.expectJson ? ` with ${Object.keys(o.expectJson).join(", ")} as expected` : ""}${answer.attempts > 1 ? ` after ${answer.attempts} attempts` : ""}`,
          // a JSON answer, for a stopWrites check's `expect`
          ...jsonValue(answer.text),
        };
      },
    },
  },
});

function jsonValue(text: string): { value?: unknown } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return {};
  }
}

/** Why an answer's body does not hold what `expectJson` says (undefined: it does). */
export function jsonMismatch(text: string, expect: Record<string, unknown>): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "its body is not JSON";
  }
  for (const [path, want] of Object.entries(expect)) {
    let at: unknown = body;
    for (const key of path.split("."))
      at = at !== null && typeof at === "object" ? (at as Record<string, unknown>)[key] : undefined;
    if (!isDeepStrictEqual(at, want))
      return `${path} is ${at === undefined ? "absent" : JSON.stringify(at)} (expected ${JSON.stringify(want)})`;
  }
  return undefined;
}
