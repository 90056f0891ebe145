#!/usr/bin/env node
// Example write switch of the example runbooks' `stopWrites` step (and of its `undo`):
//
//   node runbooks/hooks/app-writes.mjs off|on|status <switch-url>
//
// It POSTs `{"enabled": false}` (off) or `{"enabled": true}` (on) to <switch-url> and fails
// unless the switch answers 2xx: a write stop that silently did nothing would let commit lose
// data. `status` (the stopWrites step's `check:`, run again right before commit) GETs the switch
// and succeeds only when it answers `"enabled": false` (top level or under `writes`): an answer
// that does not say counts as writes flowing. The runbooks pass `${vars.writeSwitch}`, by default the simulator's source application
// (`POST /sim/writes`, served on every simulated instance port), so `syncbook rehearse` works
// as is. For a real cutover, point `writeSwitch` at your application's switch, or replace this
// script with your own (maintenance mode, a feature flag, revoking the application user's
// write role...).
const [mode, url] = process.argv.slice(2);
if ((mode !== "off" && mode !== "on" && mode !== "status") || !url) {
  process.stderr.write("usage: app-writes.mjs off|on|status <switch-url>\n");
  process.exit(2);
}
if (mode === "status") {
  try {
    const res = await globalThis.fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status} ${await res.text()}`);
    const body = await res.json();
    const enabled = body?.enabled ?? body?.writes?.enabled;
    if (enabled !== false) throw new Error(enabled === true ? "the application writes" : "the answer does not say");
    process.stdout.write("application writes are stopped\n");
    process.exit(0);
  } catch (err) {
    process.stderr.write(`app-writes: writes not seen stopped: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
try {
  const res = await globalThis.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ enabled: mode === "on" }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status} ${await res.text()}`);
  process.stdout.write(`application writes ${mode}\n`);
} catch (err) {
  process.stderr.write(
    `app-writes: turning application writes ${mode} failed: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
}
