// The device's side of the agents family (docs/companion.md, "Agents"): puts a board together
// from its parts and applies changes after it, checking that each message follows the last (a
// `seq` that grows, parts in order, changes only after a whole board). The twin of
// AgentBoardReceiver.

import { AgentBoard } from './agent-board.js';
import { AgentBoardMessageError } from './agent-board-message.js';

/** @typedef {import('./agent-board-message.js').AgentBoardMessage} AgentBoardMessage */

/** @param {AgentBoard} board */
function check(board) {
  if (board.agents.size > AgentBoard.maximumAgents) {
    throw new AgentBoardMessageError('tooManyAgents', `a board of more than ${AgentBoard.maximumAgents} agents`);
  }
}

export class AgentBoardReceiver {
  constructor() {
    /**
     * The last whole board; null until the first arrived.
     * @type {AgentBoard | null}
     */
    this.board = null;
    /** @private */
    this.lastSequence = 0;
    /**
     * @private
     * @type {{board: AgentBoard, parts: number, next: number} | null}
     */
    this.assembling = null;
  }

  /**
   * Takes the next message; returns the board when it changed (a whole board put together, or
   * changes applied), null while a board's parts are still coming. Throws an
   * `AgentBoardMessageError` for a message out of order or one that would break the board's bounds.
   * @param {AgentBoardMessage} message
   * @returns {AgentBoard | null}
   */
  receive(message) {
    if (message.sequence <= this.lastSequence) {
      throw new AgentBoardMessageError('sequence', `an agents message's seq ${message.sequence} does not follow ${this.lastSequence}`);
    }
    this.lastSequence = message.sequence;
    const kind = message.kind;
    if (kind.kind === 'full') {
      if (kind.part === 1) {
        if (message.herdr === null || message.sessions === null || message.omitted === null) {
          throw new AgentBoardMessageError('outOfOrder', 'the first part of a board lacks herdr, sessions or omitted');
        }
        this.assembling = {
          board: AgentBoard.make({ herdr: message.herdr, sessions: message.sessions, omitted: message.omitted }),
          parts: kind.parts,
          next: 1,
        };
      }
      const assembling = this.assembling;
      if (assembling === null || assembling.next !== kind.part || assembling.parts !== kind.parts) {
        throw new AgentBoardMessageError('outOfOrder', `part ${kind.part} of ${kind.parts} of a board came out of order`);
      }
      const next = AgentBoard.copy(assembling.board);
      for (const agent of message.agents) next.agents.set(AgentBoard.keyText(agent.key), agent);
      check(next);
      if (kind.part !== kind.parts) {
        this.assembling = { board: next, parts: assembling.parts, next: assembling.next + 1 };
        return null;
      }
      this.assembling = null;
      this.board = next;
      return next;
    }
    if (this.assembling !== null || this.board === null) {
      throw new AgentBoardMessageError('outOfOrder', 'agents changes came before a whole board');
    }
    const next = AgentBoard.copy(this.board);
    if (message.herdr !== null) next.herdr = message.herdr;
    if (message.sessions !== null) next.sessions = message.sessions;
    if (message.omitted !== null) next.omitted = message.omitted;
    for (const key of message.removed) next.agents.delete(AgentBoard.keyText(key));
    for (const agent of message.agents) next.agents.set(AgentBoard.keyText(agent.key), agent);
    check(next);
    this.board = next;
    return next;
  }
}
