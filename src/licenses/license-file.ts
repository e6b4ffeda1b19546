/**
 * The license file's layout (D-101, Keygen's): a signed JSON document, armoured. `enc` is base64 of the
 * JSON payload, `sig` base64 of the Ed25519 signature of the ASCII text "license/" + enc, and the file is
 * base64 of JSON {enc, sig, alg, kid} in lines of 64 between BEGIN and END lines.
 */
import { sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

// The callback form signs on libuv's thread pool: the signature (most of a checkout's CPU) leaves the event loop free.
const signOffLoop = promisify((data: Buffer, key: KeyObject, done: (error: Error | null, signature: Buffer) => void) => sign(null, data, key, done));

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

export async function signLicenseFile(payload: LicenseFilePayload, kid: string, privateKey: KeyObject): Promise<string> {
  const enc = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
  const sig = (await signOffLoop(Buffer.from(SIGNING_PREFIX + enc, 'ascii'), privateKey)).toString('base64');
  const body = Buffer.from(JSON.stringify({ enc, sig, alg: LICENSE_FILE_ALG, kid }), 'utf8').toString('base64');
  return `${LICENSE_FILE_BEGIN}\n${body.match(/.{1,64}/g)!.join('\n')}\n${LICENSE_FILE_END}\n`;
}
