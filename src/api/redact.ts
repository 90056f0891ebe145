/** Excerpts of answer bodies for error messages: redacted, one line, short. */
import { stripUserinfo } from "../redact.js";

/** The first bytes of an answer body, redacted and shown on one line, for error messages. */
export function bodyExcerpt(text: string, max = 120): string {
  const oneLine = stripUserinfo(text).replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}
