// The output window a device asks for, sized to the path (docs/companion.md "Output and credit"):
// 2 × the delivery rate over the last eight 100 ms intervals in which output flowed × (the least
// round trip its pings measured + 1/16 s), at least 256 KiB, at most the window `started` named;
// a change of less than a quarter is not sent. Pure: the time is passed in. The twin of PathWindow.

export class PathWindow {
  /** The smallest window asked for. */
  static floor = 256 * 1024;
  /** Seconds of one delivery-rate sample. */
  static interval = 0.1;
  /** Samples the rate is taken from. */
  static samples = 8;
  /** Seconds between two credits at half the device's frame budget. */
  static creditInterval = 1 / 16;

  /** @type {number | null} */
  #intervalStart = null;
  #intervalBytes = 0;
  /** @type {{bytes: number, seconds: number}[]} the last flowing intervals */
  #intervals = [];

  /** @param {number} ceiling the most the device holds (its configured window) */
  constructor(ceiling) {
    /** @readonly */
    this.ceiling = ceiling;
    /** The window asked for now. */
    this.current = Math.min(ceiling, PathWindow.floor);
    /** @type {number | null} The least round trip seen, in seconds. */
    this.minimumRTT = null;
  }

  /** @param {number} seconds a round trip a ping measured */
  roundTrip(seconds) {
    this.minimumRTT = Math.min(this.minimumRTT ?? seconds, seconds);
  }

  /**
   * `count` bytes of output arrived at `now`: the window to ask for, when it should change.
   * @param {number} count
   * @param {number} now
   * @returns {number | null}
   */
  received(count, now) {
    if (this.#intervalStart === null) {
      this.#intervalStart = now;
      this.#intervalBytes = count;
      return null;
    }
    this.#intervalBytes += count;
    const elapsed = now - this.#intervalStart;
    if (elapsed < PathWindow.interval) return null;
    // Only an interval in which output flowed (a credit's worth of the smallest window) says
    // anything about the path; a quiet one leaves the window as it is.
    const flowing = this.#intervalBytes >= Math.floor(Math.min(this.current, PathWindow.floor) / 4);
    const interval = { bytes: this.#intervalBytes, seconds: elapsed };
    this.#intervalStart = now;
    this.#intervalBytes = 0;
    if (!flowing) return null;
    this.#intervals.push(interval);
    if (this.#intervals.length > PathWindow.samples) this.#intervals.splice(0, this.#intervals.length - PathWindow.samples);
    const rate = this.#intervals.reduce((sum, sample) => sum + sample.bytes, 0) /
      this.#intervals.reduce((sum, sample) => sum + sample.seconds, 0);
    const wanted = 2 * rate * ((this.minimumRTT ?? 0) + PathWindow.creditInterval);
    const target = Math.max(Math.min(this.ceiling, PathWindow.floor), Math.min(this.ceiling, Math.ceil(wanted)));
    // A quarter either way before it is worth a message.
    if (Math.abs(target - this.current) * 4 <= this.current) return null;
    this.current = target;
    return target;
  }
}
