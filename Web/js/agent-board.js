// One computer's agents as a device sees them (docs/companion.md, "The board"): whether herdr
// could be read, its sessions, and at most 256 agents (the rest counted in `omitted`). The twin
// of AgentBoard (what a device needs of it: the board itself and its bound).

import { HerdrAvailability } from './herdr-session-info.js';
import { HerdrAgentStatus } from './herdr-agent.js';

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
   * The agents in the order a person wants them: by status (`blocked` first), the longest waiting
   * first within a status, then by session and pane.
   * @param {AgentBoard} board
   * @returns {HerdrAgent[]}
   */
  sorted(board) {
    return [...board.agents.values()].sort(AgentBoard.listOrder);
  },

  /**
   * @param {HerdrAgent} a
   * @param {HerdrAgent} b
   * @returns {number}
   */
  listOrder(a, b) {
    const rank = HerdrAgentStatus.all.indexOf(a.status) - HerdrAgentStatus.all.indexOf(b.status);
    if (rank !== 0) return rank;
    const [left, right] = [a.since ?? Infinity, b.since ?? Infinity];
    if (left !== right) return left < right ? -1 : 1;
    // As AgentKey's order: the session, then the pane id's length (w1:p2 before w1:p10), then it.
    if (a.key.session !== b.key.session) return a.key.session < b.key.session ? -1 : 1;
    if (a.key.pane.length !== b.key.pane.length) return a.key.pane.length - b.key.pane.length;
    return a.key.pane < b.key.pane ? -1 : a.key.pane > b.key.pane ? 1 : 0;
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
