/** syncbook's version has one home (src/version.ts): `--version` and every run's record say the package's. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SYNCBOOK_VERSION } from "../../src/version.js";
import { CLI } from "../support/run.js";

describe("the version", () => {
  const pkg = JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8")) as { version: string };

  it("is package.json's", () => {
    expect(SYNCBOOK_VERSION).toBe(pkg.version);
  });

  it("is what `syncbook --version` prints", () => {
    expect(execFileSync(process.execPath, [CLI, "--version"], { encoding: "utf8" }).trim()).toBe(pkg.version);
  });
});
