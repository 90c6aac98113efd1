// A cell's foreground or background colour as the program chose it: the terminal's default,
// one of the 256 of the palette (SGR 30–37, 90–97, `38;5;n`), or 24-bit (`38;2;r;g;b`).
// The twin of ScreenModel's TerminalColor. Values are frozen; compare them with `equal`.

/**
 * @typedef {{readonly kind: 'default'}
 *   | {readonly kind: 'indexed', readonly index: number}
 *   | {readonly kind: 'rgb', readonly red: number, readonly green: number, readonly blue: number}} TerminalColor
 */

/**
 * @param {number} value
 * @param {string} what
 */
function checkByte(value, what) {
  if (!Number.isInteger(value) || value < 0 || value > 255) {
    throw new RangeError(`${what} ${value} is not a byte (0 to 255)`);
  }
}

/** @type {TerminalColor} */
const DEFAULT = Object.freeze({ kind: /** @type {const} */ ('default') });

export const TerminalColor = Object.freeze({
  /** The terminal's own colour. */
  default: DEFAULT,

  /**
   * One of the palette's 256 colours.
   * @param {number} index 0–255
   * @returns {TerminalColor}
   */
  indexed(index) {
    checkByte(index, 'a palette index');
    return Object.freeze({ kind: /** @type {const} */ ('indexed'), index });
  },

  /**
   * A 24-bit colour.
   * @param {number} red 0–255
   * @param {number} green 0–255
   * @param {number} blue 0–255
   * @returns {TerminalColor}
   */
  rgb(red, green, blue) {
    checkByte(red, 'red');
    checkByte(green, 'green');
    checkByte(blue, 'blue');
    return Object.freeze({ kind: /** @type {const} */ ('rgb'), red, green, blue });
  },

  /**
   * @param {TerminalColor} a
   * @param {TerminalColor} b
   * @returns {boolean}
   */
  equal(a, b) {
    if (a === b) return true;
    switch (a.kind) {
      case 'default':
        return b.kind === 'default';
      case 'indexed':
        return b.kind === 'indexed' && a.index === b.index;
      case 'rgb':
        return b.kind === 'rgb' && a.red === b.red && a.green === b.green && a.blue === b.blue;
    }
  },
});
