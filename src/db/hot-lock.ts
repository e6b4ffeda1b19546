import type { Knex } from 'knex';
import { fastQuery, pendingGateOf, withRawConnection, type RawConnection, type StatementGuard } from './fast-query.ts';
import type { Db } from './knex.ts';
import {
  inHotLockGroup,
  type Checked,
  type GroupSend,
  type GroupTransaction,
  type GroupTransport,
} from './hot-lock-group.ts';
import { inlined, type LiteralStatement, type LiteralValues } from './literal.ts';
import { executable, preparedOn, rereadPrepared, statementName } from './prepared-statements.ts';

/**
 * A transaction around a hot lock: one that every transaction of its kind queues on until commit (the year's
 * invoice-number counter, D-50). Two things make the lock's hold short.
 *
 * 1. No round trip to Node while it is held. A transaction's statements each wait, on the way back, behind
 *    every other request in this process's event loop (several milliseconds under load), while PostgreSQL runs
 *    them in a tenth of that. So the statement that takes the lock is the transaction's last, and it is sent
 *    with the COMMIT in ONE simple-protocol query (`finish`): PostgreSQL runs the statement and commits without
 *    waiting for Node. The simple protocol takes no bind parameters, so that statement carries its values as
 *    literals (db/literal.ts, pg's own quoting).
 * 2. No wait for the disk under the lock. With a synchronous commit PostgreSQL releases a transaction's locks only
 *    after its commit record is flushed (about 4 ms on the benchmark machine), paid one creation after another.
 *    The final query sets `synchronous_commit` off for the transaction, commits (the lock is free, the rows
 *    visible, once the commit record is in the WAL) and then, still in the same round trip and outside any lock,
 *    waits until the WAL is flushed past it, so what the caller answers is as durable as after a synchronous
 *    commit (and concurrent waits share one flush).
 *
 * Why this is safe for gapless numbers: a transaction that takes the next number waited for this one's lock,
 * so its commit record comes later in the WAL, and WAL is flushed in order; a crash keeps a prefix of the
 * commits, never a later number without the earlier ones. What it trades: between the commit and the flush
 * (a few milliseconds) other sessions can read rows that a crash of the server in that instant would lose;
 * the workers act on them only after a synchronous commit of their own (claiming a delivery or a job), which
 * flushes the WAL past this commit first.
 *
 * knex owns the transaction (its BEGIN, its ROLLBACK on an error): `finish` sends `COMMIT; BEGIN` so that knex's
 * own COMMIT afterwards ends an empty transaction, outside the lock. A statement that fails in the final query
 * stops it there (PostgreSQL skips the rest of a query string after an error): nothing commits, and knex rolls
 * back as for any error. Nothing may run on the transaction after `finish`.
 *
 * 3. No queue of transactions on the lock within a process. Concurrent one-statement creations (aloneHotLock) and
 *    pooled transactions (pooledHotLockTransaction) of this process run as ONE transaction (hot-lock-group.ts, group
 *    commit): the lock is taken, and a commit and a flush paid, once per group; its numbers are consecutive.
 *
 * Inside the caller's transaction (`db` is one) nothing commits here: `finish` runs its statement alone and the
 * caller's commit applies; within another hot-lock transaction the statement also turns `synchronous_commit`
 * off, and that transaction waits for the flush after its commit. On a server older than PostgreSQL 17, which
 * cannot be asked to flush, the final query commits synchronously.
 */
export interface HotLock {
  /** Runs a statement (values inlined, no `?`) before the last one; answers its rows. */
  run<T = Record<string, unknown>>(sql: string | LiteralStatement): Promise<T[]>;
  /**
   * Runs the transaction's last statement (values inlined, no `?`) and, when the transaction is this one's, commits in the same round trip.
   * `flushLater`: answer once committed, and wait for the WAL flush when the transaction ends instead (a caller
   * whose next step waits for this commit, not for its durability: the sweep's next batch takes its numbers then).
   */
  finish<T = Record<string, unknown>>(sql: string | LiteralStatement, options?: { flushLater?: boolean }): Promise<T[]>;
  /**
   * The request's check (its admin session) that the last statement must carry, when nothing ran before it
   * (aloneHotLock on a db with a pending gate, fast-query.ts): build the statement with it, and `finish` answers
   * its own rows once the check admitted (else throws the check's refusal).
   */
  guard?: (values: LiteralValues) => StatementGuard;
  /** The user of the request's session, when its check was settled before the transaction began (for its audit actor). */
  sessionUser?: { userId: string; email: string };
}

