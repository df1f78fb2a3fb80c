import { NODE_ID_PATTERN } from './heartbeat.message';
import { JobReportMessage, REPORTED_STATES, ReportedState } from './job-report.message';
import { Obj, isInt, parseWithFastPath } from './fast-parse';
import { ParseResult } from './parse-message';

/*
 * The reconciler parses two reports per job; class-transformer + class-validator cost ~20 µs each,
 * ~9% of the reconciler's CPU. This checks the JobReportMessage rules by hand (~1.3 µs with
 * JSON.parse) and copies only the known fields, in the order the agent writes them, as `whitelist`
 * would. It may be stricter than the class, never looser: anything it does not accept goes through
 * parseMessage, which gives the verdict and the dead-letter reason. job-report-parser.spec.ts
 * checks the two agree.
 *
 * Stricter on purpose, left to the class: an exitCode or reason that is null (the class keeps the
 * null); jobId and reason lengths counted in UTF-16 units, where the class counts a surrogate pair
 * or a variation sequence as one character.
 */

const isState = (v: unknown): v is ReportedState => (REPORTED_STATES as readonly unknown[]).includes(v);

function fastReport(d: Obj): JobReportMessage | null {
  const { nodeId, jobId, attempt, state, exitCode, reason, at } = d;
  if (typeof nodeId !== 'string' || !NODE_ID_PATTERN.test(nodeId) || typeof jobId !== 'string' || jobId.length < 1 || jobId.length > 64) return null;
  if (!isInt(attempt, 1) || !isState(state) || !isInt(at, 0)) return null;
  const report: JobReportMessage = { nodeId, jobId, attempt, state, at };
  if (exitCode !== undefined) {
    if (!isInt(exitCode, -2147483648, 2147483647)) return null;
    report.exitCode = exitCode;
  }
  if (reason !== undefined) {
    if (typeof reason !== 'string' || reason.length > 1024) return null;
    report.reason = reason;
  }
  return report;
}

/** Parses one gantry.job-reports.v1 value: the fast path for well-formed reports, the class for the rest. */
export function parseJobReport(raw: Buffer | null): ParseResult<JobReportMessage> {
  return parseWithFastPath(JobReportMessage, fastReport, raw);
}
