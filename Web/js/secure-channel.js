// The end-to-end channel over a message pipe (docs/companion.md "Inside the channel",
// docs/noise.md): a Noise handshake with empty payloads, then transport messages, one Noise
// message per frame (one WebSocket binary message on the relay). A message longer than one frame
// is chunked, each chunk's plaintext a flag byte (1 = more, 0 = last) then at most 65518 bytes.
//
// A state machine that does no I/O: `start`, `receive` and `send` return what the caller must do.
// The handshake is asynchronous (WebCrypto's X25519) and its calls must not overlap; the
// transport is synchronous. Any failure is fatal: the channel moves to a failed state and every
// later call throws the same error, so the caller drops the pipe and starts over with a fresh
// handshake. Nothing is skipped once established (a dropped, reordered, replayed or altered frame
// fails the next one's authentication). The one exception comes before anything is accepted: the
// initiator waiting for the responder's message passes over a bounded number of frames that do
// not read as it, since on the relay road the computer's socket may still carry its old
// channel's frames when the device's new connection is spliced to it. The twin of SecureChannel,
// SecureChannelLimits and SecureChannelError.

import { NoiseError, NoiseLimits } from './noise-error.js';
import { concatBytes } from './bytes.js';

/** @typedef {import('./noise.js').HandshakeState} HandshakeState */
/** @typedef {import('./noise.js').CipherState} CipherState */

export const SecureChannelLimits = Object.freeze({
  /** One frame is one Noise message: at most 65535 bytes. */
  maximumFrameLength: NoiseLimits.maximumMessageLength,
  tagLength: NoiseLimits.tagLength,
  flagLength: 1,
  /** The most application bytes one frame carries: 65535 − 16 − 1 = 65518. */
  maximumChunkLength: NoiseLimits.maximumMessageLength - NoiseLimits.tagLength - 1,
  /** The smallest valid transport frame: an empty last chunk (flag byte and tag). */
  minimumFrameLength: 1 + NoiseLimits.tagLength,
  /** Default bound on one reassembled message: the relay caps frames, not messages. */
  defaultMaximumMessageLength: 64 * 1024 * 1024,
  /** Frames (and their bytes in all) the initiator passes over while waiting for message 2. */
  maximumStaleFrames: 1024,
  maximumStaleBytes: 8 * 1024 * 1024,
  flagMore: 1,
  flagLast: 0,
});

/**
 * A stable kind:
 * - `handshakeFailed`: a handshake message was refused (wrong key or prologue, tampered, out of turn).
 * - `decryptionFailed`: a transport frame failed authentication: fatal by design.
 * - `frameTooLong`: a frame over the 65535-byte Noise limit.
 * - `invalidChunk`: an authenticated chunk with no flag byte, or a flag other than 0 or 1.
 * - `messageTooLarge`: a chunked message grew past the channel's limit (or one frame's bound, sending).
 * - `nonceExhausted`: 2^64 − 1 messages; a new handshake is needed.
 * - `notEstablished`: a send before the handshake finished; the only kind that does not fail the channel.
 * - `busy`: a handshake call while another runs; does not fail the channel either.
 * - `noise`: anything else the Noise layer refused.
 * @typedef {'handshakeFailed' | 'decryptionFailed' | 'frameTooLong' | 'invalidChunk' | 'messageTooLarge'
 *   | 'nonceExhausted' | 'notEstablished' | 'busy' | 'noise'} SecureChannelErrorKind
 */

/** Why a SecureChannel failed. */
export class SecureChannelError extends Error {
  /**
   * @param {SecureChannelErrorKind} kind
   * @param {string} diagnostics
   * @param {unknown} [cause] the Noise error underneath
   */
  constructor(kind, diagnostics, cause) {
    super(`${kind}: ${diagnostics}` + (cause instanceof Error ? ` (${cause.message})` : ''),
      cause === undefined ? undefined : { cause });
    this.name = 'SecureChannelError';
    /** @readonly @type {SecureChannelErrorKind} */
    this.kind = kind;
  }
}

/**
 * - `send`: write this frame to the pipe.
 * - `established`: the handshake finished; the channel carries messages from now on.
 * - `deliver`: a complete message from the peer.
 * @typedef {{type: 'send', frame: Uint8Array} | {type: 'established', established: Established} | {type: 'deliver', message: Uint8Array}} SecureChannelAction
 */

/**
 * @typedef {object} Established
 * @property {Uint8Array} handshakeHash the Noise handshake hash, from which the SAS is derived
 * @property {Uint8Array | null} remoteStaticPublicKey the peer's static key, which the handshake authenticated
 */

const EMPTY = new Uint8Array(0);

