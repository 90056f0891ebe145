/**
 * A folder or file of the journal's side that cannot be written is the operator's to fix, said as
 * such (issue 30): the path, the reason in words with its code, a hint, exit 2 before the run
 * (exit 1 once it runs); never "internal error".
 */
import { describe, expect, it } from "vitest";
import { ExitCode, UserError } from "../../src/errors.js";
import { ioError } from "../../src/journal/io-errors.js";

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: failed`), { code });
const DIR = "/srv/runbooks/.syncbook";

describe("ioError: the journal's file-system errors, worded", () => {
  it.each([
    ["EACCES", "permission denied", /let this user write \/srv\/runbooks\/\.syncbook, or pass --journal-dir/],
    ["EPERM", "not permitted", /let this user write \/srv\/runbooks\/\.syncbook, or pass --journal-dir/],
    ["EROFS", "the file system is read-only", /read-only here: pass --journal-dir <a writable folder>/],
    ["ENOSPC", "the disk is full", /free space on the disk of \/srv\/runbooks\/\.syncbook, or pass --journal-dir/],
    [
      "ENOTDIR",
      "a part of the path is a file, not a folder",
      /move the file on the way to \/srv\/runbooks\/\.syncbook aside/,
    ],
    ["EEXIST", "a file is in the way where a folder belongs", /move the file on the way/],
  ])("%s: names the path and the reason, with a hint; exit 2 before the run", (code, why, hint) => {
    const e = ioError(DIR, "create the journal folder", errno(code));
    expect(e).toBeInstanceOf(UserError);
    expect(e.message).toBe(`cannot create the journal folder ${DIR}: ${code} (${why})`);
    expect(e.hint).toMatch(hint);
    expect(e.exitCode).toBe(ExitCode.usage);
    expect((e.options.cause as NodeJS.ErrnoException).code).toBe(code);
  });

  it("during the run: exit 1, and the hint says nothing is sent while the journal cannot record it", () => {
    const full = ioError("/j/run.jsonl", "write the journal", errno("ENOSPC"), { during: true });
    expect(full.exitCode).toBe(ExitCode.failed);
    expect(full.message).toBe("cannot write the journal /j/run.jsonl: ENOSPC (the disk is full)");
    // the way on is the run's end's to say (what ran after the failure decides it): one hint, not two
    expect(full.hint).toMatch(/the disk is full: free space; the run's last lines say how to go on \(nothing is sent/);
    expect(full.hint).not.toMatch(/--resume/);
    const other = ioError("/j/run.jsonl", "write the journal", errno("EIO"), { during: true });
    expect(other.message).toBe("cannot write the journal /j/run.jsonl: EIO");
    expect(other.hint).toMatch(/nothing is sent while the journal cannot record it/);
  });

  it("another place to name: the fleet's locks live in the state folder, not the journal folder", () => {
    const e = ioError("/state/locks", "create the lock folder", errno("EACCES"), {
      elsewhere: "or point SYNCBOOK_STATE_DIR at a writable folder",
    });
    expect(e.hint).toBe("let this user write /state/locks, or point SYNCBOOK_STATE_DIR at a writable folder");
  });

  it("an error without a code keeps its own message", () => {
    expect(ioError("/x", "read the journal folder", new Error("odd")).message).toBe(
      "cannot read the journal folder /x: odd",
    );
  });
});
