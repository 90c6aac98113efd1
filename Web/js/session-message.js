// The terminal session protocol inside the companion channel (docs/companion.md, "The session
// protocol" and "Screen sessions"), version 1. Each message is one channel message: a type byte
// from 0x01 to 0x1F (channel-message.js tells the kinds apart), then fixed big-endian fields;
// every field is bounded. One message fits one Noise frame (at most 65518 bytes), so output and
// input chunks are at most 65505 and 65513 bytes. The twin of SessionMessage and SessionRefusal.
//
// A message is a plain object tagged by `type`, named as the Swift cases; u64 fields are
// bigints, the rest numbers. `parse` throws a `SessionMessageError` (session-wire.js) with a
// stable `kind` for anything malformed or out of bounds, never anything else.

import { Reader, SessionLimits, SessionMessageError, Writer, utf8Prefix } from './session-wire.js';
import { ScreenUpdate } from './screen-update.js';
import { ScrollbackLines } from './scrollback-lines.js';
import { ScreenTarget } from './screen-target.js';
import { HerdrSessionName } from './herdr-session-name.js';
import { HerdrAgent } from './herdr-agent.js';
import { utf8 } from './bytes.js';

/**
 * Why the computer refused a session: 1 the session is not there, 2 the output from the resume
 * point is no longer kept, 4 the command could not start, 5 the device already holds as many
 * sessions as the computer keeps, 6 the agent to open is not among the computer's agents, 255
 * other (and any reason this side does not know).
 * @typedef {'unknownSession' | 'resumePointLost' | 'startFailed' | 'tooManySessions' | 'unknownAgent' | 'other'} SessionRefusal
 */

/**
 * @typedef {{type: 'open', stream: number, name: string | null, cols: number, rows: number, window: number}
 *   | {type: 'openAgent', stream: number, session: string, pane: string, cols: number, rows: number, window: number}
 *   | {type: 'resume', stream: number, token: Uint8Array, received: bigint, cols: number, rows: number, window: number}
 *   | {type: 'started', stream: number, token: Uint8Array, offset: bigint, window: number}
 *   | {type: 'output', stream: number, offset: bigint, data: Uint8Array}
 *   | {type: 'input', stream: number, data: Uint8Array}
 *   | {type: 'resize', stream: number, cols: number, rows: number}
 *   | {type: 'credit', stream: number, consumed: bigint}
 *   | {type: 'endOfInput', stream: number}
 *   | {type: 'close', stream: number}
 *   | {type: 'exit', stream: number, end: bigint, status: number | null, signal: string | null}
 *   | {type: 'refused', stream: number, reason: SessionRefusal, text: string}
 *   | {type: 'openScreen', stream: number, target: ScreenTarget, cols: number, rows: number}
 *   | {type: 'resumeScreen', stream: number, token: Uint8Array, cols: number, rows: number}
 *   | {type: 'screenStarted', stream: number, token: Uint8Array, inputReceived: bigint}
 *   | {type: 'screen', update: ScreenUpdate}
 *   | {type: 'screenAck', stream: number, state: bigint}
 *   | {type: 'scrollbackRequest', stream: number, end: bigint, count: number}
 *   | {type: 'scrollback', scrollback: ScrollbackLines}} SessionMessage
 */

/** The type bytes (docs/companion.md's two tables). 0x0D, the agents family, is channel-message.js's. */
export const SessionMessageType = Object.freeze({
  open: 0x01,
  resume: 0x02,
  started: 0x03,
  output: 0x04,
  input: 0x05,
  resize: 0x06,
  credit: 0x07,
  endOfInput: 0x08,
  close: 0x09,
  exit: 0x0a,
  refused: 0x0b,
  openAgent: 0x0c,
  openScreen: 0x0e,
  resumeScreen: 0x0f,
  screenStarted: 0x10,
  screen: 0x11,
  screenAck: 0x12,
  scrollbackRequest: 0x13,
  scrollback: 0x14,
});

/** @type {Map<number, SessionMessage['type']>} */
const TYPE_NAMES = new Map(
  /** @type {[SessionMessage['type'], number][]} */ (Object.entries(SessionMessageType)).map(([name, byte]) => [byte, name]));

/** @type {Readonly<Record<SessionRefusal, number>>} */
const REFUSAL_REASONS = Object.freeze({
  unknownSession: 1,
  resumePointLost: 2,
  startFailed: 4,
  tooManySessions: 5,
  unknownAgent: 6,
  other: 255,
});

