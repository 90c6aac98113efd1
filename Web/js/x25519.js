// X25519 of RFC 7748 through WebCrypto (`crypto.subtle`, algorithm "X25519"): key generation
// and Diffie-Hellman. Browsers offer it only in a secure context (https:, or http://127.0.0.1
// and localhost). Private keys stay CryptoKey objects: generated non-extractable, they can be
// kept in IndexedDB (structured clone) without their bytes ever reaching JavaScript.

/** The length of a public key, a private key and a shared secret (DHLEN, Noise section 12.1). */
export const KEY_LENGTH = 32;

const ALGORITHM = 'X25519';

/** The base point u = 9 (RFC 7748 section 4.1): DH(private key, base point) is its public key. */
const BASE_POINT = (() => {
  const point = new Uint8Array(KEY_LENGTH);
  point[0] = 9;
  return point;
})();

/**
 * @typedef {object} KeyPair
 * @property {CryptoKey} privateKey an X25519 private key usable for `deriveBits`
 * @property {Uint8Array} publicKey the raw 32-byte public key
 */

/** @returns {SubtleCrypto} */
function subtle() {
  const api = globalThis.crypto && globalThis.crypto.subtle;
  if (!api) {
    throw new Error('X25519: WebCrypto (crypto.subtle) is missing; browsers offer it only in a secure context');
  }
  return api;
}

/**
 * A fresh key pair (GENERATE_KEYPAIR of Noise section 4.1). The private key is not extractable
 * unless asked for.
 * @param {{extractable?: boolean}} [options]
 * @returns {Promise<KeyPair>}
 */
export async function generateKeyPair(options = {}) {
  const pair = /** @type {CryptoKeyPair} */ (
    await subtle().generateKey({ name: ALGORITHM }, options.extractable === true, ['deriveBits']));
  const publicKey = new Uint8Array(await subtle().exportKey('raw', pair.publicKey));
  return { privateKey: pair.privateKey, publicKey };
}

/**
 * The raw public key of a private key, computed as X25519(k, 9): works for non-extractable keys,
 * such as one read back from IndexedDB.
 * @param {CryptoKey} privateKey
 * @returns {Promise<Uint8Array>}
 */
export function publicKeyOf(privateKey) {
  return dh(privateKey, BASE_POINT);
}

/**
 * X25519(private key, public key): the 32-byte shared secret. Throws for a public key that is
 * not 32 bytes, and for one that gives the all-zero output (a low-order point; RFC 7748 section
 * 6.1 and Noise section 12.1 allow refusing it, and WebCrypto refuses it).
 * @param {CryptoKey} privateKey
 * @param {Uint8Array} publicKey 32 bytes
 * @returns {Promise<Uint8Array>}
 */
export async function dh(privateKey, publicKey) {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== KEY_LENGTH) {
    throw new RangeError(
      `X25519: a public key is 32 bytes, got ${publicKey instanceof Uint8Array ? publicKey.length : typeof publicKey}`);
  }
  const api = subtle();
  const peer = await api.importKey('raw', publicKey, { name: ALGORITHM }, true, []);
  let bits;
  try {
    bits = await api.deriveBits({ name: ALGORITHM, public: peer }, privateKey, 8 * KEY_LENGTH);
  } catch (error) {
    throw new Error('X25519: the key agreement failed (a low-order public key gives an all-zero secret)',
      { cause: error });
  }
  const secret = new Uint8Array(bits);
  let any = 0;
  for (const byte of secret) any |= byte;
  if (any === 0) throw new Error('X25519: the shared secret is all zero (a low-order public key)');
  return secret;
}

/** The DER prefix of a PKCS#8 PrivateKeyInfo for X25519 (RFC 8410 section 7): the 32 raw bytes follow. */
const PKCS8_PREFIX = Uint8Array.of(
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20);

/**
 * A key pair from fixed private key bytes. **Insecure: for test vectors only.** A private key
 * that exists as bytes in JavaScript can leak; real keys come from `generateKeyPair`.
 * @param {Uint8Array} privateKey 32 bytes
 * @returns {Promise<KeyPair>}
 */
export async function importPrivateKeyInsecureForTestsOnly(privateKey) {
  if (!(privateKey instanceof Uint8Array) || privateKey.length !== KEY_LENGTH) {
    throw new RangeError('X25519: a private key is 32 bytes');
  }
  const pkcs8 = new Uint8Array(PKCS8_PREFIX.length + KEY_LENGTH);
  pkcs8.set(PKCS8_PREFIX);
  pkcs8.set(privateKey, PKCS8_PREFIX.length);
  const key = await subtle().importKey('pkcs8', pkcs8, { name: ALGORITHM }, false, ['deriveBits']);
  pkcs8.fill(0);
  return { privateKey: key, publicKey: await publicKeyOf(key) };
}
