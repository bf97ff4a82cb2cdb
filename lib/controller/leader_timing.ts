/**
 * @module controller/leader_timing
 * The timings of leader election (lib/controller/leader.ts): client-go's defaults. No command-line
 * option sets them; the controller's settings carry them so that tests can pass shorter ones.
 */

/** client-go's defaults. */
export const leaderElectionDefaults = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;

export type LeaderElectionTiming = { -readonly [K in keyof typeof leaderElectionDefaults]: number };