/** @param {number} raw @returns {SessionRefusal} */
function refusalOf(raw) {
  for (const [name, value] of Object.entries(REFUSAL_REASONS)) {
    if (value === raw) return /** @type {SessionRefusal} */ (name);
  }
  return 'other';
}

/** @param {Uint8Array} token */
function checkToken(token) {
  if (!(token instanceof Uint8Array) || token.length !== SessionLimits.tokenSize) {
    throw new SessionMessageError('unencodable', `a token must be ${SessionLimits.tokenSize} bytes`);
  }
}

/**
 * A one-byte length and a name's UTF-8 (`open`, `open agent`): a name of more than 255 bytes
 * cannot be written.
 * @param {Writer} out
 * @param {string} text
 */
function lengthAndName(out, text) {
  const bytes = utf8(text);
  if (bytes.length > SessionLimits.maximumShortText) {
    throw new SessionMessageError('unencodable', `a name of ${bytes.length} bytes (at most ${SessionLimits.maximumShortText})`);
  }
  out.u8(bytes.length);
  out.bytes(bytes);
}

/**
 * The bytes of `message`. Texts the protocol bounds are cut at a code point's boundary, as the
 * Swift side cuts them (a refusal's text and a title to 1024 bytes, a signal name to 32, a
 * screen target's names to 255, a cell's text to 32). Throws a `SessionMessageError` of kind
 * `unencodable` for a value its field cannot hold (a stream outside u32, a token not of 16
 * bytes, a u64 that is not a bigint from 0 to 2^64 − 1, a name over 255 bytes); anything else
 * out of the protocol's bounds (cols of 0, a window of 1 byte) is written as it is, for the
 * peer to refuse.
 * @param {SessionMessage} message
 * @returns {Uint8Array}
 */
function encode(message) {
  const type = SessionMessageType[message.type];
  switch (message.type) {
    case 'open': {
      const out = new Writer(16 + (message.name?.length ?? 0));
      out.kind(type, message.stream, true);
      out.u16(message.cols);
      out.u16(message.rows);
      out.u32(message.window);
      lengthAndName(out, message.name ?? '');
      return out.finish();
    }
    case 'openAgent': {
      const out = new Writer(64);
      out.kind(type, message.stream, true);
      out.u16(message.cols);
      out.u16(message.rows);
      out.u32(message.window);
      lengthAndName(out, message.session);
      lengthAndName(out, message.pane);
      return out.finish();
    }
    case 'resume': {
      const out = new Writer(38);
      checkToken(message.token);
      out.kind(type, message.stream, true);
      out.bytes(message.token);
      out.u64(message.received);
      out.u16(message.cols);
      out.u16(message.rows);
      out.u32(message.window);
      return out.finish();
    }
    case 'started': {
      const out = new Writer(33);
      checkToken(message.token);
      out.kind(type, message.stream);
      out.bytes(message.token);
      out.u64(message.offset);
      out.u32(message.window);
      return out.finish();
    }
    case 'output': {
      const out = new Writer(13 + message.data.length);
      out.kind(type, message.stream);
      out.u64(message.offset);
      out.bytes(message.data);
      return out.finish();
    }
    case 'input': {
      const out = new Writer(5 + message.data.length);
      out.kind(type, message.stream);
      out.bytes(message.data);
      return out.finish();
    }
    case 'resize': {
      const out = new Writer(9);
      out.kind(type, message.stream);
      out.u16(message.cols);
      out.u16(message.rows);
      return out.finish();
    }
    case 'credit': {
      const out = new Writer(13);
      out.kind(type, message.stream);
      out.u64(message.consumed);
      return out.finish();
    }
    case 'endOfInput':
    case 'close': {
      const out = new Writer(5);
      out.kind(type, message.stream);
      return out.finish();
    }
    case 'exit': {
      const out = new Writer(64);
      out.kind(type, message.stream);
      out.u64(message.end);
      out.u8(message.status === null ? 0 : 1);
      const status = message.status ?? 0;
      if (!Number.isInteger(status) || status < -0x80000000 || status > 0x7fffffff) {
        throw new SessionMessageError('unencodable', `an exit status ${status} (an i32)`);
      }
      out.u32(status >>> 0);
      const name = utf8Prefix(message.signal ?? '', SessionLimits.maximumSignalName);
      out.u8(name.length);
      out.bytes(name);
      return out.finish();
    }
    case 'refused': {
      const out = new Writer(64);
      out.kind(type, message.stream);
      out.u8(REFUSAL_REASONS[message.reason]);
      const text = utf8Prefix(message.text, SessionLimits.maximumText);
      out.u16(text.length);
      out.bytes(text);
      return out.finish();
    }
    case 'openScreen': {
      const out = new Writer(64);
      out.kind(type, message.stream, true);
      out.u16(message.cols);
      out.u16(message.rows);
      const target = message.target;
      if (target.kind === 'session') {
        out.u8(0);
        out.shortText(target.name ?? '');
      } else {
        out.u8(1);
        out.shortText(target.session);
        out.shortText(target.pane);
      }
      return out.finish();
    }
    case 'resumeScreen': {
      const out = new Writer(26);
      checkToken(message.token);
      out.kind(type, message.stream, true);
      out.bytes(message.token);
      out.u16(message.cols);
      out.u16(message.rows);
      return out.finish();
    }
    case 'screenStarted': {
      const out = new Writer(29);
      checkToken(message.token);
      out.kind(type, message.stream);
      out.bytes(message.token);
      out.u64(message.inputReceived);
      return out.finish();
    }
    case 'screen': {
      const out = new Writer(256);
      out.kind(type, message.update.stream);
      ScreenUpdate.write(message.update, out);
      return out.finish();
    }
    case 'screenAck': {
      const out = new Writer(13);
      out.kind(type, message.stream);
      out.u64(message.state);
      return out.finish();
    }
    case 'scrollbackRequest': {
      const out = new Writer(15);
      out.kind(type, message.stream);
      out.u64(message.end);
      out.u16(message.count);
      return out.finish();
    }
    case 'scrollback': {
      const out = new Writer(256);
      out.kind(type, message.scrollback.stream);
      ScrollbackLines.write(message.scrollback, out);
      return out.finish();
    }
  }
}

