/**
 * Debian's Chromium for the browser checks, one home: where it is and the flags every check
 * starts it with (the report page's `scripts/browser-check.mjs`, the watch page's
 * `test/watch/watch.e2e.test.ts`): no sandbox (containers), no GPU, and nothing that reaches
 * the network on its own (QUIC, background networking, component updates, sync), a /tmp-backed
 * shared memory, no scrollbars in screenshots. `--headless` and the window size are each
 * caller's (puppeteer sets its own headless mode).
 */
import { existsSync } from "node:fs";

export const CHROMIUM_FLAGS: readonly string[] = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
  "--hide-scrollbars",
];

/** `$CHROMIUM`, else the first of Debian's and the usual paths that exists. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return [env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
    .filter((c): c is string => typeof c === "string" && c !== "")
    .find((c) => existsSync(c));
}
