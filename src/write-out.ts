/**
 * Output to fd 1 at once, without creating `process.stdout` (its stream costs ~4 ms of start-up):
 * lint's report, and the CLI's help and version. A reader gone (`| head`) ends it quietly: what it
 * wanted is printed, the rest is not wanted (an adversarial run: `syncbook rehearse --help | head`
 * ended in an unhandled EPIPE and its stack). A descriptor full and non-blocking (EAGAIN) hands the
 * rest to `process.stdout`, which Node flushes before exiting.
 */
import { writeSync } from "node:fs";

export function writeOut(text: string): void {
  const buf = Buffer.from(text, "utf8");
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(1, buf, off, buf.length - off);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EPIPE") return;
    if (code !== "EAGAIN") throw err;
    process.stdout.on("error", () => undefined);
    process.stdout.write(buf.subarray(off));
  }
}
