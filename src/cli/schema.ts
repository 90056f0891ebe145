/** `syncbook schema`: print the runbook JSON Schema (for editors and other tools). */
import { writeSync } from "node:fs";
import { ExitCode } from "../errors.js";

export async function main(): Promise<number> {
  const { RUNBOOK_SCHEMA } = await import("../runbook/schema-json.gen.js");
  writeSync(1, `${JSON.stringify(RUNBOOK_SCHEMA, null, 2)}\n`);
  return ExitCode.ok;
}
