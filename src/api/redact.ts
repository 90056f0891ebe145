/** Excerpts of answer bodies for error messages: redacted, one line, short. */
import { stripUserinfo } from "../redact.js";

/** The first bytes of an answer body, redacted (before it is cut) and shown on one line, for error messages. */
export function bodyExcerpt(text: string, max = 120, redact: (text: string) => string = stripUserinfo): string {
  const oneLine = redact(text).replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}
