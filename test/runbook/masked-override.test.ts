/**
 * A `vars` override holding `***` (the mask every output shows a secret as) is refused by the
 * loader, for every caller: the CLI's `parseVars` refuses `--var k=***` first, but a library caller
 * that pasted an offer's masked value would pass the undo checks, which compare values masked
 * alike on both sides, and undo with the text `***` where the hook ran with the secret.
 */
import { describe, expect, it } from "vitest";
import { loadRunbook, parseRunbook } from "../../src/runbook/index.js";

const TEXT = `runbook: 1
name: t
serviceVersion: "1.22.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "6.0" }
instances: [http://127.0.0.1:27182]
vars: { tag: blue, pin: 1 }
steps:
  - { id: on, hook: { use: stdout, with: { message: "\${vars.tag} \${vars.pin}" } } }
`;

describe("a vars override holding ***", () => {
  for (const value of ["***", "a***", "http://u:***@h/", "x *** y"])
    it(`is refused, whoever loads: ${JSON.stringify(value)}`, async () => {
      const err = await parseRunbook(TEXT, "rb.yaml", { env: {}, vars: { tag: value } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RangeError);
      expect((err as Error).message).toBe(
        "vars.tag: its value holds ***, which is how syncbook shows a secret, not a value: give the value the cutover's runs were given, or refer to it in the runbook as ${env.NAME}",
      );
    });

  it("is refused by loadRunbook too, before the file is parsed", async () => {
    await expect(
      loadRunbook("rb.yaml", { env: {}, bytes: new TextEncoder().encode(TEXT), vars: { pin: 2, tag: "***" } }),
    ).rejects.toThrow(/^vars\.tag: its value holds \*\*\*/);
  });

  it("leaves every other value alone: text with stars, numbers, booleans", async () => {
    const overrides: Record<string, string | number | boolean>[] = [
      { tag: "a**b" },
      { tag: "*" },
      { pin: 3 },
      { tag: "" },
      { tag: true },
    ];
    for (const vars of overrides) {
      const loaded = await parseRunbook(TEXT, "rb.yaml", { env: {}, vars });
      expect(loaded.runbook, JSON.stringify(vars)).toBeDefined();
      expect(loaded.vars).toMatchObject(vars);
    }
  });
});
