// herdr's rule for session names (interop-facts §1): 1–64 bytes of `A-Z a-z 0-9 . _ -`, not
// `.` or `..`. A valid name needs no quoting in any shell. The twin of HerdrSessionName.

/** The longest name herdr accepts, in UTF-8 bytes (all of them ASCII). */
const MAXIMUM_BYTES = 64;

export const HerdrSessionName = Object.freeze({
  maximumBytes: MAXIMUM_BYTES,

  /**
   * True when herdr accepts `name`.
   * @param {string} name
   * @returns {boolean}
   */
  isValid(name) {
    return name.length >= 1 && name.length <= MAXIMUM_BYTES && name !== '.' && name !== '..' &&
      /^[A-Za-z0-9._-]+$/.test(name);
  },
});
