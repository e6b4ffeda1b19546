import type { LiteralStatement } from './literal.ts';

/**
 * Group commit of hot-lock transactions inside one process (issue 20). Every creation takes the year's
 * invoice-number counter (D-50), so creations commit one after another; under load half of a creation's database
 * CPU went to that queue itself (lock waits and wake-ups, one commit and one WAL flush per creation, the shared lock
 * manager for statements that lock many relations). Concurrent hot-lock transactions of this process therefore run
 * as ONE database transaction on one pooled connection: the counter is taken once per group (its numbers are
 * consecutive in one commit), and BEGIN, COMMIT, the flush wait and the lock waits are paid once per group.
 *
 * - One queue per pool (per Db) for everything that takes the counter through it (admin invoices, subscriptions). A
 *   unit that arrives while nothing is in flight starts at once and alone, by its own path (no latency added when
 *   idle); units that arrive meanwhile go together as the next group (at most MOST_IN_GROUP). Units with the same
 *   `key` (a customer whose store-credit balance a unit reads and spends: two of them in one transaction would both
 *   see the balance before either spent it) never share a group; a group's units are ordered by key, so groups lock
 *   ledgers in one order.
 * - Three groups are in flight at once (MOST_GROUPS_IN_FLIGHT = 3), and all may be running their rounds: one group
 *   at a time left Node idle while PostgreSQL ran the group and PostgreSQL idle while Node answered and planned the
 *   next (measured: ~18 units per group but fewer creations per second than without groups); and with only one
 *   group forming at a time, a subscription group's first round and Node's planning of it
 *   left the counter idle about half the time (pg_stat_activity samples: the numbering statement running 0.46 of the
 *   time). Measured on the quiet machine, invoices / subscriptions of the write ceiling: one forming 0.54-0.69 /
 *   0.34-0.41, two 0.57 / 0.40-0.44; then seven alternating pairs of two and three in flight: subscriptions 0.41 and
 *   0.45 on average (three ahead in six pairs of seven), invoices 0.63 both (docs/decisions.md "Three groups in flight").
 *   Groups cannot deadlock: the customers' ledger locks are taken in a group's first round, in key order (so two
 *   groups forming at once take them in one order), the counter only in a group's last query, which takes no ledger
 *   lock; so a group may wait on another for a ledger lock and then on the counter, never the other way round. (The
 *   ledger locks are advisory locks on a 32-bit hash of the id: two customers sharing one could in principle be taken
 *   out of order; PostgreSQL would then end one group as a deadlock, and its units run again alone.)
 * - A unit is what a pooled hot-lock transaction's work or a one-statement `finish` is (db/hot-lock.ts): it only
 *   builds and sends statements. The units of a group run in lockstep rounds: once every unit waits on a call (or is
 *   done), the statements of the calls that are not last go in ONE query (the first also opens the transaction);
 *   when all wait on their last statement, those go in ONE query with the COMMIT and the flush wait. Each unit gets
 *   its own rows, and no unit is answered before the group committed.
 * - A unit's session check (the guard its statement carries, db/fast-query.ts) is judged per unit from its own rows
 *   (`checked`): a refused statement wrote nothing and claimed no number (the guard is the condition of every write
 *   in it), so that unit is answered its 401/403 and leaves while the others go on.
 * - Any other failure (a statement error such as an unknown customer's foreign key, a deadlock, an exception in a
 *   unit's code after its statements were sent) rolls the whole group back, and every unit not yet answered runs
 *   again ALONE by its own path, so each gets exactly the answer it would have got alone. A unit that failed before
 *   any of its statements were sent is answered its error and leaves. A failure of the last query after its COMMIT
 *   ran (the connection lost, the flush wait failed) is answered to every unit: rerunning would write twice.
 */

type Rows = Record<string, unknown>[];
type Statement = string | LiteralStatement;

/** Reads a unit's first statement's rows for its check; throws the refusal (that statement wrote nothing). */
export type Checked = (rows: Rows) => Rows | Promise<Rows>;

/** How a unit sends its statements: `last` ones with the COMMIT. Answers each statement's rows. */
export type GroupSend = (statements: Statement[], last: boolean, checked?: Checked) => Promise<Rows[]>;

