/**
 * Several instances' errors in one line (src/api/errors.ts `errorsText`): a refusal 64 instances
 * gave in the same words is said once, with how many and which; distinct ones each with theirs,
 * in the order met; one instance's error reads as it always did.
 */
import { describe, expect, it } from "vitest";
import { ApiError, errorsText, ServiceError, TransportError } from "../../src/api/index.js";

const url = (i: number): string => `http://127.0.0.1:${27182 + i}`;
const refused = (i: number, words = "start body is missing sharding"): ServiceError =>
  new ServiceError(url(i), "start", "InvalidRequest", words, 400);

describe("errorsText", () => {
  it("one instance's error: its URL, then its words, as before", () => {
    expect(errorsText([refused(0)])).toBe(`${url(0)}: start refused: InvalidRequest: start body is missing sharding`);
  });

  it("the same words from 64 instances: said once, with how many, the first three and how many more", () => {
    const all = Array.from({ length: 64 }, (_, i) => refused(i));
    expect(errorsText(all)).toBe(
      `64 instances (${url(0)}, ${url(1)}, ${url(2)} and 61 more): start refused: InvalidRequest: start body is missing sharding`,
    );
  });

  it("distinct words each with their instances, in the order met; a transport failure is words of its own", () => {
    const down = new TransportError(url(5), "start", "connect", "connection refused (ECONNREFUSED)", {
      requestSent: false,
    });
    expect(errorsText([refused(0), refused(1, "other"), down, refused(2), refused(3, "other")])).toBe(
      [
        `2 instances (${url(0)}, ${url(2)}): start refused: InvalidRequest: start body is missing sharding`,
        `2 instances (${url(1)}, ${url(3)}): start refused: InvalidRequest: other`,
        `${url(5)}: start failed: connection refused (ECONNREFUSED)`,
      ].join("; "),
    );
  });

  it("three instances are all named", () => {
    expect(errorsText([refused(0), refused(1), refused(2)])).toBe(
      `3 instances (${url(0)}, ${url(1)}, ${url(2)}): start refused: InvalidRequest: start body is missing sharding`,
    );
  });

  it("an error whose words do not begin with its URL is said after it, whole", () => {
    class Bare extends ApiError {
      readonly kind = "service";
    }
    expect(errorsText([new Bare("start refused: no", url(0), "start")])).toBe(`${url(0)}: start refused: no`);
    expect(errorsText([new Bare("x", url(0), "start"), new Bare("x", url(1), "start")])).toBe(
      `2 instances (${url(0)}, ${url(1)}): x`,
    );
  });

  it("every: each instance named (a split command: those that refused are the ones to complete it on)", () => {
    const all = Array.from({ length: 5 }, (_, i) => refused(i));
    expect(errorsText(all, { every: true })).toBe(
      `5 instances (${[0, 1, 2, 3, 4].map(url).join(", ")}): start refused: InvalidRequest: start body is missing sharding`,
    );
  });
});
