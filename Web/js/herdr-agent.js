// One agent as a board shows it (docs/companion.md, "The board"): where it is (its herdr session
// and pane id: an AgentKey), what it is, what it is doing (HerdrAgentStatus) and since when. Every
// text is bounded and printable. The twin of AgentKey, HerdrAgent and HerdrAgentStatus.

import { BoundedText } from './printable-text.js';

/**
 * @typedef {object} AgentKey
 * @property {string} session the herdr session's name (`default` for the default session)
 * @property {string} pane herdr's public pane id (`w1:p1`)
 */

/**
 * What herdr says an agent is doing, in the order a person wants them listed: waiting for a
 * person, finished and not looked at, busy, ready, unclassified.
 * @typedef {'blocked' | 'done' | 'working' | 'idle' | 'unknown'} HerdrAgentStatusValue
 */

/**
 * @typedef {object} HerdrAgent
 * @property {AgentKey} key
 * @property {string | null} name the agent's name in herdr (≤ 64 bytes)
 * @property {string | null} kind what kind of agent it is (`claude`, `codex`; ≤ 32 bytes)
 * @property {HerdrAgentStatusValue} status
 * @property {string | null} title the pane's title (≤ 128 bytes)
 * @property {number | null} since when the computer saw this status begin (Unix seconds)
 */

/** @type {readonly HerdrAgentStatusValue[]} */
const STATUSES = Object.freeze(['blocked', 'done', 'working', 'idle', 'unknown']);

export const HerdrAgentStatus = Object.freeze({
  /** In the order a person wants them listed. */
  all: STATUSES,
  /**
   * herdr's word for a status; a word of a later herdr is `unknown`.
   * @param {string} text
   * @returns {HerdrAgentStatusValue}
   */
  fromHerdr(text) {
    return /** @type {readonly string[]} */ (STATUSES).includes(text) ? /** @type {HerdrAgentStatusValue} */ (text) : 'unknown';
  },
});

export const HerdrAgent = Object.freeze({
  maximumPaneBytes: 32,
  maximumNameBytes: 64,
  maximumKindBytes: 32,
  maximumTitleBytes: 128,

  /**
   * An agent, its texts made printable and bounded (a text with nothing left is null).
   * @param {AgentKey} key
   * @param {{name?: string | null, kind?: string | null, status: HerdrAgentStatusValue, title?: string | null, since?: number | null}} fields
   * @returns {HerdrAgent}
   */
  make(key, fields) {
    return {
      key: { session: key.session, pane: key.pane },
      name: BoundedText.optional(fields.name ?? null, HerdrAgent.maximumNameBytes),
      kind: BoundedText.optional(fields.kind ?? null, HerdrAgent.maximumKindBytes),
      status: fields.status,
      title: BoundedText.optional(fields.title ?? null, HerdrAgent.maximumTitleBytes),
      since: fields.since ?? null,
    };
  },

  /**
   * True for a pane id herdr could have made and a shell needs no quoting for: 1–32 bytes of
   * letters, digits, `:`, `.`, `_` and `-`.
   * @param {string} pane
   * @returns {boolean}
   */
  isValidPane(pane) {
    return pane.length >= 1 && pane.length <= HerdrAgent.maximumPaneBytes && /^[A-Za-z0-9:._-]+$/.test(pane);
  },

  /**
   * @param {AgentKey} a
   * @param {AgentKey} b
   * @returns {boolean}
   */
  sameKey(a, b) {
    return a.session === b.session && a.pane === b.pane;
  },
});
