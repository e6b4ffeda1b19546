/**
 * The login throttle's rules (D-16 as issue 33 changed it): a pure function of what the window holds, so the
 * rules read in one place. `max` is `auth.login_max_failures`, the window `auth.login_window_minutes`.
 *
 * - **An address**, whatever emails it tries: refused at `max` failures until the window frees (a spray of many
 *   accounts from one address).
 * - **An address on one account**: its first FREE_FAILURES failures for that account cost nothing (typos); each one
 *   after doubles a delay (1, 2, 4, ... s after its latest failure there), with one attempt in flight at a time, so a
 *   burst gets no more than a sequence; past that the account's count stops it (below).
 * - **An account**, from an address that has not failed for it: let through, so nobody can lock a user out from
 *   addresses of their own. Only when `max` different addresses have failed for the account in the window (a
 *   distributed guess) does every new address wait: 1 minute after the account's latest failure, doubling with
 *   each further address (2, 4, 8, ... min), one attempt in flight at a time.
 * - **An account**, from an address that has failed for it FREE_FAILURES times: the account's own count, refused at
 *   `max` until the window frees. A user's few typos do not bring their address under that count.
 *
 * The bound on guessing one account in a window of W minutes: `max` addresses fail for it, then new ones come at
 * most about log2(W) + 1 more times; each of those addresses has FREE_FAILURES guesses before the account's
 * count (at `max`) stops it. With the defaults (10, 15 min): at most about (10 + 5) x 3 + 10 = 55 guesses per
 * 15 minutes, however many addresses (docs/decisions.md).
 */
export const FREE_FAILURES = 3;
const PAIR_DELAY_MS = 1_000;
const ACCOUNT_DELAY_MS = 60_000;

export interface LoginFailureStats {
  /** Failures from the address (any email) and its attempts being checked. */
  address: { failures: number; pending: number };
  /** Failures for the account (any address), how many addresses they came from, and attempts being checked. */
  account: { failures: number; pending: number; latest: Date | null; addresses: number; pendingAddresses: number };
  /** This address's failures for this account, and its attempts on it being checked. */
  pair: { failures: number; pending: number; latest: Date | null };
}

/**
 * `admit`: check the password now. `turn`: attempts still being checked may prove failures that would refuse this
 * one: wait for them. `refuse`: 429 until `until` (ms; 0 when no delay refuses) and until the counts in `full`
 * (at `max`) drop as their failures leave the window.
 */
export type ThrottleVerdict =
  | { kind: 'admit' }
  | { kind: 'turn' }
  | { kind: 'refuse'; until: number; full: ('ip' | 'email')[] };

export function throttleVerdict(stats: LoginFailureStats, max: number, now: number): ThrottleVerdict {
  const { address, account, pair } = stats;
  const full: ('ip' | 'email')[] = [];
  let until = 0;
  let turn = false;
  const delay = (latest: Date | null, ms: number) => {
    if (latest && latest.getTime() + ms > now) until = Math.max(until, latest.getTime() + ms);
  };

  if (address.failures >= max) full.push('ip');
  else if (address.failures + address.pending >= max) turn = true;

  if (pair.failures === 0) {
    if (account.addresses >= max) {
      delay(account.latest, ACCOUNT_DELAY_MS * 2 ** (account.addresses - max));
      if (account.pendingAddresses > 0) turn = true;
    } else if (account.addresses + account.pendingAddresses >= max) turn = true;
  }
  if (pair.failures + pair.pending >= FREE_FAILURES) {
    if (pair.failures >= FREE_FAILURES) delay(pair.latest, PAIR_DELAY_MS * 2 ** (pair.failures - FREE_FAILURES));
    if (pair.pending > 0) turn = true;
  }
  if (pair.failures >= FREE_FAILURES) {
    if (account.failures >= max) full.push('email');
    else if (account.failures + account.pending >= max) turn = true;
  }

  if (full.length > 0 || until > now) return { kind: 'refuse', until, full };
  return turn ? { kind: 'turn' } : { kind: 'admit' };
}
