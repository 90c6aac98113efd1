// Why an attempt to reach the computer through the relay did not give a channel, and what that
// means for retrying (docs/companion.md "Resume", "Daily quota", "Unpairing"); and how a relay
// connection's failure or end reads as one. The browser has the relay road only. The twin of
// RoadFailure and RelayRoad.classify.

import { RelayClose, AdmissionError } from './relay-protocol.js';
import { RelayLink } from './relay-link.js';

/** @typedef {import('./relay-link.js').RelayConnectionError} RelayConnectionError */
/** @typedef {import('./relay-link.js').FramePipeEnd} FramePipeEnd */

/**
 * - `pairingGone`: the room was deleted or expired, or the relay no longer takes the join key:
 *   pairing again can help, retrying cannot.
 * - `unavailable`: the connection or channel failed: later may work.
 * - `computerOffline`: the computer is not parked in the room now (`mac offline`).
 * - `quotaExceeded`: the room's daily byte quota; it resets by `resetsBy` (Unix seconds) at the latest.
 * - `displaced`: another connection of this device took the room.
 * - `refused`: the relay refused for a reason retrying cannot mend.
 * - `resharding`: a relay cluster is moving the room to another node: try again shortly.
 * @typedef {{kind: 'pairingGone', why: string} | {kind: 'unavailable', why: string} | {kind: 'computerOffline', relay: string}
 *   | {kind: 'quotaExceeded', relay: string, resetsBy: number} | {kind: 'displaced'} | {kind: 'refused', why: string}
 *   | {kind: 'resharding', relay: string}} RoadFailure
 */

/**
 * "2027-01-02 00:00 UTC".
 * @param {number} seconds Unix seconds
 */
function utc(seconds) {
  const date = new Date(seconds * 1000).toISOString();
  return `${date.slice(0, 10)} ${date.slice(11, 16)} UTC`;
}

/**
 * The failure in words a person can act on.
 * @param {RoadFailure} failure
 * @returns {string}
 */
function describe(failure) {
  switch (failure.kind) {
    case 'quotaExceeded':
      return `the relay ${failure.relay} closed the room: this pairing has used up its daily byte quota. It resets within 24 hours ` +
        `(by ${utc(failure.resetsBy)} at the latest); retrying before then cannot help`;
    case 'computerOffline':
      return `the computer is not connected to the relay ${failure.relay} (is \`herdr-host run\` going on it?)`;
    case 'displaced':
      return 'another connection from this device took its place in the relay room (this page open twice?)';
    case 'refused': return `the relay refused the connection (${failure.why})`;
    case 'pairingGone':
      return `the pairing was removed on the computer, or it expired (${failure.why}); pair again with a new code from herdr-host pair`;
    case 'unavailable': return failure.why;
    case 'resharding': return `the relay ${failure.relay} is moving this room to another of its nodes`;
  }
}

/**
 * @param {RoadFailure} a
 * @param {RoadFailure} b
 */
function equal(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A disposition of RelayLink's as a failure.
 * @param {import('./relay-link.js').Disposition} disposition
 * @param {string} relay the relay's host
 * @param {string} closedReason what to name for a room deleted or a cycle cap
 * @param {string} otherwise the words for an end worth retrying
 * @returns {RoadFailure}
 */
function fromDisposition(disposition, relay, closedReason, otherwise) {
  if (disposition.type === 'retrySoon') return { kind: 'resharding', relay };
  if (disposition.type === 'retry') return { kind: 'unavailable', why: otherwise };
  const reason = disposition.reason;
  switch (reason.type) {
    case 'needsRepairing': return { kind: 'pairingGone', why: reason.reason };
    case 'roomDeleted':
    case 'pairingCycleCap': return { kind: 'pairingGone', why: closedReason };
    case 'displaced': return { kind: 'displaced' };
    case 'refused': return { kind: 'refused', why: reason.reason };
    case 'stopped': return { kind: 'unavailable', why: otherwise };
  }
}

export const RoadFailure = Object.freeze({
  describe,
  equal,

  /**
   * A relay connection that failed before admission.
   * @param {RelayConnectionError} error
   * @param {string} relay the relay's host
   * @param {number} now Unix seconds (for a quota's reset)
   * @returns {RoadFailure}
   */
  ofError(error, relay, now) {
    if (error.close !== null && RelayClose.equal(error.close, RelayClose.dailyQuotaExceeded)) {
      return { kind: 'quotaExceeded', relay, resetsBy: now + 86400 };
    }
    if (error.serverError === AdmissionError.macOffline) return { kind: 'computerOffline', relay };
    return fromDisposition(RelayLink.afterError(error), relay, error.close?.reason ?? 'room deleted', error.message);
  },

  /**
   * An admitted connection that ended.
   * @param {FramePipeEnd} end
   * @param {string} relay the relay's host
   * @param {number} now Unix seconds
   * @returns {RoadFailure}
   */
  ofEnd(end, relay, now) {
    if (end.type !== 'closedByRelay') return { kind: 'unavailable', why: `the connection ended (${RelayLink.endText(end)})` };
    if (RelayClose.equal(end.close, RelayClose.dailyQuotaExceeded)) return { kind: 'quotaExceeded', relay, resetsBy: now + 86400 };
    return fromDisposition(RelayLink.afterEnd(end), relay, end.close.reason,
      `the relay closed the connection (${RelayClose.text(end.close)})`);
  },
});
