// Flow on the device's side of the session protocol (docs/companion.md "Frame budget", "Output
// and credit"): the token bucket every frame the device sends through the relay takes from (32
// a second with a burst of 2, so that with the computer's 456 + 2 at most 492 of the relay's 500
// cross in any second), and one session's output counted by offset, credited every quarter
// window. Pure, with the time passed in. The twins of FrameBudget and DeviceOutputFlow.

export class FrameBudget {
  /** @type {number | null} */
  #last = null;

  /**
   * @param {number} rate frames a second
   * @param {number} burst frames at once
   */
  constructor(rate, burst) {
    /** @readonly */
    this.rate = rate;
    /** @readonly */
    this.burst = burst;
    this.tokens = burst;
  }

  /** The device's share: input and credits. */
  static device() {
    return new FrameBudget(32, 2);
  }

  /** The computer's share: output (what a computer played in tests takes). */
  static computer() {
    return new FrameBudget(456, 2);
  }

  /** @param {number} now */
  #refill(now) {
    if (this.#last !== null) this.tokens = Math.min(this.burst, this.tokens + (now - this.#last) * this.rate);
    this.#last = now;
  }

  /**
   * Takes a frame's token at `now` if there is one.
   * @param {number} now seconds
   */
  take(now) {
    this.#refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /**
   * Seconds from `now` until a token is there (0 when one is).
   * @param {number} now
   */
  wait(now) {
    this.#refill(now);
    return this.tokens >= 1 ? 0 : (1 - this.tokens) / this.rate;
  }
}

/**
 * One session's output on the device: what arrived (by offset), what reached the screen, and when
 * to tell the computer (a credit every quarter window). A gap is a broken channel; a byte that
 * arrives twice (after a resume) is dropped. Offsets are u64s (bigints).
 */
export class DeviceOutputFlow {
  /**
   * @param {number} window the window credits are counted against
   * @param {bigint} [offset]
   */
  constructor(window, offset = 0n) {
    this.window = window;
    /** The offset after the last byte received. */
    this.received = offset;
    /** The offset after the last byte on the screen. */
    this.consumed = offset;
    /** The last offset told to the computer. */
    this.credited = offset;
  }

  /**
   * Output at `offset`: the bytes new to the device (none when all were had before), or null for
   * a gap (bytes missing before `offset`: the channel is broken).
   * @param {bigint} offset
   * @param {Uint8Array} data
   * @returns {Uint8Array | null}
   */
  receive(offset, data) {
    if (offset > this.received) return null;
    const end = offset + BigInt(data.length);
    if (end <= this.received) return new Uint8Array(0);
    const fresh = data.subarray(Number(this.received - offset));
    this.received = end;
    return fresh;
  }

  /**
   * `count` bytes reached the screen: the credit to send now, if one is due.
   * @param {number} count
   * @returns {bigint | null}
   */
  consume(count) {
    this.consumed += BigInt(count);
    if (this.consumed - this.credited < BigInt(Math.floor(this.window / 4))) return null;
    this.credited = this.consumed;
    return this.consumed;
  }
}
