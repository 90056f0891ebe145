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

/** Exit codes shared by every command. */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  interrupted: 130,
} as const;

/** The message of anything thrown (an Error's message, else its text). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  // JSON.stringify gives undefined for undefined, functions and symbols
  return JSON.stringify(err) ?? typeof err;
}