/**
 * Parses one message; throws a `SessionMessageError`, naming the problem, for anything
 * malformed or out of bounds (the checks and refusals of the Swift side's reader, in its order).
 * @param {Uint8Array} bytes
 * @returns {SessionMessage}
 */
function parse(bytes) {
  const reader = new Reader(bytes);
  if (bytes.length > SessionLimits.maximumLength) {
    throw new SessionMessageError('tooLong', `a session message of ${bytes.length} bytes (at most ${SessionLimits.maximumLength})`);
  }
  const typeByte = reader.u8();
  const type = TYPE_NAMES.get(typeByte);
  if (type === undefined) throw new SessionMessageError('unknownType', `an unknown session message type ${typeByte}`);

  const version = () => {
    const value = reader.u8();
    if (value !== SessionLimits.version) {
      throw new SessionMessageError('version', `session protocol version ${value} (this side speaks ${SessionLimits.version})`);
    }
  };
  const cells = () => {
    const cols = reader.u16();
    const rows = reader.u16();
    const max = SessionLimits.maximumCells;
    if (cols < 1 || cols > max || rows < 1 || rows > max) {
      throw new SessionMessageError('cells', `a window of ${cols}×${rows} cells (1 to ${max} each)`);
    }
    return { cols, rows };
  };
  const window = () => {
    const value = reader.u32();
    if (value < SessionLimits.minimumWindow || value > SessionLimits.maximumWindow) {
      throw new SessionMessageError('window', `a flow-control window of ${value} bytes`);
    }
    return value;
  };
  /** @returns {string | null} a herdr session's name, null for the default session (0 bytes) */
  const sessionName = () => {
    const name = reader.text(reader.u8());
    if (name !== '' && !HerdrSessionName.isValid(name)) {
      throw new SessionMessageError('name', "a session name that breaks herdr's rule");
    }
    return name === '' ? null : name;
  };
  const agent = () => {
    const session = reader.text(reader.u8());
    const pane = reader.text(reader.u8());
    if (!HerdrSessionName.isValid(session) || !HerdrAgent.isValidPane(pane)) {
      throw new SessionMessageError('agent', "an agent's session name or pane id that breaks its rule");
    }
    return { session, pane };
  };

  /** @type {SessionMessage} */
  let message;
  switch (type) {
    case 'open': {
      version();
      const stream = reader.u32();
      const { cols, rows } = cells();
      const size = window();
      message = { type, stream, name: sessionName(), cols, rows, window: size };
      break;
    }
    case 'openAgent': {
      version();
      const stream = reader.u32();
      const { cols, rows } = cells();
      const size = window();
      const { session, pane } = agent();
      message = { type, stream, session, pane, cols, rows, window: size };
      break;
    }
    case 'resume': {
      version();
      const stream = reader.u32();
      const token = reader.take(SessionLimits.tokenSize);
      const received = reader.u64();
      const { cols, rows } = cells();
      message = { type, stream, token, received, cols, rows, window: window() };
      break;
    }
    case 'started': {
      const stream = reader.u32();
      const token = reader.take(SessionLimits.tokenSize);
      const offset = reader.u64();
      message = { type, stream, token, offset, window: window() };
      break;
    }
    case 'output': {
      const stream = reader.u32();
      const offset = reader.u64();
      message = { type, stream, offset, data: reader.rest() };
      break;
    }
    case 'input': {
      const stream = reader.u32();
      message = { type, stream, data: reader.rest() };
      break;
    }
    case 'resize': {
      const stream = reader.u32();
      message = { type, stream, ...cells() };
      break;
    }
    case 'credit': {
      const stream = reader.u32();
      message = { type, stream, consumed: reader.u64() };
      break;
    }
    case 'endOfInput':
    case 'close':
      message = { type, stream: reader.u32() };
      break;
    case 'exit': {
      const stream = reader.u32();
      const end = reader.u64();
      const hasStatus = reader.u8();
      if (hasStatus > 1) throw new SessionMessageError('exitStatusFlag', `an exit with a status flag of ${hasStatus}`);
      const status = reader.u32() | 0;
      const length = reader.u8();
      if (length > SessionLimits.maximumSignalName) {
        throw new SessionMessageError('signalName', `a signal name of ${length} bytes`);
      }
      const signal = reader.text(length);
      message = { type, stream, end, status: hasStatus === 1 ? status : null, signal: signal === '' ? null : signal };
      break;
    }
    case 'refused': {
      const stream = reader.u32();
      const raw = reader.u8();
      const length = reader.u16();
      if (length > SessionLimits.maximumText) {
        throw new SessionMessageError('refusalText', `a refusal text of ${length} bytes`);
      }
      message = { type, stream, reason: refusalOf(raw), text: reader.text(length) };
      break;
    }
    case 'openScreen': {
      version();
      const stream = reader.u32();
      const { cols, rows } = cells();
      const kind = reader.u8();
      /** @type {ScreenTarget} */
      let target;
      if (kind === 0) {
        target = ScreenTarget.session(sessionName());
      } else if (kind === 1) {
        const { session, pane } = agent();
        target = ScreenTarget.agent(session, pane);
      } else {
        throw new SessionMessageError('screenTarget', `a screen session's target of kind ${kind} (0 or 1)`);
      }
      message = { type, stream, target, cols, rows };
      break;
    }
    case 'resumeScreen': {
      version();
      const stream = reader.u32();
      const token = reader.take(SessionLimits.tokenSize);
      message = { type, stream, token, ...cells() };
      break;
    }
    case 'screenStarted': {
      const stream = reader.u32();
      const token = reader.take(SessionLimits.tokenSize);
      message = { type, stream, token, inputReceived: reader.u64() };
      break;
    }
    case 'screen':
      message = { type, update: ScreenUpdate.read(reader.u32(), reader) };
      break;
    case 'screenAck': {
      const stream = reader.u32();
      const state = reader.u64();
      if (state === 0n) throw new SessionMessageError('screenAck', 'an acknowledgement of screen state 0');
      message = { type, stream, state };
      break;
    }
    case 'scrollbackRequest': {
      const stream = reader.u32();
      const end = reader.u64();
      const count = reader.u16();
      if (count < 1 || count > ScrollbackLines.maximumRequest) {
        throw new SessionMessageError('scrollbackRequest',
          `a request for ${count} scrollback lines (1 to ${ScrollbackLines.maximumRequest})`);
      }
      message = { type, stream, end, count };
      break;
    }
    case 'scrollback':
      message = { type, scrollback: ScrollbackLines.read(reader.u32(), reader) };
      break;
  }
  if (!reader.atEnd) throw new SessionMessageError('trailingBytes', `${reader.remaining} bytes after a ${type} message`);
  return message;
}

/**
 * The stream a message belongs to.
 * @param {SessionMessage} message
 * @returns {number}
 */
function stream(message) {
  switch (message.type) {
    case 'screen':
      return message.update.stream;
    case 'scrollback':
      return message.scrollback.stream;
    default:
      return message.stream;
  }
}

export const SessionMessage = Object.freeze({
  ...SessionLimits,
  refusalReasons: REFUSAL_REASONS,
  encode,
  parse,
  stream,
});
