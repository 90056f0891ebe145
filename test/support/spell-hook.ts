/**
 * A hook that echoes its secrets back in every spelling (test/support/spellings.ts), each after a
 * label naming it (`[a3]`: the argument's spelling 3, `[e3]`: the environment's): what a hook
 * that logs a request, a URL or a JSON body can print. Run as
 * `node --import tsx spell-hook.ts token=<secret> [fail]`, with the other secret in `TOKEN`.
 *
 * - stdout: every spelling on lines of its own (a spelling with a line break spans two lines);
 * - stderr: with `fail`, the one-line spellings of each secret on two lines, then exit 1: the
 *   last lines of stderr are the failing step's message, which reaches every output.
 */
import { labelled } from "./spellings.js";

const arg = (process.argv[2] ?? "").replace(/^token=/, "");
const env = process.env.TOKEN ?? "";
const fail = process.argv[3] === "fail";

for (const [s, tag] of [
  [arg, "a"],
  [env, "e"],
] as const) {
  const all = labelled(s, tag);
  for (const x of all) console.log(`${x.label} ${x.text}`);
  if (fail) {
    const oneLine = all.filter((x) => !/[\r\n]/.test(x.text)).map((x) => `${x.label} ${x.text}`);
    const half = Math.ceil(oneLine.length / 2);
    console.error(oneLine.slice(0, half).join(" "));
    console.error(oneLine.slice(half).join(" "));
  }
}
if (fail) process.exit(1);
