// One side's idea of whether a connection's path still carries anything, without waiting for
// the socket to notice (docs/companion.md "Liveness"): a smoothed round-trip time from its own
// pings (RFC 6298), and a ping whenever an answer is owed. One follows every session message
// that wants an answer (a keystroke, a credit, a resize) within 0.25 s, and one goes after 5 s
// of hearing nothing. A ping out with nothing at all heard for max(1 s, 4 × smoothed RTT) makes
// the path suspect: the device then races a fresh connection. Anything heard clears the
// suspicion. Pure: the time (seconds) is passed in. The twin of PathLiveness.

export const PathLivenessSettings = Object.freeze({
  /** Seconds of hearing nothing before an idle ping. */
  idlePing: 5,
  /** The least silence that makes a path with a ping out suspect. */
  minimumSilence: 1,
  /** The silence that makes a path suspect, in smoothed round trips (when longer). */
  roundTrips: 4,
  /** Seconds a session message may wait for the ping that covers it (at most one ping per this while typing). */
  coverDelay: 0.25,
});

/** The largest ping number: a u32; the next after it is 1. */
const U32_MAX = 0xffffffff;

export class PathLiveness {
  #lastPing = -Infinity;
  /** @type {{id: number, sentAt: number} | null} */
  #outstanding = null;
  #nextID = 1;
  /** A session message went out that no ping sent since covers. */
  #coverWanted = false;
  #suspected = false;
  /** No suspicion before this (a race that failed waits before the next). */
  #holdUntil = -Infinity;

  /**
   * A path that just came up at `now` (its handshake heard).
   * @param {number} now
   * @param {typeof PathLivenessSettings} [settings]
   */
  constructor(now, settings = PathLivenessSettings) {
    /** @readonly */
    this.settings = settings;
    /** @type {number | null} Smoothed round trip and its variation (RFC 6298); null before a pong. */
    this.smoothedRTT = null;
    /** @type {number | null} */
    this.rttVariation = null;
    /** When anything was last heard on the path. */
    this.lastHeard = now;
  }

  /** Seconds of silence, with a ping out, that make the path suspect. */
  get silenceLimit() {
    return Math.max(this.settings.minimumSilence, this.settings.roundTrips * (this.smoothedRTT ?? 0));
  }

  /** Whether a ping waits for its pong. */
  get isOwed() {
    return this.#outstanding !== null;
  }

  /**
   * Something arrived on the path (any frame).
   * @param {number} now
   */
  heard(now) {
    this.lastHeard = Math.max(this.lastHeard, now);
    this.#suspected = false;
  }

  /**
   * A pong arrived (heard too): the round trip it measured, when it answers the ping out.
   * @param {number} id
   * @param {number} now
   * @returns {number | null}
   */
  pong(id, now) {
    this.heard(now);
    const out = this.#outstanding;
    if (out === null || out.id !== id) return null;
    this.#outstanding = null;
    const sample = Math.max(0, now - out.sentAt);
    if (this.smoothedRTT !== null && this.rttVariation !== null) {
      this.rttVariation = 0.75 * this.rttVariation + 0.25 * Math.abs(this.smoothedRTT - sample);
      this.smoothedRTT = 0.875 * this.smoothedRTT + 0.125 * sample;
    } else {
      this.smoothedRTT = sample;
      this.rttVariation = sample / 2;
    }
    return sample;
  }

  /**
   * A race after a suspicion failed: suspect again no sooner than `until` if still silent.
   * @param {number} until
   */
  suspectAgain(until) {
    this.#suspected = false;
    this.#holdUntil = until;
  }

  /** A session message that wants an answer went out. */
  sentSessionMessage() {
    this.#coverWanted = true;
  }

  /**
   * The ping to send at `now`, if one is due (covering a session message, or after an idle
   * spell); it is then out.
   * @param {number} now
   * @returns {number | null}
   */
  pingIfDue(now) {
    if (this.#outstanding !== null) return null;
    const covering = this.#coverWanted && now >= this.#lastPing + this.settings.coverDelay;
    const idle = now - this.lastHeard >= this.settings.idlePing && now - this.#lastPing >= this.settings.idlePing;
    if (!covering && !idle) return null;
    const id = this.#nextID;
    this.#nextID = this.#nextID === U32_MAX ? 1 : this.#nextID + 1;
    this.#outstanding = { id, sentAt: now };
    this.#lastPing = now;
    this.#coverWanted = false;
    return id;
  }

  /**
   * Seconds since anything was heard, once, when a ping is out and the silence passed the
   * limit: the path is suspect. Null otherwise, and until heard again (or `suspectAgain`).
   * @param {number} now
   * @returns {number | null}
   */
  suspicion(now) {
    const out = this.#outstanding;
    if (out === null || this.#suspected || now < this.#holdUntil) return null;
    if (now - Math.max(out.sentAt, this.lastHeard) < this.silenceLimit) return null;
    this.#suspected = true;
    return now - this.lastHeard;
  }

  /** When something is due next, at the latest. */
  nextDeadline() {
    const out = this.#outstanding;
    if (out !== null) {
      return this.#suspected ? Infinity : Math.max(Math.max(out.sentAt, this.lastHeard) + this.silenceLimit, this.#holdUntil);
    }
    let next = Math.max(this.lastHeard, this.#lastPing) + this.settings.idlePing;
    if (this.#coverWanted) next = Math.min(next, this.#lastPing + this.settings.coverDelay);
    return next;
  }
}
