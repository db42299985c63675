/**
 * How long after its upload a version's missing report row (or automatic comparison row) is taken for a
 * workflow on its way rather than a start that was lost: the file sweep starts it again after that, and a
 * comparison stops waiting for that report then. (A module of its own: the comparison run imports it without
 * the Temporal client that domain/files/reportStarts.ts needs.)
 */
export const ANALYSIS_START_GRACE_MS = 5 * 60_000;