interface Owned {
  /** Some statement ran with synchronous_commit off: the owner waits for the flush after its commit. */
  relaxed: boolean;
  finished: boolean;
  /** The server can be asked to flush (PostgreSQL 17+); else nothing is relaxed. */
  flushable: boolean;
  /** finish committed without waiting for the flush (`flushLater`): the owner waits after the transaction. */
  flushOwed: boolean;
}

const owners = new WeakMap<object, Owned>();

const RELAX = 'set local synchronous_commit = off';
const FLUSH = `select pg_logical_emit_message(false, 'billing.flush', '', true)`;

/**
 * `options.flushed`: instead of waiting for the WAL flush after the commit, hand the wait to the caller, which must
 * await it before it reports the work done (the sweep's next batch starts meanwhile; its totals wait for it).
 */
export async function inHotLockTransaction<T>(
  given: Db,
  work: (trx: Knex.Transaction, lock: HotLock) => Promise<T>,
  options: { flushed?: (wait: Promise<void>) => void } = {},
): Promise<T> {
  // A request whose session was to be checked by its one statement does more here: its session first, by a lookup.
  const gate = pendingGateOf(given);
  const user = gate && (await gate.settle());
  const sessionUser = user && { userId: user.user_id, email: user.email };
  const db = gate ? gate.db : given;
  if ((db as Knex.Transaction).isTransaction) {
    const trx = db as Knex.Transaction;
    const owner = owners.get(trx);
    const relax = () => owner !== undefined && owner.flushable && !owner.relaxed;
    const nested = <R>(statement: string | LiteralStatement) =>
      send<R>(
        trx,
        relax() ? [RELAX, text(statement)] : [text(statement)],
        () => owner && (owner.relaxed ||= owner.flushable),
      );
    return work(trx, { run: nested, finish: nested, sessionUser });
  }
  const flushable = await canWaitForFlush(db);
  const state: Owned = { relaxed: false, finished: false, flushable, flushOwed: false };
  const result = await (db as Knex).transaction(async (trx) => {
    owners.set(trx, state);
    const run = <R>(statement: string | LiteralStatement) => {
      if (state.finished) throw new Error('a statement after the hot-lock transaction finished');
      const sql = text(statement);
      return send<R>(trx, flushable && !state.relaxed ? [RELAX, sql] : [sql], () => (state.relaxed = flushable));
    };
    const finish = <R>(statement: string | LiteralStatement, options: { flushLater?: boolean } = {}) => {
      if (state.finished) throw new Error('a hot-lock transaction finished twice');
      state.finished = true;
      const sql = text(statement);
      const relax = flushable && !state.relaxed ? [RELAX] : [];
      state.flushOwed = flushable && options.flushLater === true;
      // The flush wait runs in the new (empty) transaction knex will commit: after the COMMIT, outside the lock.
      return send<R>(
        trx,
        [...relax, sql, 'COMMIT', 'BEGIN', ...(flushable && !state.flushOwed ? [FLUSH] : [])],
        () => {},
      );
    };
    return work(trx, { run, finish, sessionUser });
  });
  if ((state.relaxed && !state.finished) || state.flushOwed) {
    if (options.flushed) options.flushed(waitForWalFlush(db));
    else await waitForWalFlush(db);
  }
  return result;
}

