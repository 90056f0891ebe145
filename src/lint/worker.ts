/**
 * A lint worker thread (`lintFiles` of many files, src/lint/run.ts): lints the files it is handed
 * and posts their diagnostics and texts back, or the error that stopped it (a `UserError`'s
 * message, hint and exit code: the CLI prints it as it would on one thread).
 */
import { parentPort, workerData } from "node:worker_threads";
import { UserError, errorMessage } from "../errors.js";
import { lintFileList, type LintFilesOptions, type WorkerReply } from "./run.js";

const { files, opts } = workerData as { files: string[]; opts: LintFilesOptions };
// no top-level await: the CLI's copy of this file is CommonJS
void lintFileList(files, opts)
  .then(
    (r): WorkerReply => ({ ok: true, results: r.results, sources: [...r.sources] }),
    (err: unknown): WorkerReply =>
      err instanceof UserError
        ? { ok: false, message: err.message, hint: err.hint, exitCode: err.exitCode }
        : { ok: false, message: `lint failed: ${errorMessage(err)}`, hint: undefined, exitCode: 1 },
  )
  .then((reply) => parentPort?.postMessage(reply));
