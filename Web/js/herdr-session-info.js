// One of herdr's sessions on a computer, and whether the computer could read its agents
// (HerdrSessionInfo); whether herdr can be read on a computer at all (HerdrAvailability). What
// an agents board says of herdr (docs/companion.md, "The board"). The twin of
// HerdrSessionInfo.swift.

import { BoundedText } from './printable-text.js';
import { HerdrSessionName } from './herdr-session-name.js';

/**
 * @typedef {'ready' | 'not-running' | 'unsupported' | 'unresponsive' | 'failing'} HerdrSessionState
 * @typedef {'ready' | 'not-installed' | 'failing'} HerdrAvailabilityState
 */

/**
 * @typedef {object} HerdrSessionInfo
 * @property {string} name
 * @property {boolean} isDefault
 * @property {HerdrSessionState} state
 * @property {string | null} detail why, in words, when the state is not `ready` (≤ 256 bytes, printable)
 */

/**
 * @typedef {object} HerdrAvailability
 * @property {HerdrAvailabilityState} state
 * @property {string | null} detail why, in words, when not `ready` (≤ 256 bytes, printable)
 */

const MAXIMUM_DETAIL_BYTES = 256;

export const HerdrSessionInfo = Object.freeze({
  /** herdr's name for the default session, always listed first. */
  defaultName: 'default',
  /** At most this many sessions are listed per computer. */
  maximumCount: 64,
  maximumDetailBytes: MAXIMUM_DETAIL_BYTES,
  /** @type {readonly HerdrSessionState[]} */
  states: Object.freeze(/** @type {HerdrSessionState[]} */ (['ready', 'not-running', 'unsupported', 'unresponsive', 'failing'])),

  /**
   * @param {string} name
   * @param {boolean} isDefault
   * @param {HerdrSessionState} state
   * @param {string | null} [detail] made printable and bounded
   * @returns {HerdrSessionInfo}
   */
  make(name, isDefault, state, detail = null) {
    return { name, isDefault, state, detail: BoundedText.optional(detail, MAXIMUM_DETAIL_BYTES) };
  },

  /**
   * True for a name a board may carry: herdr's session-name rule.
   * @param {string} name
   */
  isValidName(name) {
    return HerdrSessionName.isValid(name);
  },
});

export const HerdrAvailability = Object.freeze({
  /** @type {readonly HerdrAvailabilityState[]} */
  states: Object.freeze(/** @type {HerdrAvailabilityState[]} */ (['ready', 'not-installed', 'failing'])),

  /**
   * @param {HerdrAvailabilityState} state
   * @param {string | null} [detail] made printable and bounded
   * @returns {HerdrAvailability}
   */
  make(state, detail = null) {
    return { state, detail: BoundedText.optional(detail, MAXIMUM_DETAIL_BYTES) };
  },
});