/**
 * A hot-lock transaction of its last statement alone, for a creation that reads and locks nothing before it
 * (an admin draft invoice naming its tax rate): BEGIN, the statement, the COMMIT and the flush wait are one query
 * on a pooled connection, one round trip where knex's transaction takes three. `run` is refused.
 *
 * A LiteralStatement is prepared once per connection (a PREPARE query before the first use) and executed with
 * its literals after: PostgreSQL parses and plans the big numbering statement once per connection, not per call
 * (that was a third of its CPU per creation). The name is the hash of the text, so a changed text is never run by
 * an old plan. A connection that lost what it prepared (DISCARD ALL, a pooler's other session) answers 26000, one
 * that has it unknown to us 42P05, before anything ran: what it holds is read back and the query sent once more.
 *
 * Concurrent ones of this process share a transaction (hot-lock-group.ts); one that finds nothing in flight runs as
 * described here.
 *
 * On a db carrying a request's pending session check (fast-query.ts gatedDb: an admin write marked
 * sessionInWrite), the statement must carry the check (`guard`): the session is read by the statement that
 * writes, which writes nothing unless it admits, and `finish` answers 401/403 from it (auth/service.ts).
 */
export function aloneHotLock(given: Db): HotLock {
  const gate = pendingGateOf(given);
  const db = gate ? gate.db : given;
  let guarded = false;
  return {
    ...(gate && {
      guard: (values: LiteralValues) => {
        guarded = true;
        return gate.guard(values);
      },
    }),
    run() {
      throw new Error('a one-statement hot-lock transaction runs nothing before its last statement');
    },
    async finish<R>(statement: string | LiteralStatement): Promise<R[]> {
      assertNoPlaceholder(typeof statement === 'string' ? statement : statement.text);
      // Without the check in it, the statement would write for a request whose session nobody checked.
      if (gate && !guarded)
        throw new Error('a hot-lock statement of a request whose session it must check was built without its guard');
      const flushable = await canWaitForFlush(db);
      // The statement was built with the guard: it answers the check (refused: nothing was written).
      const checked = gate && ((rows: Record<string, unknown>[]) => gate.accept(rows));
      const alone = () =>
        onPreparingConnection(db, async (connection, sent) => {
          const [rows] = await transactionOn(connection, sent, flushable).send([statement], true);
          return (checked ? checked(rows!) : rows!) as R[];
        });
      // Concurrent creations of this process commit together (db/hot-lock-group.ts).
      return inHotLockGroup(db, groupTransport(db, flushable), {
        work: async (send) => (await send([statement], true, checked))[0] as R[],
        alone,
      });
    },
  };
}

/** Errors of a query that ran nothing because of what the session holds prepared: undefined_pstatement, duplicate_pstatement. */
const RETRIED = new Set(['26000', '42P05']);

const text = (statement: string | LiteralStatement) => (typeof statement === 'string' ? statement : inlined(statement));

function assertNoPlaceholder(sql: string): void {
  if (sql.includes('?'))
    throw new Error(
      'a hot-lock statement holds "?": knex would read it as a placeholder (write values with db/literal.ts)',
    );
}

/**
 * `statements` as one simple-protocol query on the transaction; answers the rows of the one that is not a
 * setting or transaction command (the caller's). `sent` runs once the query succeeded.
 */
async function send<T>(trx: Knex.Transaction, statements: string[], sent: () => unknown): Promise<T[]> {
  const own = statements.findIndex((s) => s !== RELAX && s !== 'COMMIT' && s !== 'BEGIN' && s !== FLUSH);
  assertNoPlaceholder(statements[own]!);
  // No bindings: knex sends the text as it is, and pg sends it by the simple protocol, which allows several statements.
  const result = (await trx.raw(statements.join(';\n'))) as { rows: T[] } | { rows: T[] }[];
  sent();
  return Array.isArray(result) ? result[own]!.rows : result.rows;
}

/**
 * Returns once the WAL is on disk up to now: a non-transactional logical message written with `flush`
 * (PostgreSQL 17+, any role may call it) forces the flush past everything committed before it.
 */
async function waitForWalFlush(db: Db): Promise<void> {
  await fastQuery(db, FLUSH, [], 'billing_wal_flush');
}

const flushable = new WeakMap<object, Promise<boolean>>();

