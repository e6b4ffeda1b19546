/**
 * Signed license files kept a few seconds for a device that checks out again (issue 20, read paths). The
 * Ed25519 signature is a fifth of a checkout's CPU; a file signed moments ago for exactly the same content is as
 * good an answer as a new one. Only the signing is saved: every checkout still runs its own statement and opens
 * its signing key, so an unknown key, a license no longer active, a device no longer activated or live, a rotated
 * key (another kid) and a key this process may not use are decided as before, at once. The reused file is the one
 * signed then: its issuedAt is up to REUSE_MS old and its expiresAt as much earlier (files last hours to a year).
 * Kept per checkout context (one per configuration: an app), bounded, forgotten on restart.
 */

/** A signed file as file-checkout.ts answers it (CheckedOutFile; not imported, which would be a circle). */
interface SignedFile {
  licenseFile: string;
  issuedAt: Date;
  expiresAt: Date;
  kid: string;
}

export const REUSE_MS = 5_000;
const MAX_FILES = 5_000;

const stores = new WeakMap<object, Map<string, SignedFile>>();

function storeOf(owner: object): Map<string, SignedFile> {
  let store = stores.get(owner);
  if (!store) {
    store = new Map();
    stores.set(owner, store);
  }
  return store;
}

/**
 * What identifies a file's signed content apart from its times: the key that signs it, its lifetime, the device
 * and the license's fields as written into the payload (`license` is that part of the payload).
 */
export function reuseKey(kid: string, ttlSeconds: number, deviceId: string | null, license: object): string {
  return `${kid}\n${ttlSeconds}\n${deviceId ?? ''}\n${JSON.stringify(license)}`;
}

/** The file `owner` kept under `key` if it was issued less than REUSE_MS before `now` (the database's clock of this checkout). */
export function reusableFile(owner: object, key: string, now: Date): SignedFile | undefined {
  const store = storeOf(owner);
  const file = store.get(key);
  if (!file) return undefined;
  const age = now.getTime() - file.issuedAt.getTime();
  if (age >= 0 && age < REUSE_MS) return file;
  store.delete(key);
  return undefined;
}

export function keepFile(owner: object, key: string, file: SignedFile): void {
  const store = storeOf(owner);
  store.delete(key);
  // The oldest kept file goes first (a Map iterates in insertion order).
  if (store.size >= MAX_FILES) store.delete(store.keys().next().value!);
  store.set(key, file);
}
