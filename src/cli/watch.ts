/**
 * `syncbook watch <runbook.yaml | journal folder> [--listen HOST:PORT] [--token-file FILE]`: a
 * read-only live page of the cutover for everyone on the bridge call (src/watch/). Runs until
 * Ctrl-C. Exit codes: 0 stopped by Ctrl-C, 2 usage (a target that is neither a runbook nor a
 * folder, a bad --listen, a non-loopback address without a token file, a port in use).
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import { keepRunningWithoutOutput, stderr, stdout } from "./execute.js";
import { lintCommand } from "../next-run.js";

export interface WatchCliOptions {
  listen?: string;
  tokenFile?: string;
  journalDir?: string;
  /** `--no-live`: the journal only; the fleet and the verifier are not read. */
  live?: boolean;
  /** `--no-notify`: the dead-man's switch off (the runbook's notifiers are not told of the runner's death). */
  notify?: boolean;
}

/** Tokens shorter than this are refused: the page is the cutover's state, on a network. */
const MIN_TOKEN_LENGTH = 16;

/** `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`, `:8080` (loopback), `8080` (loopback). */
export function parseListen(v: string | undefined): { host: string; port: number } {
  const text = v ?? "127.0.0.1:0";
  const m = /^(?:\[([^\]]+)\]|([^:]*))?:?(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535))
    throw new UserError(`--listen ${text}: expected HOST:PORT (for example 127.0.0.1:8080)`, {
      hint: "The default is 127.0.0.1 on a free port; any other address needs --token-file.",
      exitCode: ExitCode.usage,
    });
  return { host: m[1] ?? (m[2] || "127.0.0.1"), port };
}

function readToken(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new UserError(`--token-file ${file}: cannot read it (${errorMessage(err)})`, {
      hint: `Write a token to it first, for example: openssl rand -hex 24 > ${file} && chmod 600 ${file}`,
      exitCode: ExitCode.usage,
    });
  }
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token))
    throw new UserError(`--token-file ${file}: the token must be one word of at least ${MIN_TOKEN_LENGTH} characters`, {
      hint: `For example: openssl rand -hex 24 > ${file}`,
      exitCode: ExitCode.usage,
    });
  return token;
}

