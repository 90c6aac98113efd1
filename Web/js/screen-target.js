// What a screen session runs: a herdr session by name, as `open` does, or an agent's pane, as
// `open agent` does. The twin of ScreenTarget.

/**
 * `name` null: herdr's default session.
 * @typedef {{readonly kind: 'session', readonly name: string | null}
 *   | {readonly kind: 'agent', readonly session: string, readonly pane: string}} ScreenTarget
 */

export const ScreenTarget = Object.freeze({
  /** @param {string | null} name @returns {ScreenTarget} */
  session(name) {
    return Object.freeze({ kind: /** @type {const} */ ('session'), name });
  },
  /** @param {string} session @param {string} pane @returns {ScreenTarget} */
  agent(session, pane) {
    return Object.freeze({ kind: /** @type {const} */ ('agent'), session, pane });
  },
});
