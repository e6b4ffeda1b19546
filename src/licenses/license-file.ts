/**
 * The license file's layout (D-101, Keygen's): a signed JSON document, armoured. `enc` is base64 of the
 * JSON payload, `sig` base64 of the Ed25519 signature of the ASCII text "license/" + enc, and the file is
 * base64 of JSON {enc, sig, alg, kid} in lines of 64 between BEGIN and END lines.
 */
import { sign, type KeyObject } from 'node:crypto';

export const LICENSE_FILE_BEGIN = '-----BEGIN LICENSE FILE-----';
export const LICENSE_FILE_END = '-----END LICENSE FILE-----';
export const LICENSE_FILE_ALG = 'base64+ed25519';
/** What the signature covers before `enc`: a file of another kind signed by the same key never passes as a license. */
export const SIGNING_PREFIX = 'license/';

export interface LicenseFilePayload {
  license: {
    id: string;
    licenseKey: string;
    customerId: string;
    productId: string;
    status: string;
    features: Record<string, unknown>;
    maxActivations: number | null;
    expiresAt: string | null;
  };
  deviceId: string | null;
  issuedAt: string;
  expiresAt: string;
}

/**
 * Signs on the event loop (about 40 µs for Ed25519). The callback form would sign on libuv's thread pool, but
 * handing each signature to a worker and back costs more than it saves on a busy machine: the worker's wake-up
 * preempted the web process inside the hand-off (a checkout's main thread spent 18% of its time there under
 * load, against 7.5% signing itself; docs/decisions.md, Request overhead on the read paths).
 */
export function signLicenseFile(payload: LicenseFilePayload, kid: string, privateKey: KeyObject): string {
  const enc = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
  const sig = sign(null, Buffer.from(SIGNING_PREFIX + enc, 'ascii'), privateKey).toString('base64');
  const body = Buffer.from(JSON.stringify({ enc, sig, alg: LICENSE_FILE_ALG, kid }), 'utf8').toString('base64');
  return `${LICENSE_FILE_BEGIN}\n${armourLines(body)}${LICENSE_FILE_END}\n`;
}

/** Base64 text in lines of 64 characters, each ended by a newline. */
function armourLines(text: string): string {
  let lines = '';
  for (let at = 0; at < text.length; at += 64) lines += `${text.slice(at, at + 64)}\n`;
  return lines;
}