export async function main(target: string, opts: WatchCliOptions): Promise<number> {
  // the dead-man's switch must outlive its terminal: a closed pipe once crashed watch at the alarm's own line
  keepRunningWithoutOutput();
  const { host, port } = parseListen(opts.listen);
  const { isLoopback } = await import("../watch/index.js");
  if (!isLoopback(host) && opts.tokenFile === undefined)
    throw new UserError(`--listen ${host}: an address other than loopback needs a token`, {
      hint: "Give --token-file FILE (a file holding the token; never the token itself on the command line), or listen on 127.0.0.1.",
      exitCode: ExitCode.usage,
    });
  const token = opts.tokenFile !== undefined ? readToken(opts.tokenFile) : undefined;
  let isDir: boolean;
  try {
    isDir = statSync(target).isDirectory();
  } catch {
    throw new UserError(`${target}: no such file or folder`, {
      hint: "Pass the runbook (YAML) or its journal folder (.syncbook/<runbook name>).",
      exitCode: ExitCode.usage,
    });
  }
  const { traitsOf } = await import("../steps/index.js");
  const { userinfoRedactor } = await import("../redact.js");
  const { startWatch } = await import("../watch/index.js");
  let base: Parameters<typeof startWatch>[0];
  // ends the dead-man's switch's deliveries at Ctrl-C
  const stop = new AbortController();
  const common = {
    traits: traitsOf,
    host,
    port,
    ...(token !== undefined ? { token } : {}),
    ...(opts.live === false ? { noLive: true } : {}),
  };
  if (isDir) base = { ...common, folder: resolve(target), redact: userinfoRedactor };
  else {
    const { canWriteInstance, loadRunbook } = await import("../runbook/index.js");
    const { instancesOf } = await import("../runbook/types.js");
    const { journalDirFor } = await import("../journal/index.js");
    const first = await loadRunbook(target, { env: process.env });
    if (!first.runbook || first.diagnostics.some((d) => d.severity === "error"))
      throw new UserError(`${target} does not load, so its fleet and journal are not known`, {
        hint: `Fix it (${lintCommand(target)}), or pass its journal folder instead.`,
        exitCode: ExitCode.usage,
      });
    const folder = journalDirFor(target, first.runbook.name, opts.journalDir, { create: false });
    // the fleet the cutover runs on, as status reads it: its URLs made of the cutover's values
    const { loadAtCutoverFleet } = await import("../run/status.js");
    const { loaded, fleetVars } = await loadAtCutoverFleet(first, folder, (vars) =>
      loadRunbook(target, { env: process.env, vars }),
    );
    const rb = loaded.runbook!;
    // said only where watch reads the fleet itself (not with --no-live)
    const reads = opts.live !== false;
    if (reads && fleetVars?.read.length)
      stderr(`syncbook watch: the fleet read with the cutover's ${fleetVars.read.join(", ")}, as its journal has them`);
    if (reads && fleetVars?.secret.length)
      stderr(
        `syncbook watch: the fleet read with the runbook's ${fleetVars.secret.join(", ")}: the cutover ran with other values, secrets its journal does not hold, so this may be another fleet than the cutover's`,
      );
    const { readinessPlan } = await import("../steps/index.js");
    const { cutoverVarsFrom } = await import("../run/earlier.js");
    const plan = readinessPlan(rb);
    base = {
      ...common,
      folder,
      runbook: target,
      ...(opts.journalDir !== undefined ? { journalDir: opts.journalDir } : {}),
      runbookHash: loaded.hash,
      // a --from of it, changed since, under --allow-changed-runbook names the cutover's values
      goOnVars: (known, fromId) => cutoverVarsFrom(known, loaded, fromId),
      instances: instancesOf(rb),
      ...(canWriteInstance(rb) !== undefined ? { canWriteFrom: canWriteInstance(rb) } : {}),
      ...(rb.verifier ? { verifier: rb.verifier } : {}),
      ...plan,
      redact: loaded.redact,
    };
    // the dead-man's switch: the runbook's own notifiers, as the runner would load them
    if (opts.notify !== false && rb.notify?.length) {
      const { loadPluginsFor } = await import("./execute.js");
      const { DeadManSwitch } = await import("../watch/index.js");
      const registry = await loadPluginsFor(loaded, stderr);
      const deadMan = new DeadManSwitch({
        folder: base.folder,
        registry,
        entries: rb.notify.map((n) => ({ use: n.use, on: n.on, ...(n.with ? { with: n.with } : {}) })),
        ctx: {
          runbook: { name: rb.name, file: loaded.file },
          cwd: dirname(loaded.file),
          redact: loaded.redact,
          log: (level, message) => stderr(`syncbook watch: ${level}: ${loaded.redact(message)}`),
          mode: "watch",
          print: (line) => stderr(loaded.redact(line)),
        },
        say: (line) => stderr(loaded.redact(line)),
        signal: stop.signal,
      });
      if (deadMan.listeners) base = { ...base, deadMan };
    }
  }
  let watch: Awaited<ReturnType<typeof startWatch>>;
  try {
    watch = await startWatch({
      ...base,
      onAlarm: (v) => stderr(`syncbook watch: ${v.headline}${v.left.length ? ` (${v.left.join(", ")})` : ""}`),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EADDRNOTAVAIL" || code === "EACCES")
      throw new UserError(`--listen ${host}:${port}: cannot listen there (${code})`, {
        hint: "Pick another port (or leave --listen out: a free port on 127.0.0.1).",
        exitCode: ExitCode.usage,
      });
    throw err;
  }
  // the folder is made of the runbook's name, which `${env.*}` may fill
  stdout(base.redact(`syncbook watch: ${watch.url} (read-only; following ${base.folder})`));
  if (token !== undefined)
    stdout(`  open ${watch.url}?token=<the token in ${opts.tokenFile}> once: the page keeps it in a cookie`);
  await new Promise<void>((r) => {
    process.once("SIGINT", r);
    process.once("SIGTERM", r);
  });
  stop.abort();
  await watch.close();
  return ExitCode.ok;
}