/** Whether the server can be asked to flush (PostgreSQL 17+): asked once per pool, again after a failed ask. */
function canWaitForFlush(db: Db): Promise<boolean> {
  let known = flushable.get(db);
  if (!known) {
    known = fastQuery<{ version: number }>(db, `select current_setting('server_version_num')::int as version`, []).then(
      ([row]) => row!.version >= 170000,
    );
    known.catch(() => flushable.delete(db));
    flushable.set(db, known);
  }
  return known;
}

/** A HotLock whose transaction is on a raw pooled connection (pooledHotLockTransaction). */
export interface PooledHotLock extends HotLock {
  /** Runs statements before the last one in ONE query (the first query also opens the transaction); answers each one's rows, in order. */
  runAll(statements: (string | LiteralStatement)[]): Promise<Record<string, unknown>[][]>;
}

/**
 * inHotLockTransaction without knex's transaction (issue 20, subscription creation): on a raw pooled connection,
 * the first query opens the transaction itself (`BEGIN; set local synchronous_commit = off; <statements>`) and
 * `finish` sends the last statement with the COMMIT and the flush wait, so a transaction of a first read and a
 * last statement is two round trips where knex's takes four (its BEGIN, and its COMMIT of the empty transaction
 * `finish` leaves it). LiteralStatements are prepared once per connection and executed with their literals, as
 * aloneHotLock does (the same names and bookkeeping).
 *
 * `work` gets a stand-in for the transaction: any use of it as a Db throws (every statement goes through the
 * lock); it serves only as the transaction's identity for state kept per transaction (credits/ledger.ts's kept
 * balances). An error in `work` or in a query rolls the transaction back before the connection goes back; after a
 * failed query what the connection holds prepared is read back. A query refused for what the session holds
 * prepared (26000, 42P05) ran none of its own statements, but the transaction is aborted by then: it is rolled back
 * and `work` runs once more from the start, so it must do nothing but build and send its statements. `work` that returns without `finish`
 * is committed (and waits for the flush). Inside a caller's transaction (`db` is one) it is inHotLockTransaction's
 * nested case, `runAll` sending each statement in turn.
 *
 * On a db carrying a request's pending session check (an admin write marked sessionInWrite: subscription creation)
 * the check rides in the first query: its first statement must be built with `lock.guard` and writes nothing
 * unless the session admits; a refusal (401/403) rolls the transaction back, an admission sets `lock.sessionUser`
 * (the audit actor of the last statement). One round trip fewer than a lookup first (sessionInFirstQuery).
 *
 * Concurrent ones of this process (and aloneHotLock's) share a transaction (hot-lock-group.ts); `key` keeps apart
 * those that must not (two that read and spend one customer's store credit).
 */
export async function pooledHotLockTransaction<T>(
  given: Db,
  work: (trx: Db, lock: PooledHotLock) => Promise<T>,
  options: { key?: string } = {},
): Promise<T> {
  // A request whose session its write checks (sessionInWrite): the check rides in the first query (see below).
  const gate = pendingGateOf(given);
  const db = gate ? gate.db : given;
  if ((db as Knex.Transaction).isTransaction) {
    const inTurn = (lock: HotLock) => async (statements: (string | LiteralStatement)[]) => {
      const answers: Record<string, unknown>[][] = [];
      for (const statement of statements) answers.push(await lock.run(statement));
      return answers;
    };
    return inHotLockTransaction(given, (trx, lock) => work(trx, { ...lock, runAll: inTurn(lock) }));
  }
  const flushable = await canWaitForFlush(db);
  // The check rides in the first query while it is pending; a run again after a failed group (hot-lock-group.ts)
  // finds it settled there, and takes the session's user it admitted.
  const lockOn = async (send: GroupSend) => {
    const check = gate && !gate.settled ? sessionInFirstQuery(gate) : undefined;
    const user = gate?.settled ? await gate.settle() : undefined;
    return pooledLock(send, check, user && { userId: user.user_id, email: user.email });
  };
  const alone = () =>
    onPreparingConnection(db, async (connection, sent) => {
      const tx = transactionOn(connection, sent, flushable);
      const send: GroupSend = async (statements, last, checked) => {
        const answers = await tx.send(statements, last);
        if (checked) answers[0] = await checked(answers[0]!);
        return answers;
      };
      const result = await work(unusableTransaction(), await lockOn(send));
      if (tx.begun && !tx.finished) await tx.send([], true);
      return result;
    });
  // Concurrent creations of this process commit together (db/hot-lock-group.ts): `key` keeps apart the ones that
  // must not share a transaction (the same customer's store credit).
  return inHotLockGroup(db, groupTransport(db, flushable), {
    key: options.key,
    work: async (send) => work(unusableTransaction(), await lockOn(send)),
    alone,
  });
}

