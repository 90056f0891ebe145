/**
 * Text from outside never reaches the terminal as control sequences (issue 42: a hook printed
 * ESC[1A ESC[2K and a fake "✔ Commit ok" over the real lines): hook output, plugin logs, service
 * error texts and runbook strings are drawn with every control character shown (`␛`, `␍`, `␇`),
 * through the one sanitizer (src/text.ts `terminalText`); syncbook's own colours and redraws stay.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { terminalText, terminalValue } from "../../src/text.js";
import { localServer, type LocalServer } from "../support/http-server.js";
import { inPty } from "../support/pty.js";
import { cli, sim, tempDir } from "../support/run.js";

const ESC = "\u001b";
const SPOOF = `${ESC}[1A${ESC}[2K✔ [5/5] Commit ok`;
// every kind of sequence a terminal obeys: CSI, OSC (a window title, BEL-terminated), a lone CR
// that returns to the line's start, backspace, the one-byte C1 CSI, and a bidi override
const NASTY = [SPOOF, `${ESC}]0;pwned\u0007`, "over\rwritten", "back\bspace", "\u009b2J", "\u202Eevil"];
/** What a terminal would obey: ESC, CR, BEL, BS, C1, bidi controls. */
// eslint-disable-next-line no-control-regex
const OBEYED = /[\u001b\r\u0007\b\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("terminalText: the one sanitizer", () => {
  it("shows every control character as one visible character, tabs kept, line feeds by choice", () => {
    expect(terminalText(SPOOF)).toBe("␛[1A␛[2K✔ [5/5] Commit ok");
    expect(terminalText(`${ESC}]0;pwned\u0007`)).toBe("␛]0;pwned␇");
    expect(terminalText("over\rwritten\tok")).toBe("over␍written\tok");
    expect(terminalText("a\u0000b\u007fc\u009bd\u202Ee\u2066f")).toBe("a␀b␡c\ufffdd\ufffde\ufffdf");
    expect(terminalText("one\ntwo")).toBe("one␊two");
    expect(terminalText("one\ntwo", { lines: true })).toBe("one\ntwo");
    // one for one: a caret under a source line stays where it was
    for (const s of NASTY) expect(terminalText(s)).toHaveLength(s.length);
    expect(terminalText("plain ✔ text")).toBe("plain ✔ text");
  });

  it("over a value: every string and key, copying only what changes", () => {
    const clean = { type: "log", message: "fine", list: ["a"], n: 1 };
    expect(terminalValue(clean)).toBe(clean);
    const dirty = { type: "log", message: SPOOF, nested: { [`k${ESC}`]: ["x", "\r"] }, n: 1 };
    const out = terminalValue(dirty);
    expect(out).toEqual({ type: "log", message: "␛[1A␛[2K✔ [5/5] Commit ok", nested: { "k␛": ["x", "␍"] }, n: 1 });
    expect(dirty.message).toBe(SPOOF);
  });
});

describe("hook output, plugin logs, service errors and runbook strings on a terminal", () => {
  const servers: LocalServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  const script = NASTY.map((s) => `console.log(${JSON.stringify(s)}); console.error(${JSON.stringify(s)});`).join(" ");

  async function runbook(dir: string): Promise<{ file: string; close(): Promise<void> }> {
    const s = await sim();
    // a hook target whose error page carries the spoof (the http hook quotes it in its failure)
    const target = await localServer({ status: 500, body: `<p>${SPOOF}</p>`, contentType: "text/html" });
    servers.push(target);
    const file = join(dir, "rb.yaml");
    writeFileSync(
      file,
      `runbook: 1
name: terminal
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "6.0" }
instances: [{ url: "${s.instances[0]!.url}", name: sync0 }]
defaults: { pollInterval: 50ms, timeout: 20s, requestTimeout: 2s }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - id: dump
    name: "Dump \\e[2K\\rthe logs"
    hook: { use: shell, with: { command: [${JSON.stringify(process.execPath)}, -e, ${JSON.stringify(script)}] } }
  - { id: flag, hook: { use: http, with: { url: "${target.url}/flag", method: PUT } } }
`,
    );
    return { file, close: () => s.close() };
  }

  it("the line renderer, the run's last word and the notify lines: no sequence a terminal obeys", async () => {
    const dir = tempDir();
    const rb = await runbook(dir);
    try {
      const r = await cli(["run", rb.file, "--renderer", "simple", "--yes"], { cwd: dir });
      expect(r.code, r.all).toBe(1);
      // every foreign text was drawn (NO_COLOR: syncbook itself draws no escape here)
      expect(r.all).toContain("stdout: ␛[1A␛[2K✔ [5/5] Commit ok");
      expect(r.all).toContain("stderr: ␛]0;pwned␇");
      // a lone CR ends a line of output (as readline reads it): never a return over the line drawn
      expect(r.all).toContain("stdout: written");
      expect(r.all).toContain("Dump ␛[2K␍the logs");
      expect(r.all).toMatch(/answered 500 \(<p>␛\[1A␛\[2K✔ \[5\/5\] Commit ok<\/p>\)/);
      expect(r.all).not.toMatch(OBEYED);
    } finally {
      await rb.close();
    }
  }, 60_000);

  it("the live view in a real terminal: its own redraws and colours, the hook's sequences shown", async () => {
    const dir = tempDir();
    const rb = await runbook(dir);
    try {
      const t = inPty(["run", rb.file, "--yes"], { cwd: dir });
      const r = await t.done;
      expect(r.code, r.output).toBe(1);
      // the live view draws with escapes of its own (colour, cursor) ...
      expect(r.output).toContain(`${ESC}[`);
      // ... never the hook's: its spoof and window title appear as text
      expect(r.output).not.toContain(SPOOF);
      expect(r.output).not.toContain(`${ESC}]0;pwned`);
      expect(r.output).toContain("␛[1A␛[2K");
    } finally {
      await rb.close();
    }
  }, 60_000);

  it("lint: a runbook line with a raw control character, and a finding quoting a bidi override: shown", async () => {
    const dir = tempDir();
    const file = join(dir, "raw.yaml");
    // past the first 4 KiB (where a control character means a binary file): the YAML parser refuses
    // it, at its line; and two steps share an id holding a right-to-left override
    const padding = `# ${"-".repeat(100)}\n`.repeat(45);
    writeFileSync(
      file,
      `runbook: 1\nname: raw\ninstances: [http://127.0.0.1:1]\n${padding}steps:\n  - { id: "a\u202Eb", notify: hi }\n  - { id: "a\u202Eb", notify: "x${ESC}[2Ky" }\n`,
    );
    const r = await cli(["lint", file], { cwd: dir });
    expect(r.code).not.toBe(0);
    expect(r.all).toContain("␛[2K");
    expect(r.all).not.toMatch(OBEYED);
    const ids = join(dir, "ids.yaml");
    writeFileSync(
      ids,
      `runbook: 1\nname: ids\ninstances: [http://127.0.0.1:1]\nsteps:\n  - { id: "a\u202Eb", notify: hi }\n  - { id: "a\u202Eb", notify: hi }\n`,
    );
    const d = await cli(["lint", ids], { cwd: dir });
    expect(d.all).toContain("`id`: `a\ufffdb` is not of the expected form");
    expect(d.all).not.toMatch(OBEYED);
  });

  it("an error naming a file: the name's control characters shown", async () => {
    const dir = tempDir();
    const r = await cli(["run", `x${ESC}[2K\ry.yaml`], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("x␛[2K␍y.yaml");
    expect(r.stderr).not.toMatch(OBEYED);
  });
});
