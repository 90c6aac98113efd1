// The relay protocol v1's words and numbers as a client meets them (interop-facts §5,
// docs/relay.md): the admission frames (Hello, Challenge, Proof, Result), the close codes and
// reasons clients branch on, the admission refusals, and the limits. The twins of RelayHello,
// RelayChallenge, RelayProof, RelayResult, RelayClose, AdmissionError and RelayLimits.

import { RelayJSON } from './relay-json.js';
import { utf8 } from './bytes.js';

/** @typedef {import('./relay-join.js').RelayRole} RelayRole */

/**
 * A WebSocket close as the relay sends it.
 * @typedef {object} RelayCloseValue
 * @property {number} code
 * @property {string} reason
 */

/**
 * @param {number} code
 * @param {string} reason
 * @returns {RelayCloseValue}
 */
const close = (code, reason) => Object.freeze({ code, reason });

/** The closes of interop-facts §5 (and herdr-relay's own 4421 `reshard`, 1011 `store unavailable`). */
export const RelayClose = Object.freeze({
  frameTooLarge: close(1009, 'frame too large'),
  frameRateExceeded: close(1008, 'frame rate exceeded'),
  dailyQuotaExceeded: close(1008, 'daily quota exceeded'),
  tooManyPending: close(1008, 'too many pending'),
  admissionTimeout: close(1008, 'admission timeout'),
  displaced: close(1000, 'displaced'),
  roomDeleted: close(1000, 'room deleted'),
  pairingCycleCap: close(1000, 'pairing cycle cap'),
  roomExpired: close(1000, 'room expired'),
  peerGone: close(1001, 'peer gone'),
  serverShuttingDown: close(1001, 'server shutting down'),
  badState: close(1011, 'bad state'),
  internalError: close(1011, 'internal error'),
  reshard: close(4421, 'reshard'),
  storeUnavailable: close(1011, 'store unavailable'),
  make: close,

  /**
   * An admission refusal: the `error` of the `{"ok":false}` Result, closed with 1008.
   * @param {string} error
   */
  refused(error) {
    return close(1008, error);
  },

  /** @param {RelayCloseValue} a @param {RelayCloseValue} b */
  equal(a, b) {
    return a.code === b.code && a.reason === b.reason;
  },

  /**
   * "1000 displaced".
   * @param {RelayCloseValue} value
   */
  text(value) {
    return `${value.code} ${value.reason}`;
  },
});

/** The `error` of a refused admission, which is also the close reason. */
export const AdmissionError = Object.freeze({
  badHello: 'bad hello',
  rateLimited: 'rate limited',
  badProof: 'bad proof',
  signatureRequired: 'signature required',
  badSignature: 'bad signature',
  ticketRequired: 'ticket required',
  badTicket: 'bad ticket',
  macOffline: 'mac offline',
  slotOccupied: 'slot occupied',
});

/** The relay protocol's numbers: the defaults of the original and of herdr-relay. */
export const RelayLimits = Object.freeze({
  /** A control (admission) frame before admission. */
  preAdmissionFrameSize: 8 * 1024,
  /** A spliced frame after admission. */
  frameSize: 256 * 1024,
  /** Seconds to complete admission. */
  admissionTimeout: 15,
  /** Frames per second per room. */
  framesPerSecond: 500,
  /** Join nonce and attest challenge. */
  nonceSize: 32,
  /** Registration token and ticket. */
  tokenSize: 24,
  /** The fixed User-Agent of companion clients (a browser cannot set it). */
  userAgent: 'iTerm2Companion',
  /** The room header (a browser's WebSocket cannot send it: the room goes in the URL). */
  roomHeader: 'x-relay-room',
});

/**
 * The client's first frame: `{"v":1,"role":"mac"|"phone"[,"nonDisplacing":true]}`.
 * @param {RelayRole} role
 * @param {boolean} [nonDisplacing]
 * @returns {string}
 */
function hello(role, nonDisplacing = false) {
  return `{"v":1,"role":"${role}"` + (nonDisplacing ? ',"nonDisplacing":true}' : '}');
}

/**
 * The relay's Challenge `{"nonce":"<b64 32 bytes>"}`: the nonce, or null for anything else.
 * @param {string} text
 * @returns {Uint8Array | null}
 */
function challengeNonce(text) {
  const object = RelayJSON.object(utf8(text));
  const nonce = object === null ? null : RelayJSON.bytes(object.nonce);
  return nonce !== null && nonce.length === RelayLimits.nonceSize ? nonce : null;
}

/**
 * A Proof: `{}`, `{"sig":"<b64>"}` or `{"ticket":"…"}`.
 * @param {{type: 'empty'} | {type: 'signature', signature: Uint8Array} | {type: 'ticket', ticket: string}} proof
 * @returns {string}
 */
function proof(proof) {
  switch (proof.type) {
    case 'empty': return '{}';
    case 'signature': return `{"sig":"${RelayJSON.base64(proof.signature)}"}`;
    case 'ticket': return `{"ticket":${RelayJSON.quoted(proof.ticket)}}`;
  }
}

/**
 * The relay's Result: `{"ok":true[,"registrationToken":"<b64>"]}` or `{"ok":false,"error":X}`;
 * null for anything else.
 * @param {string} text
 * @returns {{type: 'admitted', registrationToken: Uint8Array | null} | {type: 'refused', error: string} | null}
 */
function result(text) {
  const object = RelayJSON.object(utf8(text));
  const ok = object === null ? null : RelayJSON.boolean(object.ok);
  if (object === null || ok === null) return null;
  if (!ok) return { type: 'refused', error: typeof object.error === 'string' ? object.error : '' };
  if (!RelayJSON.has(object, 'registrationToken')) return { type: 'admitted', registrationToken: null };
  const token = RelayJSON.bytes(object.registrationToken);
  return token === null ? null : { type: 'admitted', registrationToken: token };
}

export const RelayAdmission = Object.freeze({ version: 1, hello, challengeNonce, proof, result });