export class SecureChannel {
  /** @type {HandshakeState | null} */
  #handshake;
  /** @type {{send: CipherState, receive: CipherState} | null} */
  #transport = null;
  /** @type {SecureChannelError | null} */
  #failure = null;
  #busy = false;
  /** @type {Uint8Array[]} chunks of the message whose last chunk has not arrived */
  #pending = [];
  #pendingLength = 0;
  #assembling = false;
  #staleBytes = 0;

  /**
   * @param {HandshakeState} handshake freshly initialized, nothing written or read, an interactive pattern
   * @param {number} [maximumMessageLength]
   */
  constructor(handshake, maximumMessageLength = SecureChannelLimits.defaultMaximumMessageLength) {
    if (handshake.pattern.messagePatterns.length < 2) throw new RangeError('SecureChannel needs an interactive handshake pattern');
    this.#handshake = handshake;
    /** @readonly */
    this.maximumMessageLength = maximumMessageLength;
    /** Frames the initiator passed over while waiting for the responder's handshake message. */
    this.staleFrames = 0;
    /**
     * The handshake hash and peer key, once established.
     * @type {Established | null}
     */
    this.established = null;
  }

  get isEstablished() {
    return this.#transport !== null && this.#failure === null;
  }

  /**
   * The error that ended the channel, if it failed.
   * @returns {SecureChannelError | null}
   */
  get failure() {
    return this.#failure;
  }

  /**
   * Starts the handshake: the initiator's first message, or nothing for the responder.
   * @returns {Promise<SecureChannelAction[]>}
   */
  async start() {
    this.#guardNotFailed();
    const handshake = this.#handshake;
    if (handshake === null || handshake.turn !== 'write') return [];
    return this.#advanceHandshake(null);
  }

