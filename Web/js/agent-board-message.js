// One message of the agents family inside the companion channel (docs/companion.md, "Agents",
// "The messages"), computer → device: a JSON body (the channel adds its type byte 0x0D and
// version 1, channel-message.js). A whole board goes as `full` in one or more parts; after it,
// `changes` carry only what changed. Every field is bounded; a body that breaks a bound or a type
// does not parse. The twin of AgentBoardMessage (its codec: building messages from boards is the
// computer's).

import { RelayJSON } from './relay-json.js';
import { HerdrAgent, HerdrAgentStatus } from './herdr-agent.js';
import { HerdrAvailability, HerdrSessionInfo } from './herdr-session-info.js';
import { AgentBoard } from './agent-board.js';
import { utf8 } from './bytes.js';

/** @typedef {import('./herdr-agent.js').AgentKey} AgentKey */

/**
 * @typedef {{kind: 'full', part: number, parts: number} | {kind: 'changes'}} AgentBoardMessageKind
 */

/**
 * @typedef {object} AgentBoardMessage
 * @property {number} sequence grows by one with every message of a connection, from 1 (u32)
 * @property {AgentBoardMessageKind} kind
 * @property {HerdrAvailability | null} herdr
 * @property {HerdrSessionInfo[] | null} sessions
 * @property {number | null} omitted
 * @property {HerdrAgent[]} agents agents, whole (added or changed, in `changes`)
 * @property {AgentKey[]} removed agents gone (`changes` only)
 */

/**
 * A stable kind: `tooLong` (a body over 65000 bytes), `malformed` (a bound or a type broken),
 * and, from agent-board-receiver.js, `sequence` (a seq that does not grow), `outOfOrder` (a part
 * out of order, changes before a whole board), `tooManyAgents` (a board past 256 agents).
 * @typedef {'tooLong' | 'malformed' | 'sequence' | 'outOfOrder' | 'tooManyAgents'} AgentBoardMessageErrorKind
 */

/** An agents message that does not parse or does not follow the last one: the channel ends. */
export class AgentBoardMessageError extends Error {
  /**
   * @param {AgentBoardMessageErrorKind} kind
   * @param {string} message
   */
  constructor(kind, message) {
    super(message);
    this.name = 'AgentBoardMessageError';
    /** @readonly @type {AgentBoardMessageErrorKind} */
    this.kind = kind;
  }
}

/** The longest body: one channel message (65518 bytes) less the type and version bytes, with room to spare. */
const MAXIMUM_BODY_BYTES = 65000;
/** A whole board takes at most this many parts (256 agents of the longest kind fit in 4). */
const MAXIMUM_PARTS = 8;
const U32_MAX = 0xffffffff;

/** @param {string} message @returns {never} */
function malformed(message) {
  throw new AgentBoardMessageError('malformed', message);
}

/**
 * A text field: absent is null; anything but a string of at most `limit` bytes is malformed;
 * the text is then made printable and bounded (nothing left: null).
 * @param {Record<string, unknown>} fields
 * @param {string} key
 * @param {string} what
 * @param {number} limit
 * @returns {string | null}
 */
function text(fields, key, what, limit) {
  if (!RelayJSON.has(fields, key)) return null;
  const value = fields[key];
  if (typeof value !== 'string' || utf8(value).length > limit) malformed(`${what} is not a text of at most ${limit} bytes`);
  return value;
}

/** @param {unknown} value @returns {HerdrAvailability} */
function availability(value) {
  const fields = RelayJSON.isObject(value) ? value : null;
  const state = fields?.state;
  if (fields === null || typeof state !== 'string' || !/** @type {readonly string[]} */ (HerdrAvailability.states).includes(state)) {
    return malformed(`herdr is not {state: ${HerdrAvailability.states.join('|')}}`);
  }
  return HerdrAvailability.make(/** @type {import('./herdr-session-info.js').HerdrAvailabilityState} */ (state),
    text(fields, 'detail', "herdr's detail", HerdrSessionInfo.maximumDetailBytes));
}

