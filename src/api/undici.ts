/**
 * undici, loaded on first use. The step kinds (and with them the fleet and this client) are read
 * by `syncbook lint` for their titles and their place in lint's state model; lint must not pay
 * for loading the HTTP stack it never uses (DESIGN, start-up budget). A synchronous require keeps
 * `createFleet` synchronous, and works in the CLI bundle, where `import()` does not.
 */
import { createRequire } from "node:module";
import type * as Undici from "undici";

export function undici(): typeof Undici {
  return createRequire(import.meta.url)("undici") as typeof Undici;
}