  /**
   * Processes one frame from the peer (a handshake message, or a transport frame).
   * @param {Uint8Array} frame
   * @returns {Promise<SecureChannelAction[]>}
   */
  async receive(frame) {
    this.#guardNotFailed();
    if (this.#handshake !== null) return this.#advanceHandshake(frame);
    const message = this.receiveTransport(frame);
    return message === null ? [] : [{ type: 'deliver', message }];
  }

  /**
   * One frame of an established channel: the message it completes, or null while a chunked
   * message is still arriving.
   * @param {Uint8Array} frame
   * @returns {Uint8Array | null}
   */
  receiveTransport(frame) {
    const transport = this.#established();
    try {
      return this.#open(frame, transport);
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /**
   * The frames that carry `message`, in order: one for up to 65518 bytes (and for an empty
   * message), more for longer ones.
   * @param {Uint8Array} message
   * @returns {Uint8Array[]}
   */
  send(message) {
    const transport = this.#established();
    const chunk = SecureChannelLimits.maximumChunkLength;
    const count = Math.max(1, Math.ceil(message.length / chunk));
    const frames = [];
    try {
      for (let index = 0; index < count; index++) {
        frames.push(this.#seal(message.subarray(index * chunk, (index + 1) * chunk), index === count - 1, transport));
      }
    } catch (error) {
      throw this.#fail(error);
    }
    return frames;
  }

  /**
   * The one frame that carries `message` (at most 65518 bytes).
   * @param {Uint8Array} message
   * @returns {Uint8Array}
   */
  sendFrame(message) {
    if (message.length > SecureChannelLimits.maximumChunkLength) {
      throw new SecureChannelError('messageTooLarge',
        `one frame carries at most ${SecureChannelLimits.maximumChunkLength} bytes, not ${message.length}`);
    }
    const transport = this.#established();
    try {
      return this.#seal(message, true, transport);
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /** @returns {{send: CipherState, receive: CipherState}} */
  #established() {
    this.#guardNotFailed();
    if (this.#transport === null) throw new SecureChannelError('notEstablished', 'the handshake has not finished');
    return this.#transport;
  }

  /**
   * @param {Uint8Array | null} frame
   * @returns {Promise<SecureChannelAction[]>}
   */
  async #advanceHandshake(frame) {
    if (this.#busy) throw new SecureChannelError('busy', 'another handshake call on this channel has not finished');
    const handshake = /** @type {HandshakeState} */ (this.#handshake);
    this.#busy = true;
    try {
      /** @type {SecureChannelAction[]} */
      const actions = [];
      if (frame !== null) {
        if (handshake.turn !== 'read') {
          throw new SecureChannelError('handshakeFailed', 'a handshake frame arrived when this side must write');
        }
        if (frame.length > SecureChannelLimits.maximumFrameLength) {
          throw new SecureChannelError('frameTooLong', `handshake frame of ${frame.length} bytes`);
        }
        // Handshake payloads are empty here; anything in one is authenticated but means nothing yet.
        try {
          await handshake.readMessage(frame); // a transaction: a refused frame leaves the state as it was
        } catch (error) {
          if (handshake.initiator && this.staleFrames < SecureChannelLimits.maximumStaleFrames &&
            this.#staleBytes + frame.length <= SecureChannelLimits.maximumStaleBytes) {
            // Not the responder's message: passed over, the handshake as it was.
            this.staleFrames += 1;
            this.#staleBytes += frame.length;
            return [];
          }
          throw error;
        }
      }
      if (handshake.turn === 'write') actions.push({ type: 'send', frame: await handshake.writeMessage(EMPTY) });
      if (handshake.isHandshakeComplete) {
        const { send, receive } = handshake.transportCipherStates();
        const established = Object.freeze({
          handshakeHash: handshake.getHandshakeHash(), remoteStaticPublicKey: handshake.remoteStaticPublicKey,
        });
        this.established = established;
        this.#transport = { send, receive };
        this.#handshake = null;
        actions.push({ type: 'established', established });
      }
      return actions;
    } catch (error) {
      if (error instanceof SecureChannelError) throw this.#fail(error);
      if (error instanceof NoiseError) throw this.#fail(new SecureChannelError('handshakeFailed', 'handshake refused', error));
      throw this.#fail(new SecureChannelError('noise', String(error), error));
    } finally {
      this.#busy = false;
    }
  }

  /**
   * Decrypts one frame; returns a message when it completes one.
   * @param {Uint8Array} frame
   * @param {{send: CipherState, receive: CipherState}} transport
   * @returns {Uint8Array | null}
   */
  #open(frame, transport) {
    if (frame.length > SecureChannelLimits.maximumFrameLength) {
      throw new SecureChannelError('frameTooLong', `frame of ${frame.length} bytes is over the 65535-byte Noise limit`);
    }
    if (frame.length < SecureChannelLimits.tagLength) {
      throw new SecureChannelError('decryptionFailed', `frame of ${frame.length} bytes is shorter than the tag`);
    }
    let plaintext;
    try {
      plaintext = transport.receive.decryptWithAd(EMPTY, frame);
    } catch (error) {
      const exhausted = error instanceof NoiseError && error.kind === 'nonceExhausted';
      throw new SecureChannelError(exhausted ? 'nonceExhausted' : 'decryptionFailed', `transport frame ${transport.receive.n} refused`, error);
    }
    if (plaintext.length < SecureChannelLimits.flagLength) throw new SecureChannelError('invalidChunk', 'chunk without a flag byte');
    const flag = plaintext[0];
    if (flag !== SecureChannelLimits.flagLast && flag !== SecureChannelLimits.flagMore) {
      throw new SecureChannelError('invalidChunk', `chunk flag ${flag}`);
    }
    const payload = plaintext.subarray(1);
    if (!this.#assembling) {
      if (flag === SecureChannelLimits.flagLast) return payload;
      if (payload.length > this.maximumMessageLength) {
        throw new SecureChannelError('messageTooLarge', `chunked message over ${this.maximumMessageLength} bytes`);
      }
      this.#pending = [payload];
      this.#pendingLength = payload.length;
      this.#assembling = true;
      return null;
    }
    if (this.#pendingLength + payload.length > this.maximumMessageLength) {
      throw new SecureChannelError('messageTooLarge', `chunked message over ${this.maximumMessageLength} bytes`);
    }
    this.#pending.push(payload);
    this.#pendingLength += payload.length;
    if (flag !== SecureChannelLimits.flagLast) return null;
    const message = concatBytes(...this.#pending);
    this.#pending = [];
    this.#pendingLength = 0;
    this.#assembling = false;
    return message;
  }

  /**
   * One frame: the flag byte and `chunk`, encrypted.
   * @param {Uint8Array} chunk
   * @param {boolean} last
   * @param {{send: CipherState, receive: CipherState}} transport
   */
  #seal(chunk, last, transport) {
    const plaintext = new Uint8Array(1 + chunk.length);
    plaintext[0] = last ? SecureChannelLimits.flagLast : SecureChannelLimits.flagMore;
    plaintext.set(chunk, 1);
    try {
      return transport.send.encryptWithAd(EMPTY, plaintext);
    } catch (error) {
      const exhausted = error instanceof NoiseError && error.kind === 'nonceExhausted';
      throw new SecureChannelError(exhausted ? 'nonceExhausted' : 'noise', 'cannot encrypt', error);
    }
  }

  #guardNotFailed() {
    if (this.#failure !== null) throw this.#failure;
  }

  /**
   * Fails the channel for good with `error` (a SecureChannelError, or wrapped as one).
   * @param {unknown} error
   * @returns {SecureChannelError}
   */
  #fail(error) {
    const failure = error instanceof SecureChannelError ? error : new SecureChannelError('noise', String(error), error);
    if (failure.kind === 'notEstablished' || failure.kind === 'busy') return failure;
    this.#failure = failure;
    return failure;
  }
}
