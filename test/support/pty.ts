/**
 * The real CLI in a real pseudo-terminal (util-linux `script`), for what only a terminal shows:
 * raw-mode keys (Ctrl-C at a prompt is a keypress, not SIGINT), the live view, the cursor.
 * Keys are written to the terminal as the operator types them.
 */
import { spawn } from "node:child_process";
import { onTestFinished } from "vitest";
import { CLI } from "./run.js";

export interface PtyRun {
  /** Resolves when the terminal's output (escape codes kept) matches. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<void>;
  /** Types into the terminal. */
  type(keys: string): void;
  /** The terminal's output so far. */
  output(): string;
  done: Promise<{ code: number | null; output: string }>;
  kill(signal: NodeJS.Signals): void;
  /** The pid of `script` (the CLI runs in a process below it). */
  pid: number;
}

export function inPty(
  args: string[],
  opts: { cwd: string; cols?: number; rows?: number; env?: Record<string, string> },
): PtyRun {
  const quote = (a: string): string => `'${a.replace(/'/g, "'\\''")}'`;
  const cmd = `stty cols ${opts.cols ?? 120} rows ${opts.rows ?? 40}; exec ${[process.execPath, CLI, ...args].map(quote).join(" ")}`;
  const env: Record<string, string | undefined> = { ...process.env, TERM: "xterm-256color", ...opts.env };
  // a terminal, not CI: the renderer is chosen as for an operator
  delete env.CI;
  delete env.GITHUB_ACTIONS;
  delete env.NO_COLOR;
  const child = spawn("script", ["-qfec", cmd, "/dev/null"], { cwd: opts.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  const onData = (d: Buffer): void => {
    out += d.toString();
    for (const w of [...waiters])
      if (w.re.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  let closed = false;
  const done = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on("close", (code) => {
      closed = true;
      resolve({ code, output: out });
    }),
  );
  // a test that fails before its run ends leaves no runner behind (a `run --step` waiting at its
  // question outlived a failed test): `script` passes SIGTERM on to the CLI below it, which stops
  // cleanly; SIGKILL if it has not ended in 5 s
  onTestFinished(async () => {
    if (closed) return;
    child.kill("SIGTERM");
    const late = setTimeout(() => child.kill("SIGKILL"), 5000);
    await done;
    clearTimeout(late);
  });
  return {
    waitFor: (re, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        if (re.test(out)) return resolve();
        const t = setTimeout(() => reject(new Error(`terminal never showed ${re}:\n${out}`)), timeoutMs);
        waiters.push({ re, resolve: () => (clearTimeout(t), resolve()) });
      }),
    type: (keys) => void child.stdin.write(keys),
    output: () => out,
    done,
    kill: (signal) => void child.kill(signal),
    pid: child.pid ?? -1,
  };
}