/** @param {unknown} value @returns {HerdrSessionInfo[]} */
function sessions(value) {
  if (!Array.isArray(value) || value.length > HerdrSessionInfo.maximumCount) {
    return malformed(`sessions is not a list of at most ${HerdrSessionInfo.maximumCount}`);
  }
  /** @type {HerdrSessionInfo[]} */
  const list = [];
  for (const entry of value) {
    const fields = RelayJSON.isObject(entry) ? entry : null;
    const name = fields?.name;
    const isDefault = fields === null ? null : RelayJSON.boolean(fields.default);
    const state = fields?.state;
    if (fields === null || typeof name !== 'string' || !HerdrSessionInfo.isValidName(name) || isDefault === null ||
      typeof state !== 'string' || !/** @type {readonly string[]} */ (HerdrSessionInfo.states).includes(state) ||
      list.some((session) => session.name === name)) {
      return malformed("a session is not {name: herdr's session name rule, default, state}, or is listed twice");
    }
    const detail = text(fields, 'detail', "a session's detail", HerdrSessionInfo.maximumDetailBytes);
    list.push(HerdrSessionInfo.make(name, isDefault, /** @type {import('./herdr-session-info.js').HerdrSessionState} */ (state), detail));
  }
  return list;
}

/** @param {Record<string, unknown>} fields @returns {AgentKey} */
function key(fields) {
  const session = fields.session;
  const pane = fields.pane;
  if (typeof session !== 'string' || !HerdrSessionInfo.isValidName(session) || typeof pane !== 'string' ||
    !HerdrAgent.isValidPane(pane)) {
    return malformed("an agent's session or pane breaks its rule (a herdr session name; a pane id of " +
      `1-${HerdrAgent.maximumPaneBytes} letters, digits, : . _ -)`);
  }
  return { session, pane };
}

/** @param {unknown} value @returns {HerdrAgent} */
function agent(value) {
  if (!RelayJSON.isObject(value)) return malformed('an agent is not an object');
  const where = key(value);
  const status = value.status;
  if (typeof status !== 'string') return malformed('an agent has no status');
  let since = null;
  if (RelayJSON.has(value, 'since')) {
    since = RelayJSON.integer(value.since);
    if (since === null || since < 0) return malformed("an agent's since is not Unix seconds");
  }
  return HerdrAgent.make(where, {
    name: text(value, 'name', "an agent's name", HerdrAgent.maximumNameBytes),
    kind: text(value, 'kind', "an agent's kind", HerdrAgent.maximumKindBytes),
    status: HerdrAgentStatus.fromHerdr(status),
    title: text(value, 'title', "an agent's title", HerdrAgent.maximumTitleBytes),
    since,
  });
}

/**
 * Parses a body; throws an `AgentBoardMessageError`, naming the problem, for anything out of
 * bounds or of the wrong type. Unknown fields are ignored; an unknown status is `unknown`.
 * @param {Uint8Array} bytes
 * @returns {AgentBoardMessage}
 */
