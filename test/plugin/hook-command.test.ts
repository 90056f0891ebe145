/**
 * Issue 39, point 1: after an undo failed, the run shows what the undo does as a command an
 * operator can paste. Each built-in hook's `command` is checked by pasting it into a real shell.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { curlCommand, shellCommand } from "../../src/plugin/public.js";
import shell from "../../plugins/shell.js";
import http from "../../plugins/http.js";
import simWrites from "../../plugins/sim-writes.js";

type Def = { command?: (o: never, where: { cwd: string; instances: readonly string[] }) => string | undefined };
const command = (def: unknown, o: unknown, instances: string[] = []): string | undefined =>
  (def as Def).command?.(o as never, { cwd: "/srv/run books", instances });

/** What a POSIX shell makes of a command line: the argv the program would get. */
function argvOf(line: string): string[] {
  const out = execFileSync("sh", ["-c", `set -- ${line}; for a in "$@"; do printf '%s\\0' "$a"; done`], {
    encoding: "utf8",
  });
  return out.split("\0").slice(0, -1);
}

describe("a hook call as a command to paste", () => {
  it("shellCommand quotes every argument so that a shell hands it to the program as written", () => {
    const argv = ["node", "hooks/app writes.mjs", "on", "it's", "$HOME", "a;b|c", "*", "", "--x=1", "ünï"];
    expect(argvOf(shellCommand(argv))).toEqual(argv);
    expect(shellCommand(["node", "-e", "process.exit(3)"])).toBe("node -e 'process.exit(3)'");
  });

  it("shell: from the runbook's folder (or its cwd), env values as *** (every one is a secret)", () => {
    expect(command(shell.hooks!.shell, { command: ["node", "hooks/app.mjs", "on"], env: { TOKEN: "x" } })).toBe(
      "cd '/srv/run books' && TOKEN=*** node hooks/app.mjs on",
    );
    expect(command(shell.hooks!.shell, { command: ["./on.sh"], cwd: "ops" })).toBe(
      "cd '/srv/run books/ops' && ./on.sh",
    );
  });

  it("http: curl with the method, the URL without its query, header values as *** but plain ones, the body as sent", () => {
    const line = command(http.hooks!.http, {
      method: "PUT",
      url: "https://flags.example.com/api/flags/w?token=abc",
      headers: { Authorization: "Bearer abc", Accept: "application/json" },
      body: { enabled: true },
    });
    expect(line).toBe(
      `curl -sS -X PUT 'https://flags.example.com/api/flags/w?***' -H 'Authorization: ***' -H 'Accept: application/json' -H 'content-type: application/json' --data-raw '{"enabled":true}'`,
    );
    expect(line).not.toContain("abc");
    expect(argvOf(line!)).toContain('{"enabled":true}');
    // no method: POST, as the hook sends; a string body as is
    expect(command(http.hooks!.http, { url: "http://h/x", body: "on" })).toBe(
      "curl -sS -X POST http://h/x --data-raw on",
    );
    expect(curlCommand({ url: "http://h/x" })).toBe("curl -sS -X POST http://h/x");
  });

  it("sim-writes: the switch of its url, or of the runbook's first instance; none without either", () => {
    expect(command(simWrites.hooks!["sim-writes"], { enabled: true }, ["http://127.0.0.1:27182"])).toBe(
      `curl -sS -X POST http://127.0.0.1:27182/sim/writes -H 'content-type: application/json' --data-raw '{"enabled":true}'`,
    );
    expect(command(simWrites.hooks!["sim-writes"], {})).toBeUndefined();
  });
});
