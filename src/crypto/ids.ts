/**
 * Ids the service makes itself: UUIDv7 for rows (D-2 allows v4 or v7) and pooled randomness for any random id.
 *
 * Why v7 (docs/decisions.md "Time-ordered row ids"): a v7 id starts with its creation time in milliseconds, so the rows
 * a moment writes sit together at the right edge of every index keyed by an id (primary keys, an invoice's lines, an
 * event's invoice) instead of at random pages of it. PostgreSQL then appends to the index's last page without a descent
 * from its root, and the pages a renewal sweep touches stay few and cached. The database's defaults are PostgreSQL's
 * own uuidv7() (migration 20261126090000), with the same layout.
 */
import { randomBytes } from 'node:crypto';

/**
 * Random bytes drawn 4 kB at a time, each handed out once (as node's randomUUID pools its own): a draw per id was a
 * measurable share of a creation (issue 20).
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = POOL_BYTES;

/** `n` (at most 4 kB) fresh random bytes, never handed out before. */
export function pooledRandomBytes(n: number): Buffer {
  if (used + n > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  used += n;
  return pool.subarray(used - n, used);
}

let lastMs = 0;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then 12 bits counting up within the millisecond (so the ids this
 * process makes ascend, as PostgreSQL's own do), then 62 random bits.
 */
export function newUuid(): string {
  let ms = Date.now();
  if (ms > lastMs) {
    lastMs = ms;
    // A random start in the lower half leaves room to count up within the millisecond.
    sequence = pooledRandomBytes(1)[0]! << 3;
  } else {
    sequence += 1;
    // 4,096 ids in one millisecond: borrow the next one (the clock catches up).
    if (sequence > 0xfff) {
      lastMs += 1;
      sequence = 0;
    }
    ms = lastMs;
  }
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  pooledRandomBytes(8).copy(bytes, 8);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const BASE32 = '0123456789abcdefghijklmnopqrstuv';

/**
 * An event id's body (D-70): 24 lowercase base32 characters, the first 10 the creation time in milliseconds, the other
 * 14 random (70 bits). Unpredictable as the fully random id it replaced, but time-ordered, so a sweep's events and
 * their deliveries are appended at the right edge of `events_pkey` and of the deliveries' (event_id, endpoint_id) key
 * instead of landing on random pages of indexes that outgrow memory (docs/decisions.md, "Time-ordered event ids").
 * Lowercase letters after digits sort the same under every collation, so the order holds in any database.
 */
export function newEventIdBody(): string {
  let out = '';
  let ms = Date.now();
  for (let i = 0; i < 10; i += 1) {
    out = BASE32[ms % 32]! + out;
    ms = Math.floor(ms / 32);
  }
  const random = pooledRandomBytes(14);
  for (let i = 0; i < 14; i += 1) out += BASE32[random[i]! & 31]!;
  return out;
}
