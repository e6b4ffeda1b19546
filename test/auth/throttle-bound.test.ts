/**
 * Issue 33, item 9: the bound the login throttle's rules promise against a distributed guess of one account
 * (src/auth/login-throttle-rules.ts, docs/decisions.md), checked on the rules themselves: an attacker with as many
 * addresses as it likes tries every second for an hour, each address as often as the rules let it, and a new
 * address every second. No 15-minute window may hold more than about (max + 5) x 3 + max guesses.
 */
import test from 'ava';
import { FREE_FAILURES, throttleVerdict, type LoginFailureStats } from '../../src/auth/login-throttle-rules.ts';

const MAX = 10;
const WINDOW_MS = 15 * 60_000;

interface Failure {
  ip: string;
  at: number;
}

/** The stats the repo's statement would give for `ip` on the one attacked account at `now`. */
function statsAt(failures: Failure[], ip: string, now: number): LoginFailureStats {
  const inWindow = failures.filter((f) => f.at > now - WINDOW_MS);
  const mine = inWindow.filter((f) => f.ip === ip);
  const latest = (list: Failure[]) => (list.length > 0 ? new Date(Math.max(...list.map((f) => f.at))) : null);
  return {
    address: { failures: mine.length, pending: 0 },
    account: {
      failures: inWindow.length,
      pending: 0,
      latest: latest(inWindow),
      addresses: new Set(inWindow.map((f) => f.ip)).size,
      pendingAddresses: 0,
    },
    pair: { failures: mine.length, pending: 0, latest: latest(mine) },
  };
}

test('a distributed guess of one account gets at most about (max + 5) x FREE_FAILURES + max per window', (t) => {
  const failures: Failure[] = [];
  for (let second = 0; second < 3600; second++) {
    const now = second * 1000;
    // Every address with a failure still in the window, and a new one (an old one whose failures left the
    // window is as good as new).
    const live = new Set(failures.filter((f) => f.at > now - WINDOW_MS).map((f) => f.ip));
    for (const ip of [...live, `198.51.100.${second}`]) {
      if (throttleVerdict(statsAt(failures, ip, now), MAX, now).kind === 'admit') failures.push({ ip, at: now });
    }
  }
  let most = 0;
  for (const f of failures)
    most = Math.max(most, failures.filter((g) => g.at >= f.at && g.at < f.at + WINDOW_MS).length);
  const bound = (MAX + 5) * FREE_FAILURES + MAX;
  t.log(`at most ${most} guesses in one 15-minute window, ${failures.length} in the hour`);
  t.true(most <= bound, `${most} guesses in one window (bound ${bound})`);
  t.true(most >= MAX, `the attacker did get its first ${MAX} (${most})`);
});

test('one address alone gets its free failures, then one guess per doubling delay, then none for the window', (t) => {
  const failures: Failure[] = [];
  const admittedAt: number[] = [];
  for (let second = 0; second < 900; second++) {
    const now = second * 1000;
    if (throttleVerdict(statsAt(failures, '203.0.113.7', now), MAX, now).kind === 'admit') {
      failures.push({ ip: '203.0.113.7', at: now });
      admittedAt.push(second);
    }
  }
  t.is(admittedAt.length, MAX);
  const gaps = admittedAt.slice(FREE_FAILURES).map((s, i) => s - admittedAt[FREE_FAILURES + i - 1]!);
  t.deepEqual(gaps, [1, 2, 4, 8, 16, 32, 64]);
});
