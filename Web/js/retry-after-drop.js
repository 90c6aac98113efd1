// How the first reconnect attempt after a connection dropped goes (docs/companion.md "Resume"):
// a connection that had been up a while is retried at once, not after the backoff (a phone's
// new socket takes its old one's slot at the relay, the computer never noticed); one that drops
// as soon as it is up backs off, so a flapping link cannot spin. The relay road only (a browser
// has no home road to leave or prefer). The twin of RetryAfterDrop.

import { RelayBackoff } from './relay-backoff.js';

export const RetryAfterDrop = Object.freeze({
  /** Seconds a connection must have been up for its drop to skip the backoff. */
  steadyRoad: RelayBackoff.steadyConnection,

  /**
   * Whether the attempt after a drop goes at once.
   * @param {number} upFor seconds the dropped connection had been up
   * @returns {boolean}
   */
  atOnce(upFor) {
    return upFor >= RelayBackoff.steadyConnection;
  },
});
