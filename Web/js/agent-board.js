// One computer's agents as a device sees them (docs/companion.md, "The board"): whether herdr
// could be read, its sessions, and at most 256 agents (the rest counted in `omitted`). The twin
// of AgentBoard (what a device needs of it: the board itself and its bound).

import { HerdrAvailability } from './herdr-session-info.js';

/** @typedef {import('./herdr-session-info.js').HerdrSessionInfo} HerdrSessionInfo */
/** @typedef {import('./herdr-agent.js').HerdrAgent} HerdrAgent */
/** @typedef {import('./herdr-agent.js').AgentKey} AgentKey */

/**
 * @typedef {object} AgentBoard
 * @property {HerdrAvailability} herdr
 * @property {HerdrSessionInfo[]} sessions
 * @property {Map<string, HerdrAgent>} agents by `AgentBoard.keyText(agent.key)`
 * @property {number} omitted agents the computer has and did not list (past 256)
 */

export const AgentBoard = Object.freeze({
  /** At most this many agents per computer. */
  maximumAgents: 256,

  /**
   * The map key of an agent's key: its session and pane, which hold no line feed.
   * @param {AgentKey} key
   * @returns {string}
   */
  keyText(key) {
    return `${key.session}\n${key.pane}`;
  },

  /**
   * @param {{herdr?: HerdrAvailability, sessions?: HerdrSessionInfo[], agents?: HerdrAgent[], omitted?: number}} [parts]
   * @returns {AgentBoard}
   */
  make(parts = {}) {
    /** @type {Map<string, HerdrAgent>} */
    const agents = new Map();
    for (const agent of parts.agents ?? []) agents.set(AgentBoard.keyText(agent.key), agent);
    return {
      herdr: parts.herdr ?? HerdrAvailability.make('ready'),
      sessions: parts.sessions ?? [],
      agents,
      omitted: parts.omitted ?? 0,
    };
  },

  /**
   * A copy whose maps and lists can change without changing `board`.
   * @param {AgentBoard} board
   * @returns {AgentBoard}
   */
  copy(board) {
    return { herdr: board.herdr, sessions: board.sessions.slice(), agents: new Map(board.agents), omitted: board.omitted };
  },
});
