// The Noise Protocol Framework, revision 34, with the functions of
// Noise_*_25519_ChaChaPoly_BLAKE2s: the crypto functions of section 4 and the processing
// objects of section 5 (CipherState, SymmetricState, HandshakeState), under the spec's names.
// Patterns are data (handshake-pattern.js). Transport encryption is synchronous; the handshake
// is asynchronous because WebCrypto's X25519 is.

import { seal, open } from './chacha20poly1305.js';
import { BLAKE2S_256 } from './blake2s.js';
import { hmac } from './hmac.js';
import { generateKeyPair, dh as x25519 } from './x25519.js';
import { concatBytes } from './bytes.js';
import { NoiseError, NoiseLimits } from './noise-error.js';

/** @typedef {import('./x25519.js').KeyPair} KeyPair */
/** @typedef {import('./handshake-pattern.js').HandshakePattern} HandshakePattern */
/** @typedef {import('./handshake-pattern.js').Token} Token */

/** The function names in protocol names (sections 12.1, 12.3, 12.4). */
export const DH_NAME = '25519';
export const CIPHER_NAME = 'ChaChaPoly';
export const HASH_NAME = 'BLAKE2s';
/** HASHLEN and BLOCKLEN of BLAKE2s (section 4.3). */
export const HASHLEN = BLAKE2S_256.hashLength;
export const BLOCKLEN = BLAKE2S_256.blockLength;

const EMPTY = new Uint8Array(0);

// ## Crypto functions (section 4)

/**
 * The ChaChaPoly nonce (section 12.3): 32 zero bits, then n as a little-endian 64-bit integer.
 * @param {bigint} n
 * @returns {Uint8Array} 12 bytes
 */
export function chaChaPolyNonce(n) {
  const nonce = new Uint8Array(12);
  new DataView(nonce.buffer).setBigUint64(4, n, true);
  return nonce;
}

/**
 * REKEY(k) (section 4.2): the first 32 bytes of ENCRYPT(k, maxnonce, zerolen, zeros).
 * @param {Uint8Array} k
 * @returns {Uint8Array}
 */
function rekeyFunction(k) {
  return seal(k, chaChaPolyNonce(NoiseLimits.reservedNonce), new Uint8Array(32), EMPTY).slice(0, 32);
}

/**
 * HASH(data): BLAKE2s-256.
 * @param {...Uint8Array} data parts hashed one after another
 * @returns {Uint8Array} HASHLEN bytes
 */
export function hash(...data) {
  const state = BLAKE2S_256.create();
  for (const part of data) state.update(part);
  return state.digest();
}

/**
 * HKDF(chaining_key, input_key_material, num_outputs) of section 4.3:
 * temp_key = HMAC-HASH(chaining_key, input_key_material);
 * output1 = HMAC-HASH(temp_key, byte(0x01));
 * output2 = HMAC-HASH(temp_key, output1 ‖ byte(0x02));
 * output3 = HMAC-HASH(temp_key, output2 ‖ byte(0x03)).
 * @param {Uint8Array} chainingKey HASHLEN bytes
 * @param {Uint8Array} inputKeyMaterial 0 or 32 bytes in Noise, any length here
 * @param {2 | 3} numOutputs
 * @returns {Uint8Array[]} numOutputs outputs of HASHLEN bytes
 */
export function hkdf(chainingKey, inputKeyMaterial, numOutputs) {
  if (numOutputs !== 2 && numOutputs !== 3) throw new RangeError('Noise HKDF makes 2 or 3 outputs');
  const tempKey = hmac(BLAKE2S_256, chainingKey, inputKeyMaterial);
  const outputs = [];
  let previous = EMPTY;
  for (let index = 1; index <= numOutputs; index++) {
    previous = hmac(BLAKE2S_256, tempKey, previous, Uint8Array.of(index));
    outputs.push(previous);
  }
  tempKey.fill(0);
  return outputs;
}

/** A module-private method name: copies of the state objects, for transactions. */
const COPY = Symbol('copy');

// ## CipherState (section 5.1)

/**
 * A key k (possibly empty) and a nonce n. Nonce 2^64 − 1 is reserved: once n reaches it, every
 * encryptWithAd and decryptWithAd throws `nonceExhausted`. No ciphertext may exceed 65535 bytes.
 */
export class CipherState {
  /** @type {Uint8Array | null} */
  #k = null;
  #n = 0n;

  /** @param {Uint8Array | null} [key] a key for InitializeKey, or none (empty) */
  constructor(key = null) {
    this.initializeKey(key);
  }

