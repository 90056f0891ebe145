/**
 * Every HTTP client sends through a dispatcher it owns, never through undici's global one
 * (issue 25). On Node 22+, once a process has served node:http or called the global `fetch()`,
 * Node's bundled undici owns that global, and a client relying on it failed every request with
 * "invalid onError method". Another library or a plugin may set the global too.
 *
 * Run as a library user would: a child process on this Node (the suite runs on 20, 22 and 24:
 * .ci/run) imports the built package (dist/src/index.js), serves HTTP (the simulator, on
 * node:http), calls `fetch()`, then uses the verifier client, the service client and the plugins'
 * `sendHttp` with default options; then again with a global dispatcher that fails every request.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const PACKAGE = pathToFileURL(resolve(import.meta.dirname, "../../dist/src/index.js")).href;

const SCRIPT = `
import { startSimulator, createVerifierClient, createServiceClient, sendHttp } from ${JSON.stringify(PACKAGE)};
const sim = await startSimulator({ timeScale: 0, data: "1GiB" });
const out = {};
const tryAll = async (label) => {
  const r = {};
  const verifier = createVerifierClient(sim.verifierUrl);
  const service = createServiceClient(sim.instances[0].url);
  try { r.verifier = typeof (await verifier.progress()) === "object" ? "answered" : "?"; } catch (e) { r.verifier = "FAILED: " + e.message; }
  try { r.service = (await service.progress()).state; } catch (e) { r.service = "FAILED: " + e.message; }
  try { r.command = (await service.command("start", { source: "cluster0", destination: "cluster1", sharding: { shardingEntries: [] } })).answer.success; } catch (e) { r.command = "FAILED: " + e.message; }
  try { r.sendHttp = (await sendHttp({ url: sim.instances[0].url + "/api/v1/progress", method: "GET" })).status; } catch (e) { r.sendHttp = "FAILED: " + e.message; }
  await verifier.close();
  await service.close();
  out[label] = r;
};
// the issue's reproduction: this process serves HTTP (the simulator) and calls the global fetch()
await (await fetch(sim.verifierUrl + "/api/v1/progress")).text();
await tryAll("afterFetch");
// a global dispatcher set by someone else that cannot carry a request
globalThis[Symbol.for("undici.globalDispatcher.1")] = {
  dispatch() { throw new Error("the global dispatcher was used"); },
  close: async () => {}, destroy: async () => {}, on() { return this; }, once() { return this; }, off() { return this; },
};
await tryAll("foreignGlobal");
await sim.close();
process.stdout.write(JSON.stringify(out));
`;

function runChild(): Promise<string> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", SCRIPT],
      { timeout: 30_000, encoding: "utf8" },
      (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : done(stdout)),
    );
  });
}

describe("clients own their dispatcher", () => {
  it(`work in a process that serves HTTP and called fetch(), on Node ${process.versions.node}`, async () => {
    const out = JSON.parse(await runChild()) as Record<string, Record<string, unknown>>;
    expect(out.afterFetch).toEqual({ verifier: "answered", service: "IDLE", command: true, sendHttp: 200 });
    // the first start took effect: a second one is refused (a ServiceError: the request went through)
    expect(out.foreignGlobal).toMatchObject({ verifier: "answered", service: "RUNNING", sendHttp: 200 });
    expect(String(out.foreignGlobal!.command)).toMatch(/^FAILED: .*start/i);
    expect(String(out.foreignGlobal!.command)).not.toMatch(/global dispatcher|onError/);
  });
});