/** The PooledHotLock whose statements `send` sends; the first carries the session check when there is one pending. */
function pooledLock(
  send: GroupSend,
  check: ReturnType<typeof sessionInFirstQuery> | undefined,
  sessionUser: HotLock['sessionUser'],
): PooledHotLock {
  let finished = false;
  const call = (statements: (string | LiteralStatement)[], last: boolean) => {
    if (finished) throw new Error('a statement after the hot-lock transaction finished');
    // Without the check in it, the first statement would write for a request whose session nobody checked.
    if (check && !check.guarded())
      throw new Error('the first statement of a request whose session it must check was built without its guard');
    for (const s of statements) assertNoPlaceholder(typeof s === 'string' ? s : s.text);
    finished = last;
    const checked: Checked | undefined = check?.pending() ? (rows) => check.accept(lock, rows) : undefined;
    return send(statements, last, checked);
  };
  const lock: PooledHotLock = {
    ...(check && { guard: check.guard }),
    ...(sessionUser && { sessionUser }),
    runAll: (statements) => call(statements, false),
    run: async <R>(statement: string | LiteralStatement) => (await call([statement], false))[0] as R[],
    finish: async <R>(statement: string | LiteralStatement) => (await call([statement], true))[0] as R[],
  };
  return lock;
}

/**
 * A hot-lock transaction on a pooled connection, one query per `send`: the first opens it (`BEGIN; set local
 * synchronous_commit = off`), a `closing` one ends with the COMMIT and the flush wait. LiteralStatements are
 * prepared once per connection (executable; one PREPARE per text even when a group sends it several times).
 */
function transactionOn(
  connection: RawConnection,
  sent: Attempt,
  flushable: boolean,
): GroupTransaction & { readonly finished: boolean } {
  const state = { begun: false, finished: false };
  return {
    get begun() {
      return state.begun;
    },
    get finished() {
      return state.finished;
    },
    async send(statements, closing) {
      if (state.finished) throw new Error('a statement after the hot-lock transaction finished');
      const opening = state.begun ? [] : ['BEGIN', ...(flushable ? [RELAX] : [])];
      const ending = closing ? ['COMMIT', ...(flushable ? [FLUSH] : [])] : [];
      const run = statements.map((s) => executable(connection, s));
      // Each PREPARE is a query of its own: PostgreSQL keeps the whole query string a statement was prepared in as
      // its source and copies it into every EXECUTE's portal, which for a group's query (every unit's literals) was
      // tens of kilobytes per execution (perf: MemoryContextStrdup 6% of a backend's CPU). Once per connection and text.
      for (const prepare of new Set(run.flatMap((r) => r.prepare))) {
        await sent.query(prepare);
      }
      statements.forEach(
        (s, i) => run[i]!.prepare.length > 0 && preparedOn(connection).add(statementName(s as LiteralStatement)),
      );
      const sql = [...opening, ...run.map((r) => r.sql), ...ending];
      state.begun = sent.open = true;
      const answer = await sent.query<Record<string, unknown>>(sql.join(';\n'));
      // pg answers a query of one statement with its result, of several with an array of them.
      const results = Array.isArray(answer) ? answer : [answer];
      if (closing) state.finished = !(sent.open = false);
      const first = sql.length - ending.length - run.length;
      return run.map((_, i) => results[first + i]!.rows);
    },
    async uncommitted() {
      // A query that failed before its COMMIT leaves the transaction aborted (25P02 to anything); after it, none is open.
      return connection.query({ text: 'select 1' }).then(
        () => false,
        (error: { code?: string }) => error.code === '25P02',
      );
    },
  };
}