  /**
   * InitializeKey(key): k = key (null means empty), n = 0.
   * @param {Uint8Array | null} key 32 bytes, or null
   */
  initializeKey(key) {
    if (key !== null && key.length !== NoiseLimits.keyLength) {
      throw new NoiseError('invalidKey', `a cipher key is 32 bytes, got ${key.length}`);
    }
    if (this.#k !== null) this.#k.fill(0);
    this.#k = key === null ? null : key.slice();
    this.#n = 0n;
  }

  /** HasKey(). @returns {boolean} */
  hasKey() {
    return this.#k !== null;
  }

  /** n: the nonce the next EncryptWithAd or DecryptWithAd under a key uses. @returns {bigint} */
  get n() {
    return this.#n;
  }

  /**
   * SetNonce(nonce).
   * @param {bigint} nonce 0 to 2^64 − 1
   */
  setNonce(nonce) {
    if (typeof nonce !== 'bigint' || nonce < 0n || nonce > NoiseLimits.reservedNonce) {
      throw new RangeError(`a Noise nonce is a 64-bit unsigned integer, got ${nonce}`);
    }
    this.#n = nonce;
  }

  /**
   * EncryptWithAd(ad, plaintext): ENCRYPT(k, n++, ad, plaintext) with a key, else a copy of the
   * plaintext.
   * @param {Uint8Array} ad
   * @param {Uint8Array} plaintext
   * @returns {Uint8Array}
   */
  encryptWithAd(ad, plaintext) {
    const k = this.#k;
    if (k === null) {
      if (plaintext.length > NoiseLimits.maximumMessageLength) throw tooLong(plaintext.length);
      return plaintext.slice();
    }
    const length = plaintext.length + NoiseLimits.tagLength;
    if (length > NoiseLimits.maximumMessageLength) throw tooLong(length);
    if (this.#n === NoiseLimits.reservedNonce) throw exhausted();
    const ciphertext = seal(k, chaChaPolyNonce(this.#n), plaintext, ad);
    this.#n += 1n;
    return ciphertext;
  }

  /**
   * DecryptWithAd(ad, ciphertext): DECRYPT(k, n++, ad, ciphertext) with a key, else a copy of
   * the ciphertext. On an authentication failure it throws `decryptionFailed` and n is not
   * incremented.
   * @param {Uint8Array} ad
   * @param {Uint8Array} ciphertext
   * @returns {Uint8Array}
   */
  decryptWithAd(ad, ciphertext) {
    if (ciphertext.length > NoiseLimits.maximumMessageLength) throw tooLong(ciphertext.length);
    const k = this.#k;
    if (k === null) return ciphertext.slice();
    if (this.#n === NoiseLimits.reservedNonce) throw exhausted();
    if (ciphertext.length < NoiseLimits.tagLength) {
      throw new NoiseError('decryptionFailed', `a ciphertext of ${ciphertext.length} bytes is shorter than the tag`);
    }
    const plaintext = open(k, chaChaPolyNonce(this.#n), ciphertext, ad);
    if (plaintext === null) {
      throw new NoiseError('decryptionFailed', `the message does not authenticate (nonce ${this.#n})`);
    }
    this.#n += 1n;
    return plaintext;
  }

  /** Rekey(): k = REKEY(k); n is unchanged. */
  rekey() {
    if (this.#k === null) throw new NoiseError('invalidKey', 'Rekey on a CipherState with an empty key');
    const next = rekeyFunction(this.#k);
    this.#k.fill(0);
    this.#k = next;
  }

  /** @returns {CipherState} an independent copy (module-internal: two live copies would reuse nonces) */
  [COPY]() {
    const copy = new CipherState(this.#k);
    copy.#n = this.#n;
    return copy;
  }
}

/** @param {number} length */
function tooLong(length) {
  return new NoiseError('messageTooLong',
    `a Noise message is at most ${NoiseLimits.maximumMessageLength} bytes, this one would be ${length}`);
}

function exhausted() {
  return new NoiseError('nonceExhausted', 'nonce 2^64-1 is reserved: this key can encrypt or decrypt no more messages');
}

// ## SymmetricState (section 5.2)

/** A CipherState, the chaining key ck and the handshake hash h. */
export class SymmetricState {
  /** @type {CipherState} */
  #cipherState;
  /** @type {Uint8Array} */
  #ck;
  /** @type {Uint8Array} */
  #h;

  /**
   * InitializeSymmetric(protocol_name): h = protocol_name zero-padded to HASHLEN when it fits,
   * else HASH(protocol_name); ck = h; an empty key.
   * @param {Uint8Array} protocolName the name's bytes (ASCII)
   */
  constructor(protocolName) {
    if (protocolName.length <= HASHLEN) {
      this.#h = new Uint8Array(HASHLEN);
      this.#h.set(protocolName);
    } else {
      this.#h = hash(protocolName);
    }
    this.#ck = this.#h.slice();
    this.#cipherState = new CipherState();
  }

  /** The CipherState (for HasKey and n; encrypt through encryptAndHash). @returns {CipherState} */
  get cipherState() {
    return this.#cipherState;
  }

  /**
   * MixKey(input_key_material): ck, temp_k = HKDF(ck, input_key_material, 2);
   * InitializeKey(temp_k) (HASHLEN is 32, no truncation).
   * @param {Uint8Array} inputKeyMaterial
   */
  mixKey(inputKeyMaterial) {
    const [ck, tempK] = hkdf(this.#ck, inputKeyMaterial, 2);
    this.#ck.fill(0);
    this.#ck = ck;
    this.#cipherState.initializeKey(tempK.subarray(0, NoiseLimits.keyLength));
    tempK.fill(0);
  }

  /**
   * MixHash(data): h = HASH(h ‖ data).
   * @param {Uint8Array} data
   */
  mixHash(data) {
    this.#h = hash(this.#h, data);
  }

  /**
   * MixKeyAndHash(input_key_material): ck, temp_h, temp_k = HKDF(ck, input_key_material, 3);
   * MixHash(temp_h); InitializeKey(temp_k). (For PSK modifiers, which HandshakeState does not
   * implement.)
   * @param {Uint8Array} inputKeyMaterial
   */
  mixKeyAndHash(inputKeyMaterial) {
    const [ck, tempH, tempK] = hkdf(this.#ck, inputKeyMaterial, 3);
    this.#ck.fill(0);
    this.#ck = ck;
    this.mixHash(tempH);
    this.#cipherState.initializeKey(tempK.subarray(0, NoiseLimits.keyLength));
    tempK.fill(0);
  }

  /** GetHandshakeHash(): h. @returns {Uint8Array} a copy */
  getHandshakeHash() {
    return this.#h.slice();
  }

  /**
   * EncryptAndHash(plaintext): ciphertext = EncryptWithAd(h, plaintext); MixHash(ciphertext).
   * @param {Uint8Array} plaintext
   * @returns {Uint8Array}
   */
  encryptAndHash(plaintext) {
    const ciphertext = this.#cipherState.encryptWithAd(this.#h, plaintext);
    this.mixHash(ciphertext);
    return ciphertext;
  }

  /**
   * DecryptAndHash(ciphertext): plaintext = DecryptWithAd(h, ciphertext); MixHash(ciphertext).
   * Nothing changes when decryption fails.
   * @param {Uint8Array} ciphertext
   * @returns {Uint8Array}
   */
  decryptAndHash(ciphertext) {
    const plaintext = this.#cipherState.decryptWithAd(this.#h, ciphertext);
    this.mixHash(ciphertext);
    return plaintext;
  }

  /**
   * Split(): temp_k1, temp_k2 = HKDF(ck, zerolen, 2); two CipherStates keyed with them: c1 for
   * initiator → responder, c2 for responder → initiator.
   * @returns {[CipherState, CipherState]}
   */
  split() {
    const [k1, k2] = hkdf(this.#ck, EMPTY, 2);
    const pair = /** @type {[CipherState, CipherState]} */ (
      [new CipherState(k1.subarray(0, NoiseLimits.keyLength)), new CipherState(k2.subarray(0, NoiseLimits.keyLength))]);
    k1.fill(0);
    k2.fill(0);
    return pair;
  }

  /** @returns {SymmetricState} an independent copy (module-internal) */
  [COPY]() {
    const copy = new SymmetricState(EMPTY);
    copy.#cipherState = this.#cipherState[COPY]();
    copy.#ck = this.#ck.slice();
    copy.#h = this.#h.slice();
    return copy;
  }
}

// ## HandshakeState (section 5.3)

/**
 * @typedef {object} HandshakeOptions
 * @property {HandshakePattern} pattern
 * @property {boolean} initiator true for the party that sends the first message
 * @property {Uint8Array} [prologue] bytes both parties must agree on (default empty)
 * @property {KeyPair} [s] this party's static key pair, required when the pattern sends or pre-messages it
 * @property {Uint8Array} [rs] the peer's static public key, required (and only allowed) when the peer pre-messages it
 * @property {Uint8Array} [re] the peer's ephemeral public key, for patterns that pre-message it
 * @property {KeyPair} [insecureFixedEphemeralForTestsOnly] a fixed local ephemeral key pair.
 *   **Insecure: for test vectors only.** An ephemeral reused across handshakes destroys forward
 *   secrecy and, with some patterns, lets an attacker impersonate.
 */

/** @typedef {'write' | 'read' | 'finished'} Turn what the next handshake call must be */

/**
 * What a handshake call changes, kept together so that a call works on a copy and commits it
 * only when it succeeds.
 * @typedef {object} Progress
 * @property {SymmetricState} symmetricState
 * @property {KeyPair | null} e
 * @property {Uint8Array | null} rs
 * @property {Uint8Array | null} re
 * @property {number} messageIndex the next message pattern
 * @property {[CipherState, CipherState] | null} split Split()'s c1 and c2, after the last message
 */

/**
 * @param {Progress} progress
 * @returns {Progress}
 */
function copyProgress(progress) {
  return { ...progress, symmetricState: progress.symmetricState[COPY]() };
}

/**
 * The HandshakeState object: runs any handshake pattern with 25519, ChaChaPoly and BLAKE2s.
 *
 * writeMessage and readMessage are transactions: when one throws (a tampered message, a refused
 * key, a message over the limit, a call out of turn), the state is exactly what it was before
 * the call, so a caller may drop the bad message and carry on, or give up. They are
 * asynchronous and must not overlap: a call while another runs throws `busy`.
 */
export class HandshakeState {
  /** @type {HandshakePattern} */
  #pattern;
  #initiator;
  /** @type {KeyPair | null} */
  #s;
  /** @type {Progress} */
  #progress;
  #busy = false;

  /**
   * Initialize(handshake_pattern, initiator, prologue, s, e, rs, re), e empty unless fixed for
   * tests: the ephemeral is generated when the pattern first sends `e`.
   * @param {HandshakeOptions} options
   */
  constructor(options) {
    const { pattern, initiator } = options;
    /** @param {KeyPair | undefined} pair a copy, so later changes to the caller's object do not reach in */
    const copyPair = (pair) => (pair === undefined ? null : { privateKey: pair.privateKey, publicKey: pair.publicKey.slice() });
    const s = copyPair(options.s);
    const e = copyPair(options.insecureFixedEphemeralForTestsOnly);
    const rs = options.rs ?? null;
    const re = options.re ?? null;
    const localPre = initiator ? pattern.initiatorPreMessage : pattern.responderPreMessage;
    const remotePre = initiator ? pattern.responderPreMessage : pattern.initiatorPreMessage;
    const localDirection = initiator ? '->' : '<-';
    const sendsStatic = pattern.messagePatterns.some(
      (message) => message.direction === localDirection && message.tokens.includes('s'));
    const role = initiator ? 'initiator' : 'responder';
    if ((localPre.includes('s') || sendsStatic) && s === null) {
      throw new NoiseError('missingKey', `${pattern.name} needs the ${role}'s static key pair s`);
    }
    if (localPre.includes('e') && e === null) {
      throw new NoiseError('missingKey', `${pattern.name} pre-messages the ${role}'s ephemeral e`);
    }
    for (const keyPair of [s, e]) {
      if (keyPair !== null && keyPair.publicKey.length !== NoiseLimits.dhLength) {
        throw new NoiseError('invalidKey', `a public key is 32 bytes, got ${keyPair.publicKey.length}`);
      }
    }
    for (const [token, key, name] of /** @type {const} */ ([['s', rs, 'rs'], ['e', re, 're']])) {
      if (remotePre.includes(token)) {
        if (key === null) throw new NoiseError('missingKey', `${pattern.name} needs the peer's ${name} before the handshake`);
        if (key.length !== NoiseLimits.dhLength) throw new NoiseError('invalidKey', `${name} is 32 bytes, got ${key.length}`);
      } else if (key !== null) {
        throw new NoiseError('invalidKey', `${name} was given but ${pattern.name} does not pre-message it`);
      }
    }

    this.#pattern = pattern;
    this.#initiator = initiator;
    this.#s = s;
    const symmetricState = new SymmetricState(new TextEncoder().encode(HandshakeState.protocolNameFor(pattern)));
    symmetricState.mixHash(options.prologue ?? EMPTY);
    // The pre-messages' public keys, the initiator's first (section 5.3).
    for (const [preMessage, isLocal] of /** @type {const} */ (
      [[pattern.initiatorPreMessage, initiator], [pattern.responderPreMessage, !initiator]])) {
      for (const token of preMessage) {
        const key = token === 's' ? (isLocal ? s?.publicKey : rs) : (isLocal ? e?.publicKey : re);
        symmetricState.mixHash(/** @type {Uint8Array} */ (key));
      }
    }
    this.#progress = {
      symmetricState, e, rs: rs === null ? null : rs.slice(), re: re === null ? null : re.slice(), messageIndex: 0,
      split: null,
    };
  }

  /**
   * `Noise_<pattern>_25519_ChaChaPoly_BLAKE2s`.
   * @param {HandshakePattern} pattern
   * @returns {string}
   */
  static protocolNameFor(pattern) {
    return `Noise_${pattern.name}_${DH_NAME}_${CIPHER_NAME}_${HASH_NAME}`;
  }

  /** @returns {string} this state's protocol name */
  get protocolName() {
    return HandshakeState.protocolNameFor(this.#pattern);
  }

  /** @returns {HandshakePattern} */
  get pattern() {
    return this.#pattern;
  }

  /** @returns {boolean} */
  get initiator() {
    return this.#initiator;
  }

  /** Whether the next call is writeMessage or readMessage, or the handshake is over. @returns {Turn} */
  get turn() {
    const index = this.#progress.messageIndex;
    if (index >= this.#pattern.messagePatterns.length) return 'finished';
    const fromInitiator = this.#pattern.messagePatterns[index].direction === '->';
    return fromInitiator === this.#initiator ? 'write' : 'read';
  }

  /** @returns {boolean} */
  get isHandshakeComplete() {
    return this.turn === 'finished';
  }

  /**
   * GetHandshakeHash(): h, which commits to everything so far. Final once the handshake is
   * complete; what a SAS or channel binding derives from.
   * @returns {Uint8Array}
   */
  getHandshakeHash() {
    return this.#progress.symmetricState.getHandshakeHash();
  }

  /** rs: the peer's static public key, once known (pre-message or received). @returns {Uint8Array | null} */
  get remoteStaticPublicKey() {
    return this.#progress.rs?.slice() ?? null;
  }

  /** re: the peer's ephemeral public key, once received. @returns {Uint8Array | null} */
  get remoteEphemeralPublicKey() {
    return this.#progress.re?.slice() ?? null;
  }

  /** @returns {Uint8Array | null} */
  get localStaticPublicKey() {
    return this.#s?.publicKey.slice() ?? null;
  }

  /** @returns {Uint8Array | null} */
  get localEphemeralPublicKey() {
    return this.#progress.e?.publicKey.slice() ?? null;
  }

  /**
   * WriteMessage(payload, message_buffer): the next handshake message, carrying `payload`.
   * After the last message pattern Split() has run: see `splitCipherStates()`.
   * @param {Uint8Array} [payload]
   * @returns {Promise<Uint8Array>}
   */
  async writeMessage(payload = EMPTY) {
    return this.#transaction('write', async (next, tokens) => {
      if (payload.length > NoiseLimits.maximumMessageLength) throw tooLong(payload.length);
      const parts = [];
      for (const token of tokens) {
        switch (token) {
          case 'e': {
            const ephemeral = next.e ?? await generateKeyPair();
            next.e = ephemeral;
            parts.push(ephemeral.publicKey);
            next.symmetricState.mixHash(ephemeral.publicKey);
            break;
          }
          case 's':
            parts.push(next.symmetricState.encryptAndHash(this.#required(this.#s, 's').publicKey));
            break;
          default:
            await this.#mixDH(next, token);
        }
      }
      parts.push(next.symmetricState.encryptAndHash(payload));
      const message = concatBytes(...parts);
      if (message.length > NoiseLimits.maximumMessageLength) throw tooLong(message.length);
      return message;
    });
  }

  /**
   * ReadMessage(message, payload_buffer): processes the peer's next handshake message and
   * returns its payload. On any error this state is left unchanged.
   * @param {Uint8Array} message
   * @returns {Promise<Uint8Array>}
   */
  async readMessage(message) {
    return this.#transaction('read', async (next, tokens) => {
      if (message.length > NoiseLimits.maximumMessageLength) throw tooLong(message.length);
      let offset = 0;
      /** @param {number} count @param {Token} token */
      const take = (count, token) => {
        if (message.length - offset < count) {
          throw new NoiseError('messageTooShort', `message ends inside token ${token} (${message.length} bytes)`);
        }
        offset += count;
        return message.slice(offset - count, offset);
      };
      for (const token of tokens) {
        switch (token) {
          case 'e':
            next.re = take(NoiseLimits.dhLength, 'e');
            next.symmetricState.mixHash(next.re);
            break;
          case 's': {
            const length = NoiseLimits.dhLength + (next.symmetricState.cipherState.hasKey() ? NoiseLimits.tagLength : 0);
            next.rs = next.symmetricState.decryptAndHash(take(length, 's'));
            break;
          }
          default:
            await this.#mixDH(next, token);
        }
      }
      return next.symmetricState.decryptAndHash(message.subarray(offset));
    });
  }

  /**
   * The two CipherStates of Split(), fresh copies on each call: c1 encrypts initiator →
   * responder, c2 responder → initiator. With a one-way pattern only c1 may be used.
   * @returns {{c1: CipherState, c2: CipherState}}
   */
  splitCipherStates() {
    const split = this.#progress.split;
    if (split === null) {
      throw new NoiseError('handshakeNotFinished', 'Split() happens after the last handshake message');
    }
    return { c1: split[0][COPY](), c2: split[1][COPY]() };
  }

  /**
   * This party's pair from Split(): what it sends with and what it receives with.
   * @returns {{send: CipherState, receive: CipherState}}
   */
  transportCipherStates() {
    const { c1, c2 } = this.splitCipherStates();
    return this.#initiator ? { send: c1, receive: c2 } : { send: c2, receive: c1 };
  }

  /**
   * Runs one handshake call on a copy of the progress and commits it only on success.
   * @template T
   * @param {'write' | 'read'} call
   * @param {(next: Progress, tokens: readonly Token[]) => Promise<T>} body
   * @returns {Promise<T>}
   */
  async #transaction(call, body) {
    if (this.#busy) throw new NoiseError('busy', 'another handshake call on this state has not finished');
    const turn = this.turn;
    if (turn === 'finished') {
      throw new NoiseError('handshakeFinished', 'the handshake is complete; use the transport CipherStates');
    }
    if (turn !== call) {
      throw new NoiseError('wrongTurn', call === 'write' ? 'a message from the peer must be read first' : 'this party must write next');
    }
    this.#busy = true;
    try {
      const next = copyProgress(this.#progress);
      const result = await body(next, this.#pattern.messagePatterns[next.messageIndex].tokens);
      next.messageIndex += 1;
      if (next.messageIndex === this.#pattern.messagePatterns.length) next.split = next.symmetricState.split();
      this.#progress = next;
      return result;
    } finally {
      this.#busy = false;
    }
  }

  /**
   * MixKey(DH(…)) for a DH token, choosing the keys by role as section 5.3 says.
   * @param {Progress} next
   * @param {Token} token
   */
  async #mixDH(next, token) {
    const initiator = this.#initiator;
    /** @type {[KeyPair | null, Uint8Array | null, string]} */
    let keys;
    switch (token) {
      case 'ee': keys = [next.e, next.re, 'e, re']; break;
      case 'es': keys = initiator ? [next.e, next.rs, 'e, rs'] : [this.#s, next.re, 's, re']; break;
      case 'se': keys = initiator ? [this.#s, next.re, 's, re'] : [next.e, next.rs, 'e, rs']; break;
      case 'ss': keys = [this.#s, next.rs, 's, rs']; break;
      default: throw new Error(`not a DH token: ${token}`);
    }
    const [keyPair, publicKey, names] = keys;
    if (keyPair === null || publicKey === null) {
      throw new NoiseError('missingKey', `${this.#pattern.name} needs ${names} for ${token} but one is empty`);
    }
    let output;
    try {
      output = await x25519(keyPair.privateKey, publicKey);
    } catch (error) {
      throw new NoiseError('invalidKey', `DH(25519) for ${token} refused the key`, error);
    }
    next.symmetricState.mixKey(output);
    output.fill(0);
  }

  /**
   * @template T
   * @param {T | null} key
   * @param {string} name
   * @returns {T}
   */
  #required(key, name) {
    if (key === null) throw new NoiseError('missingKey', `${this.#pattern.name} needs ${name} here but it is empty`);
    return key;
  }
}
