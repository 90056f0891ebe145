/** `syncbook schema`: print the runbook JSON Schema (for editors and other tools). */
import { ExitCode } from "../errors.js";

export async function main(): Promise<number> {
  const { RUNBOOK_SCHEMA } = await import("../runbook/schema-json.gen.js");
  const { writeOut } = await import("./lint.js");
  writeOut(`${JSON.stringify(RUNBOOK_SCHEMA, null, 2)}\n`);
  return ExitCode.ok;
}
