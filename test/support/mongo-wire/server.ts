/**
 * A MongoDB wire-protocol test server: listens on 127.0.0.1 (port 0), answers OP_MSG (and the
 * legacy OP_QUERY handshake the driver opens a connection with) from a handler, and records the
 * name of every command it receives, so tests can assert that preflight sends no write.
 *
 * Wire format (MongoDB Wire Protocol): a 16-byte header (messageLength, requestID, responseTo,
 * opCode, little-endian int32); OP_MSG (2013) = flagBits uint32, then sections (kind 0: one BSON
 * document; kind 1: int32 size, cstring identifier, BSON documents), then a CRC-32C when flag bit
 * 0 is set; OP_QUERY (2004) = flags, cstring collection, skip, return, query document; its
 * answer OP_REPLY (1) = responseFlags, int64 cursorID, startingFrom, numberReturned, documents.
 */
import { createServer, type Server, type Socket } from "node:net";
import { BSON, type Document } from "mongodb";

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

export interface ConnectionState {
  /** The user this connection authenticated as (SCRAM), if any. */
  user?: string;
  /** Conversation state of a SCRAM exchange in progress. */
  sasl?: unknown;
}

/** Answers one command (its first key names it; `$db` is the database). */
export type Handler = (cmd: Document, conn: ConnectionState) => Document | Promise<Document>;

export interface WireServer {
  port: number;
  host: string;
  /** `127.0.0.1:<port>`. */
  address: string;
  /** Names of every command received, in order (handshakes included). */
  commands: string[];
  close(): Promise<void>;
}

function readCString(buf: Buffer, at: number): [string, number] {
  const end = buf.indexOf(0, at);
  return [buf.toString("utf8", at, end), end + 1];
}

function frame(opCode: number, responseTo: number, body: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.writeInt32LE(16 + body.length, 0);
  header.writeInt32LE((Math.random() * 0x7fffffff) | 0, 4);
  header.writeInt32LE(responseTo, 8);
  header.writeInt32LE(opCode, 12);
  return Buffer.concat([header, body]);
}

function opMsgReply(responseTo: number, doc: Document): Buffer {
  const flags = Buffer.alloc(5); // flagBits 0, section kind 0
  return frame(OP_MSG, responseTo, Buffer.concat([flags, BSON.serialize(doc)]));
}

function opReply(responseTo: number, doc: Document): Buffer {
  const head = Buffer.alloc(20); // responseFlags, cursorID (int64), startingFrom, numberReturned
  head.writeInt32LE(1, 16);
  return frame(OP_REPLY, responseTo, Buffer.concat([head, BSON.serialize(doc)]));
}

/** The command document of an OP_MSG: section 0, with kind-1 sequences folded in as arrays. */
function parseOpMsg(body: Buffer): Document {
  const flags = body.readUInt32LE(0);
  const end = flags & 1 ? body.length - 4 : body.length;
  let at = 4;
  let cmd: Document = {};
  const sequences: Record<string, Document[]> = {};
  while (at < end) {
    const kind = body[at++];
    if (kind === 0) {
      const size = body.readInt32LE(at);
      cmd = BSON.deserialize(body.subarray(at, at + size), { promoteLongs: false });
      at += size;
    } else {
      const size = body.readInt32LE(at);
      const stop = at + size;
      const [id, next] = readCString(body, at + 4);
      let p = next;
      const docs: Document[] = [];
      while (p < stop) {
        const n = body.readInt32LE(p);
        docs.push(BSON.deserialize(body.subarray(p, p + n)));
        p += n;
      }
      sequences[id] = docs;
      at = stop;
    }
  }
  return { ...cmd, ...sequences };
}

function parseOpQuery(body: Buffer): Document {
  const [collection, next] = readCString(body, 4);
  const at = next + 8; // numberToSkip, numberToReturn
  const size = body.readInt32LE(at);
  const query = BSON.deserialize(body.subarray(at, at + size));
  return { ...query, $db: collection.split(".")[0] ?? "admin" };
}

export async function startWireServer(handler: Handler): Promise<WireServer> {
  const commands: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    const conn: ConnectionState = {};
    let pending = Buffer.alloc(0);
    let chain = Promise.resolve();
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const len = pending.readInt32LE(0);
        if (pending.length < len) break;
        const msg = pending.subarray(0, len);
        pending = pending.subarray(len);
        const requestId = msg.readInt32LE(4);
        const opCode = msg.readInt32LE(12);
        const body = msg.subarray(16);
        // answers go out in order, one at a time, as a server does per connection
        chain = chain.then(async () => {
          let cmd: Document;
          if (opCode === OP_MSG) cmd = parseOpMsg(body);
          else if (opCode === OP_QUERY) cmd = parseOpQuery(body);
          else {
            socket.destroy();
            return;
          }
          const name = Object.keys(cmd)[0] ?? "";
          commands.push(name);
          let reply: Document;
          try {
            reply = await handler(cmd, conn);
          } catch (err) {
            reply = { ok: 0, errmsg: (err as Error).message, code: 1, codeName: "InternalError" };
          }
          if (socket.destroyed) return;
          socket.write(opCode === OP_MSG ? opMsgReply(requestId, reply) : opReply(requestId, reply));
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    host: "127.0.0.1",
    address: `127.0.0.1:${port}`,
    commands,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
