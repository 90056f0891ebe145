/** How the journal reader refuses a journal it cannot trust, for the journal tests. */
import { expect } from "vitest";
import { UserError } from "../../src/errors.js";
import { readJournalState } from "../../src/journal/index.js";
import { traitsOf } from "../../src/steps/index.js";

/** The UserError (exit code 2) reading `file` refuses with; the test fails if it reads or throws anything else. */
export async function refusal(file: string): Promise<UserError> {
  const err: unknown = await readJournalState(file, traitsOf).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UserError);
  expect((err as UserError).exitCode).toBe(2);
  return err as UserError;
}