/** How a group (hot-lock-group.ts) opens its transaction: on a pooled connection, rolled back if it fails, no retry. */
function groupTransport(db: Db, flushable: boolean): GroupTransport {
  return (attempt) =>
    onPreparingConnection(db, (connection, sent) => attempt(transactionOn(connection, sent, flushable)), {
      retry: false,
    });
}

/** An attempt of onPreparingConnection: how it sends its queries, and whether it has a transaction open. */
interface Attempt {
  /** Sends `text` by the simple protocol; answers one result, or one per statement when it holds several. */
  query<R>(text: string): Promise<{ rows: R[] } | { rows: R[] }[]>;
  /** A transaction the attempt began and has not ended: rolled back if the attempt fails. */
  open: boolean;
}

/**
 * `attempt` on a pooled connection that keeps statements prepared (executable): the one rule for what a failure
 * leaves behind. A failed query aborted its transaction and skipped the rest of its text, and an attempt that fails
 * with a transaction open leaves it so: either is rolled back before the connection goes back. After a failed
 * query what the connection holds prepared is read back rather than guessed (a PREPARE may or may not have run);
 * a query refused for what it held (RETRIED) ran none of its own statements, so `attempt` runs once more.
 */
async function onPreparingConnection<T>(
  db: Db,
  attempt: (connection: RawConnection, sent: Attempt) => Promise<T>,
  options: { retry?: boolean } = {},
): Promise<T> {
  return withRawConnection(db, async (connection) => {
    for (let n = 1; ; n++) {
      let failedQuery = false;
      const sent: Attempt = {
        open: false,
        async query<R>(text: string) {
          try {
            return (await connection.query({ text })) as unknown as { rows: R[] } | { rows: R[] }[];
          } catch (error) {
            failedQuery = true;
            throw error;
          }
        },
      };
      try {
        return await attempt(connection, sent);
      } catch (error) {
        if (failedQuery || sent.open) await connection.query({ text: 'ROLLBACK' }).catch(() => undefined);
        if (!failedQuery) throw error;
        await rereadPrepared(connection);
        if (n === 1 && options.retry !== false && RETRIED.has((error as { code?: string }).code ?? '')) continue;
        throw error;
      }
    }
  });
}

/**
 * The session check of a pooledHotLockTransaction on a db carrying a pending gate (fast-query.ts gatedDb: an admin
 * write marked sessionInWrite): the FIRST statement of the first query must be built with `guard` (it writes
 * nothing unless the session admits, and answers the check's columns); `accept` reads them (throwing the check's
 * 401/403, after which the transaction is rolled back: nothing was written) and gives the lock the session's user
 * for the audit row of the last statement (`sessionUser`), and no `guard` any more: the check is done once.
 */
function sessionInFirstQuery(gate: NonNullable<ReturnType<typeof pendingGateOf>>) {
  let guarded = false;
  return {
    guard: (values: LiteralValues): StatementGuard => {
      guarded = true;
      return gate.guard(values);
    },
    guarded: () => guarded || gate.settled,
    pending: () => !gate.settled,
    async accept(lock: HotLock, rows: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
      const own = gate.accept(rows);
      const user = await gate.settle();
      lock.sessionUser = { userId: user.user_id, email: user.email };
      delete lock.guard;
      return own;
    },
  };
}

/** The transaction of a pooledHotLockTransaction as a Db: an identity only, refusing every use. */
function unusableTransaction(): Db {
  const refuse = (): never => {
    throw new Error(
      'a statement on a pooled hot-lock transaction outside its lock: send it with run, runAll or finish',
    );
  };
  return new Proxy(function transaction() {}, { get: refuse, apply: refuse, has: refuse }) as unknown as Db;
}
