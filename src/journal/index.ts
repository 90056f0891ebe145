/**
 * Crash-safe runs: the run's journal (writer and reader), the one-runner lock, and the pure
 * reconciliation of a journal with the live fleet that `--resume` acts on.
 */
export { openJournal, asListener, type Journal, type OpenJournalOptions } from "./journal.js";
export {
  acquireLock,
  isPidAlive,
  lockHolderText,
  LOCK_FILE_NAME,
  type Lock,
  type LockInfo,
  type AcquireLockOptions,
} from "./lock.js";
export {
  readJournalState,
  type KindTraits,
  findLatestJournal,
  findResumeJournal,
  instanceKey,
  refusalsCounted,
  lastReverse,
  classifyAnswer,
  type JournalState,
  type JournalStep,
  type SentCommand,
  type InstanceAnswer,
  type HookRun,
  type HookCall,
  type JournalSegment,
  type CommandOp,
  type Answer,
} from "./state.js";
export { acquireFleetLock, fleetLockDir, instanceLockName, tookOverLines, type FleetLock } from "./fleet-lock.js";
export { runbookJournal, isNothingToResume, type RunbookJournal } from "./runbook-journal.js";
export { earlierHookCalls, hookCallFold, type EarlierHookCalls, type HookWriter } from "./hook-calls.js";
export {
  cutoverId,
  cutoverOfRun,
  cutoverJournals,
  folderJournals,
  journalCutover,
  unfinishedCutover,
  type FolderJournal,
  type UnjudgedJournal,
  type JournalCutover,
  type UnfinishedCutover,
} from "./cutover.js";
export {
  checkWitness,
  DistrustedJournal,
  readWitness,
  witnessCheck,
  witnessFile,
  writeWitness,
  WITNESS_EXTENSION,
  type Witness,
  type WitnessVerdict,
} from "./witness.js";
export { readJournal, resolveJournal, cutoverJournalsRead, type JournalRead } from "./read-whole.js";
export { createChainChecker, appendChain, splitChain, link as chainLink, CHAIN_FIELD } from "./chain.js";
export {
  createSampleBounder,
  createSampleRestorer,
  journalEventRestorer,
  SAMPLE_CAP,
  SAMPLE_FIELD_CAP,
} from "./samples.js";
export {
  journalLines,
  newestJournal,
  chooseJournal,
  journalActed,
  isRunEvent,
  type JournalLine,
  type JournalChoice,
} from "./read.js";
export {
  reconcile,
  resumeStep,
  sentAhead,
  STOP_COUNTED_NOTE,
  type ReconcileResult,
  type ReconcileOptions,
  type ReconcileRefusal,
  type FleetReading,
  type RunbookIdentity,
} from "./reconcile.js";
export {
  journalDir,
  journalDirFor,
  journalFileName,
  mustFsync,
  safeSegment,
  DEFAULT_JOURNAL_ROOT,
  JOURNAL_EXTENSION,
  JOURNAL_FORMAT_VERSION,
  type JournalHeader,
  type JournalResumed,
} from "./format.js";
export { ioError } from "./io-errors.js";
