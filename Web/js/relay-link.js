// What a relay connection's end means for the next attempt (docs/relay.md "The client library"):
// stop for good where retrying cannot help (`room deleted`, `displaced`, `pairing cycle cap`,
// credential refusals, `bad hello`, an HTTP refusal), retry soon after `reshard`, else retry with
// backoff (`mac offline` included: a phone joins only while its computer is parked). With the
// error a relay connection fails with, and the ends an admitted one has. The twin of
// RelayLink.disposition, RelayLink.StopReason, ConnectionError and FramePipeEnd.

import { AdmissionError, RelayClose } from './relay-protocol.js';

/** @typedef {import('./relay-protocol.js').RelayCloseValue} RelayCloseValue */

/**
 * A stable kind, meant for code:
 * - `refused`: the relay's Result said no (`serverError` is its `error`).
 * - `closed`: the relay closed the socket before admission finished (`close` says how).
 * - `httpStatus`: an HTTP refusal (`status`, `serverError`); a browser's WebSocket never sees
 *   one (a refused upgrade is a close 1006 to it), `fetch` does.
 * - `protocolViolation`: the relay broke the admission protocol.
 * - `connectionLost`: the socket ended or never opened (a browser says no more than that).
 * - `timedOut`: admission took longer than its limit.
 * @typedef {'refused' | 'closed' | 'httpStatus' | 'protocolViolation' | 'connectionLost' | 'timedOut'} RelayConnectionErrorKind
 */

/** Why a relay connection (or request) failed. */
export class RelayConnectionError extends Error {
  /**
   * @param {RelayConnectionErrorKind} kind
   * @param {string} message
   * @param {{serverError?: string | null, close?: RelayCloseValue | null, status?: number | null}} [details]
   */
  constructor(kind, message, details = {}) {
    super(message);
    this.name = 'RelayConnectionError';
    /** @readonly @type {RelayConnectionErrorKind} */
    this.kind = kind;
    /** The relay's `error` text, when it gave one. @readonly @type {string | null} */
    this.serverError = details.serverError ?? null;
    /** @readonly @type {RelayCloseValue | null} */
    this.close = details.close ?? null;
    /** @readonly @type {number | null} */
    this.status = details.status ?? null;
  }
}

/**
 * How an admitted connection ended: closed by the relay (its code and reason), by this side, or
 * failed (the socket broke, a frame did not authenticate).
 * @typedef {{type: 'closedByRelay', close: RelayCloseValue} | {type: 'closedLocally'} | {type: 'failed', message: string}} FramePipeEnd
 */

/**
 * Why a link gives up for good.
 * @typedef {{type: 'stopped'} | {type: 'roomDeleted'} | {type: 'needsRepairing', reason: string} | {type: 'pairingCycleCap'}
 *   | {type: 'displaced'} | {type: 'refused', reason: string}} StopReason
 */

/**
 * @typedef {{type: 'stop', reason: StopReason} | {type: 'retry', reason: string} | {type: 'retrySoon', reason: string}} Disposition
 */

/**
 * @param {StopReason} reason
 * @returns {string}
 */
function stopText(reason) {
  switch (reason.type) {
    case 'stopped': return 'stopped';
    case 'roomDeleted': return 'room deleted';
    case 'needsRepairing': return `remote access needs re-pairing (${reason.reason})`;
    case 'pairingCycleCap': return 'pairing cycle cap';
    case 'displaced': return 'displaced by another device';
    case 'refused': return `refused: ${reason.reason}`;
  }
}

/**
 * After the relay closed a socket.
 * @param {RelayCloseValue} close
 * @returns {Disposition}
 */
function afterClose(close) {
  switch (close.reason) {
    case RelayClose.roomDeleted.reason: return { type: 'stop', reason: { type: 'roomDeleted' } };
    case RelayClose.pairingCycleCap.reason: return { type: 'stop', reason: { type: 'pairingCycleCap' } };
    case RelayClose.displaced.reason: return { type: 'stop', reason: { type: 'displaced' } };
    case RelayClose.roomExpired.reason: return { type: 'stop', reason: { type: 'needsRepairing', reason: close.reason } };
    case AdmissionError.badSignature:
    case AdmissionError.signatureRequired:
      return { type: 'stop', reason: { type: 'needsRepairing', reason: close.reason } };
    // A Hello the relay cannot read is closed without a Result; sending it again cannot help.
    case AdmissionError.badHello: return { type: 'stop', reason: { type: 'refused', reason: close.reason } };
    default:
      if (close.code === RelayClose.reshard.code && close.reason === RelayClose.reshard.reason) {
        return { type: 'retrySoon', reason: `relay closed: ${RelayClose.text(close)}` };
      }
      return { type: 'retry', reason: `relay closed: ${RelayClose.text(close)}` };
  }
}

/**
 * After an attempt failed before admission.
 * @param {RelayConnectionError} error
 * @returns {Disposition}
 */
function afterError(error) {
  switch (error.kind) {
    case 'refused': {
      const reason = error.serverError ?? '';
      switch (reason) {
        case AdmissionError.badSignature:
        case AdmissionError.signatureRequired:
          return { type: 'stop', reason: { type: 'needsRepairing', reason } };
        case AdmissionError.ticketRequired:
        case AdmissionError.badTicket:
        case AdmissionError.badProof:
        case AdmissionError.badHello:
          return { type: 'stop', reason: { type: 'refused', reason } };
        default: {
          // rate limited, mac offline, slot occupied: later may work.
          const closed = error.close === null ? null : afterClose(error.close);
          if (closed !== null && closed.type === 'stop') return closed;
          return { type: 'retry', reason };
        }
      }
    }
    case 'closed':
      return error.close === null ? { type: 'retry', reason: error.message } : afterClose(error.close);
    case 'httpStatus': {
      const status = error.status ?? 0;
      if (status === 421) return { type: 'retrySoon', reason: `HTTP 421 ${error.serverError ?? 'reshard'}` };
      if ([400, 403, 404, 501].includes(status)) {
        return { type: 'stop', reason: { type: 'refused', reason: `HTTP ${status} ${error.serverError ?? ''}` } };
      }
      return { type: 'retry', reason: error.message };
    }
    default:
      return { type: 'retry', reason: error.message };
  }
}

/**
 * After an admitted connection ended.
 * @param {FramePipeEnd} end
 * @returns {Disposition}
 */
function afterEnd(end) {
  switch (end.type) {
    case 'closedByRelay': return afterClose(end.close);
    case 'closedLocally': return { type: 'retry', reason: 'closed' };
    case 'failed': return { type: 'retry', reason: end.message };
  }
}

/**
 * "the relay closed the connection (1001 peer gone)", "closed", or why it failed.
 * @param {FramePipeEnd} end
 */
function endText(end) {
  switch (end.type) {
    case 'closedByRelay': return `the relay closed the connection (${RelayClose.text(end.close)})`;
    case 'closedLocally': return 'closed';
    case 'failed': return end.message;
  }
}

export const RelayLink = Object.freeze({
  /** Retry-soon waits in a row (a relay cluster moving a room) before the ordinary backoff. */
  soonRetries: 20,
  afterClose,
  afterError,
  afterEnd,
  stopText,
  endText,
});
