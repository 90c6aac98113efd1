// How long to wait before reconnecting (docs/relay.md "The client library"): exponential backoff
// with jitter. The n-th failure in a row (n from 0) waits min(maximum, initial × multiplier^n)
// less up to `jitter` of itself; a connection that stayed up longer than `resetAfter` seconds
// starts the sequence over. Pure: the caller gives the randomness. The twin of RelayBackoff.

export class RelayBackoff {
  /**
   * @param {{initialDelay?: number, maximumDelay?: number, multiplier?: number, jitter?: number, resetAfter?: number}} [options]
   */
  constructor(options = {}) {
    this.initialDelay = options.initialDelay ?? 0.5;
    this.maximumDelay = options.maximumDelay ?? 30;
    this.multiplier = options.multiplier ?? 2;
    /** The fraction of a delay taken off at most, 0 to 1. */
    this.jitter = options.jitter ?? 0.2;
    /** Seconds a connection must last for the next failure to count as the first again. */
    this.resetAfter = options.resetAfter ?? 30;
    if (!(this.initialDelay >= 0 && this.maximumDelay >= this.initialDelay && this.multiplier >= 1)) {
      throw new RangeError('bad backoff bounds');
    }
    if (!(this.jitter >= 0 && this.jitter <= 1)) throw new RangeError('jitter is a fraction from 0 to 1');
    /** Failures since the last reset: the exponent of the next delay. */
    this.attempt = 0;
  }

  /**
   * The delay before the next attempt, given `random` uniform in 0…1; counts the failure.
   * @param {number} random
   * @returns {number} seconds
   */
  nextDelay(random) {
    let base = this.initialDelay;
    for (let step = 0; step < this.attempt && base < this.maximumDelay; step++) base *= this.multiplier;
    base = Math.min(base, this.maximumDelay);
    if (this.attempt < 1 << 20) this.attempt += 1;
    return base * (1 - this.jitter * Math.min(Math.max(random, 0), 1));
  }

  /**
   * An admitted connection ended after `duration` seconds: one that lasted longer than
   * `resetAfter` resets the sequence.
   * @param {number} duration
   */
  connectionEnded(duration) {
    if (duration > this.resetAfter) this.attempt = 0;
  }

  reset() {
    this.attempt = 0;
  }

  /**
   * Seconds a connection must have been up for its drop to be retried at once, skipping the
   * backoff; one that drops sooner backs off, so a link that drops as soon as it is up cannot spin.
   */
  static steadyConnection = 2;

  /**
   * The wait before coming back to a relay that sent the client to retry soon (4421 `reshard`):
   * 0.25 to 0.5 s, jittered.
   * @param {number} random uniform in 0…1
   */
  static soonDelay(random) {
    return 0.5 - 0.25 * Math.min(Math.max(random, 0), 1);
  }
}