function parseBody(bytes) {
  if (bytes.length > MAXIMUM_BODY_BYTES) {
    throw new AgentBoardMessageError('tooLong', `an agents message of ${bytes.length} bytes (at most ${MAXIMUM_BODY_BYTES})`);
  }
  const object = RelayJSON.object(bytes);
  if (object === null) return malformed('an agents message is not a JSON object');
  const sequence = RelayJSON.integer(object.seq);
  if (sequence === null || sequence <= 0 || sequence > U32_MAX) return malformed('an agents message has no seq of 1 to 4294967295');
  /** @type {AgentBoardMessageKind} */
  let kind;
  if (RelayJSON.has(object, 'full')) {
    const fields = RelayJSON.isObject(object.full) ? object.full : null;
    const part = fields === null ? null : RelayJSON.integer(fields.part);
    const parts = fields === null ? null : RelayJSON.integer(fields.parts);
    if (part === null || parts === null || parts < 1 || parts > MAXIMUM_PARTS || part < 1 || part > parts ||
      RelayJSON.has(object, 'changes')) {
      return malformed(`full is not {part, parts} with 1 ≤ part ≤ parts ≤ ${MAXIMUM_PARTS}, alone`);
    }
    kind = { kind: 'full', part, parts };
  } else if (RelayJSON.boolean(object.changes) === true) {
    kind = { kind: 'changes' };
  } else {
    return malformed('an agents message is neither full nor changes');
  }
  const herdr = RelayJSON.has(object, 'herdr') ? availability(object.herdr) : null;
  const sessionList = RelayJSON.has(object, 'sessions') ? sessions(object.sessions) : null;
  let omitted = null;
  if (RelayJSON.has(object, 'omitted')) {
    omitted = RelayJSON.integer(object.omitted);
    if (omitted === null || omitted < 0 || omitted > U32_MAX) return malformed('omitted is not a count');
  }
  if (kind.kind === 'full' && kind.part === 1 && (herdr === null || sessionList === null || omitted === null)) {
    return malformed('the first part of a board lacks herdr, sessions or omitted');
  }
  if (kind.kind === 'full' && kind.part > 1 && (herdr !== null || sessionList !== null || omitted !== null)) {
    return malformed('a later part of a board names herdr, sessions or omitted');
  }
  const list = object.agents;
  if (!Array.isArray(list) || list.length > AgentBoard.maximumAgents) {
    return malformed(`agents is not a list of at most ${AgentBoard.maximumAgents}`);
  }
  const agents = list.map(agent);
  /** @type {AgentKey[]} */
  let removed = [];
  if (kind.kind === 'changes') {
    const gone = object.removed;
    if (!Array.isArray(gone) || gone.length > AgentBoard.maximumAgents) {
      return malformed(`removed is not a list of at most ${AgentBoard.maximumAgents}`);
    }
    removed = gone.map((entry) => (RelayJSON.isObject(entry) ? key(entry) : malformed('a removed entry is not an object')));
  } else if (RelayJSON.has(object, 'removed')) {
    return malformed('a board part names removed agents');
  }
  return { sequence, kind, herdr, sessions: sessionList, omitted, agents, removed };
}

/**
 * The header fields a message carries: herdr, sessions, omitted, as far as they are there.
 * @param {AgentBoardMessage} message
 */
function headerFields(message) {
  const parts = [];
  if (message.herdr !== null) {
    let object = `{"state":"${message.herdr.state}"`;
    if (message.herdr.detail !== null) object += `,"detail":${RelayJSON.quoted(message.herdr.detail)}`;
    parts.push(`"herdr":${object}}`);
  }
  if (message.sessions !== null) {
    const list = message.sessions.map((session) => {
      let object = `{"name":${RelayJSON.quoted(session.name)},"default":${session.isDefault},"state":"${session.state}"`;
      if (session.detail !== null) object += `,"detail":${RelayJSON.quoted(session.detail)}`;
      return object + '}';
    });
    parts.push(`"sessions":[${list.join(',')}]`);
  }
  if (message.omitted !== null) parts.push(`"omitted":${message.omitted}`);
  return parts.join(',');
}

/** @param {AgentKey} where */
function keyJSON(where) {
  return `{"session":${RelayJSON.quoted(where.session)},"pane":${RelayJSON.quoted(where.pane)}`;
}

/** @param {HerdrAgent} entry */
function agentJSON(entry) {
  let text = keyJSON(entry.key);
  if (entry.name !== null) text += `,"name":${RelayJSON.quoted(entry.name)}`;
  if (entry.kind !== null) text += `,"kind":${RelayJSON.quoted(entry.kind)}`;
  text += `,"status":"${entry.status}"`;
  if (entry.title !== null) text += `,"title":${RelayJSON.quoted(entry.title)}`;
  if (entry.since !== null) text += `,"since":${entry.since}`;
  return text + '}';
}

/**
 * The JSON body, as the Swift side writes it.
 * @param {AgentBoardMessage} message
 * @returns {Uint8Array}
 */
function body(message) {
  let text = `{"seq":${message.sequence}`;
  text += message.kind.kind === 'full' ? `,"full":{"part":${message.kind.part},"parts":${message.kind.parts}}` : ',"changes":true';
  const header = headerFields(message);
  if (header !== '') text += ',' + header;
  text += `,"agents":[${message.agents.map(agentJSON).join(',')}]`;
  if (message.kind.kind === 'changes') text += `,"removed":[${message.removed.map((where) => keyJSON(where) + '}').join(',')}]`;
  return utf8(text + '}');
}

export const AgentBoardMessage = Object.freeze({
  maximumBodyBytes: MAXIMUM_BODY_BYTES,
  maximumParts: MAXIMUM_PARTS,
  parseBody,
  body,
});
