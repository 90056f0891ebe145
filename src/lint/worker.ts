/**
 * A lint worker thread (`lintFiles` of many files, src/lint/run.ts): lints each piece of work it
 * is handed, in turn, and posts back its files' diagnostics and texts, or the error that stopped
 * it (a `UserError`'s message, hint and exit code: the CLI prints it as it would on one thread).
 */
import { parentPort, workerData } from "node:worker_threads";
import { UserError, errorMessage } from "../errors.js";
import { lintFileList, type LintFilesOptions, type WorkerReply, type WorkerTask } from "./run.js";

const { opts } = workerData as { opts: LintFilesOptions };
// one piece at a time, in the order they came (no top-level await: the CLI's copy is CommonJS)
let queue: Promise<void> = Promise.resolve();
parentPort?.on("message", (task: WorkerTask) => {
  queue = queue.then(async () => {
    if ("done" in task) {
      parentPort?.close();
      return;
    }
    const reply = await lintFileList(task.files, opts, task.bytes).then(
      (r): WorkerReply => ({ ok: true, results: r.results, sources: [...r.sources] }),
      (err: unknown): WorkerReply =>
        err instanceof UserError
          ? { ok: false, message: err.message, hint: err.hint, exitCode: err.exitCode }
          : { ok: false, message: `lint failed: ${errorMessage(err)}`, hint: undefined, exitCode: 1 },
    );
    parentPort?.postMessage({ chunk: task.chunk, reply });
  });
});
