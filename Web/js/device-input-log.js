// The keystrokes a device sent in one session, counted from the session's first byte, the last
// MiB of them kept (docs/companion.md "Resume"): after a resume the computer says how many it
// received (`{"inputReceived"}`, or a screen session's `screen started`) and the device sends
// exactly the rest again, so a keystroke typed into a path that had died unnoticed is neither lost
// nor doubled. Pure. The twin of DeviceInputLog.

import { concatBytes } from './bytes.js';

export class DeviceInputLog {
  /** Input kept for resending, at most. */
  static capacity = 1024 * 1024;

  /** @type {Uint8Array[]} kept input in the order sent, the oldest trimmed first */
  #kept = [];
  #keptLength = 0;

  constructor() {
    /** Bytes sent in all (the offset after the last one). */
    this.sent = 0n;
  }

  /**
   * Bytes sent now.
   * @param {Uint8Array} bytes
   */
  record(bytes) {
    this.sent += BigInt(bytes.length);
    this.#kept.push(bytes.slice());
    this.#keptLength += bytes.length;
    while (this.#keptLength > DeviceInputLog.capacity) {
      const excess = this.#keptLength - DeviceInputLog.capacity;
      const first = this.#kept[0];
      if (first.length <= excess) {
        this.#kept.shift();
        this.#keptLength -= first.length;
      } else {
        this.#kept[0] = first.subarray(excess);
        this.#keptLength -= excess;
      }
    }
  }

  /**
   * The computer received `received` bytes: what to send again (the count goes back to
   * `received`). Null when `received` is past what was sent, or when the rest is no longer kept
   * (then the count is left alone and the missing keystrokes are lost, as with ssh).
   * @param {bigint} received
   * @returns {Uint8Array | null}
   */
  rewind(received) {
    if (received > this.sent) return null;
    const missing = Number(this.sent - received);
    if (missing > this.#keptLength) return null;
    const all = concatBytes(...this.#kept);
    const resend = all.slice(all.length - missing);
    this.#kept = [all.subarray(0, all.length - missing)];
    this.#keptLength -= missing;
    this.sent = received;
    return resend;
  }

  /** The session was opened afresh: a new count. */
  reset() {
    this.#kept = [];
    this.#keptLength = 0;
    this.sent = 0n;
  }
}