/** The group's transaction on one pooled connection (db/hot-lock.ts transactionOn). */
export interface GroupTransaction {
  /** The statements in one query: after BEGIN when first, before the COMMIT and the flush wait when `closing`. */
  send(statements: Statement[], closing: boolean): Promise<Rows[]>;
  readonly begun: boolean;
  /** After a failed closing query: whether the transaction is known not to have committed (still open, aborted). */
  uncommitted(): Promise<boolean>;
}

/** Runs `attempt` on a pooled connection, rolling its transaction back if it throws. */
export type GroupTransport = <R>(attempt: (tx: GroupTransaction) => Promise<R>) => Promise<R>;

export interface GroupUnit<T> {
  /** Units with the same key never share a group. */
  key?: string;
  /** The unit, its statements sent by `send`. Must do nothing but build and send them (it may run again alone). */
  work: (send: GroupSend) => Promise<T>;
  /** The unit by its own path, alone: when nothing else is in flight, and after its group failed. */
  alone: () => Promise<T>;
}

interface Member extends GroupUnit<unknown> {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Queue {
  waiting: Member[];
  /** Groups (or units alone) in flight, running their rounds or committing. */
  inFlight: number;
}

const MOST_IN_GROUP = 64;
/** Groups committing while the next ones run their rounds: Node plans the next while PostgreSQL runs the last. */
export const MOST_GROUPS_IN_FLIGHT = 3;
const queues = new WeakMap<object, Queue>();

/** What groups did, read by the tests (test/db/hot-lock-group.test.ts) and by a profiling run: never logged by the service. */
export const groupStats = { groups: 0, grouped: 0, alone: 0, failedGroups: 0 };

/** How many units wait for the next group of `db` (a test's view: the group in flight holds the rest back). */
export function waitingUnits(db: object): number {
  return queues.get(db)?.waiting.length ?? 0;
}

/** Runs `unit` in the next group of `db`'s queue (see above); `transport` opens a group's transaction. */
export function inHotLockGroup<T>(db: object, transport: GroupTransport, unit: GroupUnit<T>): Promise<T> {
  let queue = queues.get(db);
  if (!queue) queues.set(db, (queue = { waiting: [], inFlight: 0 }));
  const entered = new Promise<T>((resolve, reject) =>
    queue.waiting.push({ ...(unit as GroupUnit<unknown>), resolve: resolve as (v: unknown) => void, reject }),
  );
  startNext(queue, transport);
  return entered;
}

/** Starts the next group when fewer than MOST_GROUPS_IN_FLIGHT are in flight (each may be running its rounds). */
function startNext(queue: Queue, transport: GroupTransport): void {
  if (queue.inFlight >= MOST_GROUPS_IN_FLIGHT || queue.waiting.length === 0) return;
  const group = nextGroup(queue);
  queue.inFlight += 1;
  const ended = () => {
    queue.inFlight -= 1;
    startNext(queue, transport);
  };
  // Alone only when nothing else is in flight: then nothing could share its transaction, and it needs no group's rounds.
  if (group.length === 1 && queue.inFlight === 1) {
    groupStats.alone += 1;
    void group[0]!.alone().then(group[0]!.resolve, group[0]!.reject).finally(ended);
  } else {
    groupStats.groups += 1;
    groupStats.grouped += group.length;
    void runGroup(group, transport).finally(ended);
  }
}

/** The waiting units that go next, in arrival order but no two of one key, ordered by key (lock order). */
function nextGroup(queue: Queue): Member[] {
  const keys = new Set<string>();
  const group: Member[] = [];
  const rest: Member[] = [];
  for (const member of queue.waiting) {
    if (group.length >= MOST_IN_GROUP || (member.key !== undefined && keys.has(member.key))) rest.push(member);
    else {
      group.push(member);
      if (member.key !== undefined) keys.add(member.key);
    }
  }
  queue.waiting = rest;
  return group.sort((a, b) => (a.key ?? '').localeCompare(b.key ?? ''));
}

interface Call {
  statements: Statement[];
  last: boolean;
  checked?: Checked;
  resolve: (rows: Rows[]) => void;
  reject: (error: unknown) => void;
}

/** A member as its group runs it. */
interface Running {
  member: Member;
  call?: Call;
  /** Some of its statements went to the database (its failure is the group's from then on). */
  sent: boolean;
  /** Its check refused it: answered, gone. */
  refused: boolean;
  outcome?: { value: unknown } | { error: unknown };
  answered: boolean;
  /** Settles when its work ended (`outcome` set). */
  done?: Promise<void>;
}

/** Thrown inside the group's transaction to roll it back (then its units run alone). */
class GroupFailed extends Error {
  constructor(
    readonly rerun: boolean,
    readonly reason: unknown,
  ) {
    super('the hot-lock group failed');
  }
}

async function runGroup(members: Member[], transport: GroupTransport): Promise<void> {
  const running: Running[] = members.map((member) => ({ member, sent: false, refused: false, answered: false }));
  // Wakes the loop below whenever a unit calls or ends.
  const waiters: (() => void)[] = [];
  const poke = () => waiters.splice(0).forEach((wake) => wake());
  const changed = () => new Promise<void>((resolve) => waiters.push(resolve));
  let over = false;
  const answer = (r: Running, outcome: { value: unknown } | { error: unknown }) => {
    r.answered = true;
    if ('value' in outcome) r.member.resolve(outcome.value);
    else r.member.reject(outcome.error);
  };
  for (const r of running) {
    const send: GroupSend = (statements, last, checked) =>
      new Promise((resolve, reject) => {
        if (over || r.refused || r.call)
          return reject(
            new Error(
              'a hot-lock unit sent after its group ended, while refused, or while its previous call was pending',
            ),
          );
        r.call = { statements, last, checked, resolve, reject };
        poke();
      });
    r.done = r.member.work(send).then(
      (value) => void ((r.outcome = { value }), poke()),
      (error: unknown) => void ((r.outcome = { error }), poke()),
    );
  }
  const live = () => running.filter((r) => !r.answered);
  try {
    await transport(async (tx) => {
      for (;;) {
        while (!live().every((r) => r.outcome || r.call)) await changed();
        for (const r of live()) {
          if (!r.outcome || !('error' in r.outcome)) continue;
          // Refused by its check, or failed before anything of it was sent: it wrote nothing, its error is its answer.
          if (r.refused || !r.sent) answer(r, r.outcome);
          else throw new GroupFailed(true, r.outcome.error);
        }
        const calls = live().filter((r) => r.call);
        if (calls.length === 0) {
          if (tx.begun) await closing(tx, []);
          return;
        }
        const before = calls.filter((r) => !r.call!.last);
        const round = before.length > 0 ? before : calls;
        for (const r of round) r.sent = true;
        const statements = round.flatMap((r) => r.call!.statements);
        const answers =
          before.length > 0
            ? await tx.send(statements, false).catch((error: unknown) => Promise.reject(new GroupFailed(true, error)))
            : await closing(tx, statements);
        let at = 0;
        for (const r of round) {
          const call = r.call!;
          r.call = undefined;
          const rows = answers.slice(at, (at += call.statements.length));
          try {
            if (call.checked) rows[0] = await call.checked(rows[0]!);
          } catch (refusal) {
            r.refused = true;
            call.reject(refusal);
            continue;
          }
          call.resolve(rows);
        }
        if (before.length === 0) break;
      }
    });
  } catch (error) {
    const failure = error instanceof GroupFailed ? error : new GroupFailed(true, error);
    groupStats.failedGroups += 1;
    over = true;
    for (const r of running) r.call?.reject(failure);
    const left = live();
    for (const r of left) r.answered = true;
    if (!failure.rerun) {
      for (const r of left) r.member.reject(failure.reason);
      return;
    }
    await Promise.all(left.map((r) => r.member.alone().then(r.member.resolve, r.member.reject)));
    return;
  }
  // Committed: every unit is answered what its work ends with (its code after its last statement may still run).
  over = true;
  await Promise.all(
    live().map(async (r) => {
      await r.done;
      answer(r, r.outcome!);
    }),
  );
}

/** The last query (with the COMMIT); a failure is rerun only when the transaction is known not to have committed. */
async function closing(tx: GroupTransaction, statements: Statement[]): Promise<Rows[]> {
  try {
    return await tx.send(statements, true);
  } catch (error) {
    throw new GroupFailed(await tx.uncommitted().catch(() => false), error);
  }
}
