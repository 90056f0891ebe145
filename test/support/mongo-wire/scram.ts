/**
 * The server side of SCRAM-SHA-256 (RFC 5802 / 7677), as a MongoDB server runs it over saslStart
 * and saslContinue, so the real driver authenticates against the test server with a real
 * password (and tests can prove that password never reaches any output).
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";

const ITERATIONS = 4096;

const hmac = (key: Buffer, text: string): Buffer => createHmac("sha256", key).update(text).digest();
const sha = (b: Buffer): Buffer => createHash("sha256").update(b).digest();

function parse(payload: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of payload.split(",")) {
    const eq = part.indexOf("=");
    if (eq > 0) out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

export interface ScramUser {
  user: string;
  password: string;
}

export interface ScramState {
  user: ScramUser;
  clientFirstBare: string;
  serverFirst: string;
  nonce: string;
  salt: Buffer;
}

/** saslStart: the client's first message → the server's first message, or an error. */
export function scramStart(
  users: readonly ScramUser[],
  clientFirst: string,
): { state: ScramState; reply: string } | { error: string } {
  const bare = clientFirst.replace(/^n,[^,]*,/, "");
  const f = parse(bare);
  const name = (f.n ?? "").replace(/=2C/g, ",").replace(/=3D/g, "=");
  const user = users.find((u) => u.user === name);
  if (!user || !f.r) return { error: "Authentication failed." };
  const salt = createHash("sha256").update(`salt:${user.user}`).digest().subarray(0, 16);
  const nonce = f.r + randomBytes(18).toString("base64");
  const serverFirst = `r=${nonce},s=${salt.toString("base64")},i=${ITERATIONS}`;
  return { state: { user, clientFirstBare: bare, serverFirst, nonce, salt }, reply: serverFirst };
}

/** saslContinue: the client's final message → the server's final message, or an error. */
export function scramFinish(state: ScramState, clientFinal: string): { reply: string } | { error: string } {
  const f = parse(clientFinal);
  if (f.r !== state.nonce || !f.p) return { error: "Authentication failed." };
  const withoutProof = clientFinal.slice(0, clientFinal.lastIndexOf(",p="));
  const salted = pbkdf2Sync(state.user.password.normalize("NFKC"), state.salt, ITERATIONS, 32, "sha256");
  const clientKey = hmac(salted, "Client Key");
  const storedKey = sha(clientKey);
  const authMessage = `${state.clientFirstBare},${state.serverFirst},${withoutProof}`;
  const signature = hmac(storedKey, authMessage);
  const proof = Buffer.from(f.p, "base64");
  if (proof.length !== clientKey.length) return { error: "Authentication failed." };
  const expected = Buffer.from(clientKey.map((b, i) => b ^ (signature[i] ?? 0)));
  if (!timingSafeEqual(proof, expected)) return { error: "Authentication failed." };
  const serverKey = hmac(salted, "Server Key");
  return { reply: `v=${hmac(serverKey, authMessage).toString("base64")}` };
}
