/**
 * Which sync service an instance URL names: the one answer to "are these two URLs one service?"
 * (issue 40), asked by the fleet lock (src/journal/fleet-lock.ts), lint's duplicate-instance check
 * (src/lint/instances.ts), wave lint's shared-instance check (src/wave/lint.ts), `--resume`'s
 * check that the instances are those the journal's run used (src/journal/reconcile.ts), `--only`
 * (src/run/plan.ts) and the report across runs (src/report/model.ts).
 *
 * A spelling is not a service. One service, whatever is written: the host's case (the URL parser
 * lower-cases it), the scheme's default port written or not, trailing slashes, a trailing dot on
 * the host, user info (credentials, not an address), a query or fragment (lint refuses them).
 * Scheme, port, path and other hosts tell services apart.
 *
 * Loopback: every spelling of this machine (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`, an
 * IPv4-mapped 127.x, `0.0.0.0` and `[::]`, which a connection takes to this machine too) at one
 * port and path may be one service (an SSH tunnel written two ways) or two (one bound to
 * 127.0.0.1, another to ::1). Not known either way, so the answer has three values, and each
 * asker takes the reading that refuses rather than lets through:
 * - a check that keeps two runs or two entries apart (the fleet lock, lint's duplicates, wave
 *   lint) reads "maybe" as one service: `serviceKey`, equal for "same" and "maybe";
 * - a check that a run goes on with the fleet it started with (`--resume`, the report joining
 *   runs) reads "maybe" as another: it asks `sameService(a, b) === "same"`.
 * Other spellings of one host (a DNS alias, a LAN address) cannot be told from the text: the
 * fleet's own state (start's `fleet-idle`, the service's refusal of a start outside IDLE) and the
 * `mongosyncID` identity check guard there.
 */

export type Sameness = "same" | "maybe" | "different";

interface Parsed {
  /** `http://host:port/path`, default port dropped, as the host is spelled. */
  exact: string;
  /** The same with every loopback spelling as `loopback`. */
  service: string;
}

function parse(url: string): Parsed | undefined {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  const host = u.hostname.replace(/\.$/, "");
  // the parser drops a default port (`u.port` is "" for http:80, https:443)
  const port = u.port ? `:${u.port}` : "";
  const path = u.pathname.replace(/\/+$/, "");
  return {
    exact: `${u.protocol}//${host}${port}${path}`,
    service: `${u.protocol}//${isLoopbackHost(host) ? "loopback" : host}${port}${path}`,
  };
}

/**
 * A host name (as the URL parser gives it: lower case, IPv4 dotted, IPv6 in brackets) that
 * reaches this machine only.
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, "");
  return (
    h === "localhost" ||
    h.endsWith(".localhost") ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    h === "0.0.0.0" ||
    h === "[::1]" ||
    h === "::1" ||
    h === "[::]" ||
    // IPv4-mapped 127.0.0.0/8, as the parser writes it: [::ffff:7f00:1]
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(h)
  );
}

/**
 * The service an instance URL names, as a key that two spellings of one service share, loopback
 * spellings at one port and path included ("maybe" reads as one: for the checks that keep runs
 * or entries apart). Undefined for a text that is no http(s) URL (a `${env.*}` placeholder).
 */
export function serviceKey(url: string): string | undefined {
  return parse(url)?.service;
}

/** Whether two instance URLs name one service: "same", "maybe" (two loopback spellings), or "different". */
export function sameService(a: string, b: string): Sameness {
  const x = parse(a);
  const y = parse(b);
  // a text that is no URL is only ever itself
  if (!x || !y) return a.trim() === b.trim() ? "same" : "different";
  if (x.exact === y.exact) return "same";
  return x.service === y.service ? "maybe" : "different";
}
