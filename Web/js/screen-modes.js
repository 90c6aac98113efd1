// The terminal modes a device needs to send the right bytes and draw the right screen. The twin
// of ScreenModel's ScreenModes.

/**
 * Which mouse events the program asked for (DECSET 1000, 1002, 1003); the raw value is the
 * index in `ScreenModes.mouseModes`.
 * @typedef {'none' | 'click' | 'drag' | 'move'} Mouse
 */

/**
 * @typedef {object} ScreenModes
 * @property {boolean} applicationCursorKeys DECCKM: the arrow keys send `ESC O A` instead of `ESC [ A`
 * @property {boolean} bracketedPaste DECSET 2004: a paste goes between `ESC [ 200 ~` and `ESC [ 201 ~`
 * @property {Mouse} mouse
 * @property {boolean} alternateScreen DECSET 1049/47/1047: a full-screen program's own screen
 * @property {boolean} reverseVideo DECSCNM: the whole screen in reverse video
 */

/** @type {readonly Mouse[]} */
const MOUSE_MODES = Object.freeze(['none', 'click', 'drag', 'move']);

export const ScreenModes = Object.freeze({
  mouseModes: MOUSE_MODES,

  /**
   * Every mode off, but those given.
   * @param {Partial<ScreenModes>} [parts]
   * @returns {ScreenModes}
   */
  make(parts = {}) {
    return {
      applicationCursorKeys: parts.applicationCursorKeys ?? false,
      bracketedPaste: parts.bracketedPaste ?? false,
      mouse: parts.mouse ?? 'none',
      alternateScreen: parts.alternateScreen ?? false,
      reverseVideo: parts.reverseVideo ?? false,
    };
  },

  /**
   * @param {ScreenModes} a
   * @param {ScreenModes} b
   * @returns {boolean}
   */
  equal(a, b) {
    return a.applicationCursorKeys === b.applicationCursorKeys && a.bracketedPaste === b.bracketedPaste &&
      a.mouse === b.mouse && a.alternateScreen === b.alternateScreen && a.reverseVideo === b.reverseVideo;
  },
});
