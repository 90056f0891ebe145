/**
 * When the destination takes writes (src/runbook/can-write.ts), enumerated over every minor
 * version around the 1.11–1.19 rule and every write-blocking and verification value a start can
 * carry. The page (mongodb/docs content/mongosync/v1.11/source/reference/cutover-process.txt):
 * "If you set enableUserWriteBlocking to either "sourceAndDestination" or "destinationOnly", or the
 * verifier is turned on, you can write to the destination after /progress reports canWrite: true.
 * Otherwise, wait until the state is COMMITTED." The verifier can be off whatever the start says
 * (docs-cluster-to-cluster-sync v1.13, includes/opts/disableVerification.rst and
 * includes/fact-verification-support-1.9.0.rst): without write blocking, COMMITTED.
 */
import { describe, expect, it } from "vitest";
import { committedBeforeWrites, destinationWrites } from "../../src/runbook/index.js";
import type { StartRequest } from "../../src/runbook/types.js";

const VERSIONS = [
  "1.8.0",
  "1.9.0",
  "1.10.0",
  "1.11.0",
  "1.12.3",
  "1.13.0",
  "1.14.0",
  "1.17.2",
  "1.19.9",
  "1.20.0",
  "1.21.0",
  "1.22.0",
];
const inRule = (v: string): boolean =>
  ["1.11", "1.12", "1.13", "1.14", "1.17", "1.19"].some((m) => v.startsWith(`${m}.`));
const BLOCKING: (StartRequest["enableUserWriteBlocking"] | undefined)[] = [
  undefined,
  true,
  false,
  "sourceAndDestination",
  "destinationOnly",
  "none",
];
const VERIFICATION: (StartRequest["verification"] | undefined)[] = [undefined, { enabled: true }, { enabled: false }];
const start = (
  wb: StartRequest["enableUserWriteBlocking"] | undefined,
  verification: StartRequest["verification"] | undefined,
): StartRequest => ({
  source: "cluster0",
  destination: "cluster1",
  ...(wb !== undefined ? { enableUserWriteBlocking: wb } : {}),
  ...(verification !== undefined ? { verification } : {}),
});

describe("when the destination takes writes: canWrite of the first process, or COMMITTED", () => {
  it("every version × write blocking × verification: COMMITTED exactly where 1.11–1.19 starts without write blocking, whatever the start says of the verifier", () => {
    for (const v of VERSIONS)
      for (const wb of BLOCKING)
        for (const ver of VERIFICATION) {
          const body = start(wb, ver);
          const late = committedBeforeWrites({ serviceVersion: v }, body);
          const off = wb === false || wb === "none";
          const label = `${v} ${JSON.stringify(wb)} ${JSON.stringify(ver)}`;
          expect(late !== undefined, label).toBe(inRule(v) && off);
          expect(destinationWrites({ serviceVersion: v, instances: ["http://a:1"] }, body), label).toEqual(
            late ? { on: "committed", why: late } : { on: "canWrite", instance: 0 },
          );
        }
  });

  it("says why: the start's own verifier setting, or that the runbook cannot tell", () => {
    expect(committedBeforeWrites({ serviceVersion: "1.17.0" }, start("none", { enabled: false }))).toBe(
      "on service 1.11–1.19 the start turns write blocking off, and its start turns the embedded verifier off: the cutover page says to write to the destination only once the state is COMMITTED",
    );
    for (const ver of [undefined, { enabled: true }])
      expect(committedBeforeWrites({ serviceVersion: "1.17.0" }, start(false, ver))).toMatch(
        /^on service 1\.11–1\.19 the start turns write blocking off, and whether the embedded verifier is on cannot be told from the runbook \(the process option `--disableVerification`, or a live upgrade from before 1\.9, turns it off whatever the start request says\): /,
      );
  });

  it("no version declared: the rule is taken as holding where the start turns write blocking off (the service may be 1.11–1.19; an outside conformance read: it said nothing, and the window closed on canWrite)", () => {
    for (const wb of BLOCKING)
      for (const ver of VERIFICATION) {
        const late = committedBeforeWrites({}, start(wb, ver));
        expect(late !== undefined, `${JSON.stringify(wb)} ${JSON.stringify(ver)}`).toBe(wb === false || wb === "none");
      }
    expect(committedBeforeWrites({}, start("none", { enabled: false }))).toBe(
      "the runbook declares no serviceVersion (it may drive service 1.11–1.19), and there the start turns write blocking off, and its start turns the embedded verifier off: the cutover page says to write to the destination only once the state is COMMITTED",
    );
  });

  it("no start in the runbook: nothing said (write blocking is on by default from 1.11)", () => {
    for (const v of [...VERSIONS, undefined])
      expect(committedBeforeWrites(v === undefined ? {} : { serviceVersion: v }, undefined)).toBeUndefined();
  });

  it('preExistingDestinationData: true, in the body or its x-passthrough, is no write blocking whatever enableUserWriteBlocking says (the start page: "mongosync does not enable write-blocking when you enable this feature")', () => {
    const pre = (
      where: "body" | "passthrough",
      wb: StartRequest["enableUserWriteBlocking"] | undefined,
    ): StartRequest =>
      where === "body"
        ? { ...start(wb, undefined), preExistingDestinationData: true }
        : { ...start(wb, undefined), "x-passthrough": { preExistingDestinationData: true } };
    for (const v of [...VERSIONS, undefined])
      for (const wb of BLOCKING)
        for (const where of ["body", "passthrough"] as const) {
          const late = committedBeforeWrites(v === undefined ? {} : { serviceVersion: v }, pre(where, wb));
          expect(late !== undefined, `${String(v)} ${JSON.stringify(wb)} ${where}`).toBe(v === undefined || inRule(v));
        }
    expect(committedBeforeWrites({ serviceVersion: "1.17.0" }, pre("body", "sourceAndDestination"))).toMatch(
      /^on service 1\.11–1\.19 the start sets `preExistingDestinationData: true`, with which the service enables no write blocking \(its default mode becomes "none"\), and whether the embedded verifier is on cannot be told/,
    );
    // false is no claim: the rule of write blocking alone
    expect(
      committedBeforeWrites(
        { serviceVersion: "1.17.0" },
        { ...start(undefined, undefined), preExistingDestinationData: false },
      ),
    ).toBeUndefined();
  });

  it("several instances: the first process only where declared, else COMMITTED whatever the start", () => {
    const rb = (first: string | { url: string; startedFirst: true }) => ({
      serviceVersion: "1.22.0",
      instances: [first, "http://b:2"],
    });
    expect(destinationWrites(rb({ url: "http://a:1", startedFirst: true }), start(undefined, undefined))).toEqual({
      on: "canWrite",
      instance: 0,
    });
    expect(destinationWrites(rb("http://a:1"), start(undefined, undefined))).toMatchObject({ on: "committed" });
    expect(
      destinationWrites(
        { ...rb({ url: "http://a:1", startedFirst: true }), serviceVersion: "1.15.0" },
        start("none", { enabled: true }),
      ),
    ).toMatchObject({ on: "committed", why: expect.stringMatching(/cannot be told from the runbook/) });
  });
});
