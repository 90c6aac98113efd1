// A clock for the I/O shells' tests (frame-pipe.js's Clock): time moves only when a test says,
// timers fire in their order as it passes, and `until` lets the event loop run (WebCrypto's
// promises, the in-memory relay's deliveries) until a condition holds.

/** @typedef {import('../js/frame-pipe.js').Clock} Clock */

/**
 * Lets the event loop turn until `condition` holds (at most `turns` macrotasks).
 * @param {() => boolean} condition
 * @param {string} what said when it never holds
 * @param {number} [turns]
 */
export async function until(condition, what, turns = 3000) {
  for (let i = 0; i < turns; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  throw new Error(`never happened: ${what}`);
}

/**
 * Lets the event loop turn a few times: whatever is under way settles.
 * @param {number} [turns]
 */
export async function settle(turns = 30) {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Lets time pass on `clock` in `step`s (firing its timers) until `condition` holds, at most
 * `seconds` of it.
 * @param {FakeClock} clock
 * @param {() => boolean} condition
 * @param {string} what said when it never holds
 * @param {{step?: number, seconds?: number}} [options]
 */
export async function untilAdvancing(clock, condition, what, options = {}) {
  const step = options.step ?? 0.01;
  const end = clock.now() + (options.seconds ?? 60);
  await settle(5);
  while (!condition()) {
    if (clock.now() >= end) throw new Error(`never happened in ${options.seconds ?? 60} s: ${what}`);
    await clock.advance(step);
  }
}

/** @implements {Clock} */
export class FakeClock {
  /** @type {{at: number, order: number, fire: () => void}[]} */
  #timers = [];
  #order = 0;

  /**
   * @param {number} [start] the monotonic clock's start, seconds
   * @param {number} [unixStart] the Unix time then
   */
  constructor(start = 1000, unixStart = 1_798_761_600) {
    this.time = start;
    this.start = start;
    this.unixStart = unixStart;
  }

  now() {
    return this.time;
  }

  unixTime() {
    return this.unixStart + (this.time - this.start);
  }

  /**
   * @param {number} seconds
   * @param {() => void} fire
   */
  setTimer(seconds, fire) {
    const timer = { at: this.time + Math.max(0, seconds), order: this.#order++, fire };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((known) => known !== timer);
    };
  }

  /** When the next timer fires, or null. */
  get nextTimer() {
    return this.#timers.reduce((next, timer) => Math.min(next, timer.at), Infinity);
  }

  /**
   * Moves the clock `seconds` on, firing every timer due on the way in order, and letting the
   * event loop settle after each.
   * @param {number} seconds
   */
  async advance(seconds) {
    const target = this.time + seconds;
    for (;;) {
      await settle(5);
      const due = this.#timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((timer) => timer !== due);
      this.time = Math.max(this.time, due.at);
      due.fire();
    }
    this.time = target;
    await settle(5);
  }
}
