/**
 * Errors a user can cause (bad input, refused interlock, unreachable instance).
 * The CLI prints `message` and `hint`, never a stack trace, and exits with `exitCode`.
 */
export class UserError extends Error {
  override readonly name = "UserError";
  constructor(
    message: string,
    readonly options: { hint?: string; exitCode?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
  get hint(): string | undefined {
    return this.options.hint;
  }
  get exitCode(): number {
    return this.options.exitCode ?? 1;
  }
}

/**
 * Exit codes shared by every command (README "Exit codes"; stable: wrappers branch on them).
 * `interlock` is apart from `failed` because it tells a wrapper something it can act on: the run
 * stopped *before* sending the refused command, because the fleet was not in a state where it is
 * safe (not IDLE for start, not canCommit or writes not stopped for commit, not one fleet…). The
 * fleet is as the previous steps left it; waiting or fixing the cause and running again (often
 * with --resume) is safe. A failed step (1) may have half-happened and needs a person to look.
 */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  interlock: 3,
  interrupted: 130,
} as const;

/** The message of anything thrown (an Error's message, else its text). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  // JSON.stringify gives undefined for undefined, functions and symbols
  return JSON.stringify(err) ?? typeof err;
}

/**
 * `err` as a command prints it, through the runbook's redactor (src/redact.ts): a message that
 * names a journal names a folder made of the runbook's name, which `${env.*}` may fill, or of a
 * `--journal-dir` holding a secret. A `UserError` comes back as a new one with its message and
 * hint redacted (same exit code); another error keeps its identity, its message and stack redacted.
 */
export function redactedError(err: unknown, redact: (text: string) => string): unknown {
  if (err instanceof UserError) {
    const message = redact(err.message);
    const hint = err.hint === undefined ? undefined : redact(err.hint);
    if (message === err.message && hint === err.hint) return err;
    return new UserError(message, { ...err.options, ...(hint === undefined ? {} : { hint }) });
  }
  if (err instanceof Error) {
    err.message = redact(err.message);
    if (err.stack !== undefined) err.stack = redact(err.stack);
  }
  return typeof err === "string" ? redact(err) : err;
}
