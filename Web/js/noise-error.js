// Failures of the Noise layer and the limits the Noise specification (revision 34) fixes.

/**
 * A stable kind, meant for code (the message carries diagnostics for people and may change):
 * - `invalidKey`: a key of the wrong size, or a remote public key X25519 refuses (low order).
 * - `invalidPattern`: a handshake pattern that breaks the rules of Noise section 7.3.
 * - `missingKey`: a key the pattern needs (s, rs, or a pre-message key) was not given.
 * - `wrongTurn`: `writeMessage` when a read is due, or the reverse.
 * - `busy`: a handshake call while another one on the same state has not finished (WebCrypto
 *   makes the calls asynchronous; they must not overlap).
 * - `handshakeFinished`: a handshake call after the last handshake message.
 * - `handshakeNotFinished`: transport keys asked for before the handshake has finished.
 * - `messageTooLong`: a message or ciphertext over the 65535-byte Noise limit (section 3).
 * - `messageTooShort`: a handshake message shorter than its tokens need.
 * - `decryptionFailed`: AEAD authentication failed: tampered, reordered, replayed, truncated,
 *   or the wrong keys.
 * - `nonceExhausted`: the nonce reached 2^64 − 1, which is reserved (section 5.1).
 * @typedef {'invalidKey' | 'invalidPattern' | 'missingKey' | 'wrongTurn' | 'busy' | 'handshakeFinished'
 *   | 'handshakeNotFinished' | 'messageTooLong' | 'messageTooShort' | 'decryptionFailed' | 'nonceExhausted'}
 *   NoiseErrorKind
 */

/** A failure in the Noise layer, with a stable `kind`. */
export class NoiseError extends Error {
  /**
   * @param {NoiseErrorKind} kind
   * @param {string} diagnostics
   * @param {unknown} [cause] the lower-level error, if any
   */
  constructor(kind, diagnostics, cause) {
    super(`${kind}: ${diagnostics}`, cause === undefined ? undefined : { cause });
    this.name = 'NoiseError';
    /** @readonly @type {NoiseErrorKind} */
    this.kind = kind;
  }
}

/** Limits fixed by the Noise specification (revision 34). */
export const NoiseLimits = Object.freeze({
  /** Section 3: every Noise message, handshake or transport, is at most 65535 bytes. */
  maximumMessageLength: 65535,
  /** Section 5.1: the AEAD tag every encryption under a key adds. */
  tagLength: 16,
  /** The largest plaintext one transport message can carry: 65535 − 16. */
  maximumPlaintextLength: 65535 - 16,
  /** Section 5.1: nonce 2^64 − 1 is reserved; a CipherState that reaches it refuses to work. */
  reservedNonce: 0xffffffffffffffffn,
  /** Section 4: DHLEN for Curve25519, the length of a public key and of a DH output. */
  dhLength: 32,
  /** Section 4.2: every cipher key is 32 bytes. */
  keyLength: 32,
});
