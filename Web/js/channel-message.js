// One application message inside the end-to-end channel, told apart by its first byte
// (docs/companion.md, "Inside the channel"): `{` starts a control message, 0x01–0x1F a session
// protocol message (0x0D among them the agents family's board); any other first byte, and an
// empty message, end the channel. The one rule both sides read the other's messages by. The twin
// of ChannelMessage.

import { CompanionMessage } from './companion-message.js';
import { SessionMessage } from './session-message.js';
import { AgentBoardMessage } from './agent-board-message.js';
import { concatBytes } from './bytes.js';

/** @typedef {import('./companion-message.js').CompanionMessage} CompanionMessageValue */
/** @typedef {import('./session-message.js').SessionMessage} SessionMessageValue */
/** @typedef {import('./agent-board-message.js').AgentBoardMessage} AgentBoardMessageValue */

/**
 * @typedef {{type: 'control', message: CompanionMessageValue}
 *   | {type: 'session', message: SessionMessageValue}
 *   | {type: 'agents', message: AgentBoardMessageValue}} ChannelMessage
 */

/**
 * What a message is by its first byte alone; `invalid` (an empty message too) ends the channel.
 * @typedef {'control' | 'session' | 'invalid'} ChannelMessageKind
 */

/**
 * A stable kind: `empty`, `invalidFirstByte`, `malformedControl`, `malformedSession`,
 * `agentsVersion` (an agents message of a version other than 1), `malformedAgents`. The error
 * of the codec that refused the message is its `cause`.
 * @typedef {'empty' | 'invalidFirstByte' | 'malformedControl' | 'malformedSession' | 'agentsVersion' | 'malformedAgents'} ChannelMessageErrorKind
 */

/**
 * A channel message that breaks the rule or does not parse: the peer is broken or hostile, and
 * the channel ends. The message names what was sent ("an empty message", "a malformed control
 * message (…)"), to follow "sent".
 */
export class ChannelMessageError extends Error {
  /**
   * @param {ChannelMessageErrorKind} kind
   * @param {string} message
   * @param {unknown} [cause]
   */
  constructor(kind, message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ChannelMessageError';
    /** @readonly @type {ChannelMessageErrorKind} */
    this.kind = kind;
  }
}

/** The type byte of the agents family's messages, among the session protocol's. */
const AGENTS_TYPE = 0x0d;
/** The agents family's version. */
const AGENTS_VERSION = 1;
const OPEN_BRACE = 0x7b;

/**
 * @param {Uint8Array} bytes
 * @returns {ChannelMessageKind}
 */
function kindOf(bytes) {
  if (bytes.length === 0) return 'invalid';
  const first = bytes[0];
  if (first === OPEN_BRACE) return 'control';
  if (first >= 0x01 && first <= 0x1f) return 'session';
  return 'invalid';
}

/** @param {unknown} error */
function describe(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Parses one message by its kind; throws a `ChannelMessageError`, saying what the peer sent,
 * for a first byte of neither kind, an empty message, or a malformed message of either kind.
 * @param {Uint8Array} bytes
 * @returns {ChannelMessage}
 */
function parse(bytes) {
  switch (kindOf(bytes)) {
    case 'control':
      try {
        return { type: 'control', message: CompanionMessage.parse(bytes) };
      } catch (error) {
        throw new ChannelMessageError('malformedControl', `a malformed control message (${describe(error)})`, error);
      }
    case 'session':
      if (bytes[0] === AGENTS_TYPE) {
        if (bytes.length < 2 || bytes[1] !== AGENTS_VERSION) {
          throw new ChannelMessageError('agentsVersion', `an agents message of a version other than ${AGENTS_VERSION}`);
        }
        try {
          return { type: 'agents', message: AgentBoardMessage.parseBody(bytes.subarray(2)) };
        } catch (error) {
          throw new ChannelMessageError('malformedAgents', `a malformed agents message (${describe(error)})`, error);
        }
      }
      try {
        return { type: 'session', message: SessionMessage.parse(bytes) };
      } catch (error) {
        throw new ChannelMessageError('malformedSession', `a malformed session message (${describe(error)})`, error);
      }
    case 'invalid': {
      if (bytes.length === 0) throw new ChannelMessageError('empty', 'an empty message');
      const hex = `0x${bytes[0].toString(16).toUpperCase().padStart(2, '0')}`;
      throw new ChannelMessageError('invalidFirstByte',
        `a message starting with byte ${hex} (a control message starts with {, a session message with 0x01 to 0x1F)`);
    }
  }
}

/**
 * The bytes of a channel message, as the channel carries them.
 * @param {ChannelMessage} message
 * @returns {Uint8Array}
 */
function encode(message) {
  switch (message.type) {
    case 'control':
      return CompanionMessage.encode(message.message);
    case 'session':
      return SessionMessage.encode(message.message);
    case 'agents':
      return concatBytes(Uint8Array.of(AGENTS_TYPE, AGENTS_VERSION), AgentBoardMessage.body(message.message));
  }
}

export const ChannelMessage = Object.freeze({
  agentsType: AGENTS_TYPE,
  agentsVersion: AGENTS_VERSION,
  kindOf,
  parse,
  encode,
});
