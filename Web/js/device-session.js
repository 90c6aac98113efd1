// One terminal session on the device's side of the session protocol, across connections
// (docs/companion.md "The session protocol", "Screen sessions"): which stream it is on, its
// resume token, the output received and on the screen. Pure: the shell hands it the computer's
// messages and sends what it says. A screen session keeps a ScreenReplica instead of counting
// output. The twin of DeviceSession and ScreenFrame.

import { DeviceOutputFlow } from './session-flow.js';
import { ScreenReplica } from './screen-replica.js';
import { ScreenTarget } from './screen-target.js';
import { constantTimeEqual } from './bytes.js';

/** @typedef {import('./session-message.js').SessionMessage} SessionMessage */
/** @typedef {import('./session-message.js').SessionRefusal} SessionRefusal */
/** @typedef {import('./herdr-agent.js').AgentKey} AgentKey */
/** @typedef {import('./terminal-screen.js').TerminalScreen} TerminalScreen */
/** @typedef {import('./scrollback-lines.js').ScrollbackLines} ScrollbackLines */

/**
 * What a connection attaches: a herdr session by name (null: herdr's default), or an agent's pane.
 * @typedef {{type: 'session', name: string | null} | {type: 'agent', key: AgentKey}} Attach
 */

/**
 * One complete screen state as a device draws it. `screen` is the replica's own: draw it (or
 * copy it) before the next message is handled, which changes it.
 * @typedef {object} ScreenFrame
 * @property {TerminalScreen} screen
 * @property {bigint} state
 * @property {bigint} inputBytes the input bytes the program had had time to echo
 * @property {boolean} rang whether the bell rang since the state before
 */

/** @typedef {'first' | 'resumed' | 'afresh'} StartKind */

/**
 * - `none`: nothing to do (a duplicate, or a message for another stream).
 * - `started`: the session runs on this connection: the first time, resumed, or afresh.
 * - `output`: new output for the screen.
 * - `screen`: a screen session's state is complete: draw it and acknowledge it.
 * - `scrollback`: lines that scrolled off a screen session's screen, answering a request (the
 *   page's ScrollbackHistory judges whether it asked for them).
 * - `attachAfresh`: the computer lost the session (`text` says why): open afresh.
 * - `refused`: the computer refused the session for good.
 * - `broken`: the computer broke the protocol.
 * @typedef {{type: 'none'} | {type: 'started', kind: StartKind} | {type: 'output', data: Uint8Array}
 *   | {type: 'screen', frame: ScreenFrame} | {type: 'scrollback', scrollback: ScrollbackLines}
 *   | {type: 'exited', status: number | null, signal: string | null}
 *   | {type: 'attachAfresh', text: string} | {type: 'refused', reason: SessionRefusal, text: string}
 *   | {type: 'broken', why: string}} DeviceSessionOutcome
 */

/** @type {DeviceSessionOutcome} */
const NONE = Object.freeze({ type: 'none' });

export class DeviceSession {
  /** @type {number | null} the stream whose `started` is awaited */
  #waitingFor = null;
  #afresh = false;

  /**
   * @param {Attach} attach
   * @param {{window?: number, screen?: boolean}} [options] the most output held beyond the screen (4 MiB);
   *   a screen session when `screen`
   */
  constructor(attach, options = {}) {
    /** @readonly */
    this.attach = attach;
    /** @readonly */
    this.window = options.window ?? 4 * 1024 * 1024;
    this.stream = 0;
    /** @type {Uint8Array | null} */
    this.token = null;
    this.flow = new DeviceOutputFlow(this.window);
    this.hasStarted = false;
    /** @type {ScreenReplica | null} A screen session's copy of the screen; null for a session of bytes. */
    this.replica = options.screen === true ? new ScreenReplica() : null;
    /** The input bytes the computer said it received when a screen session last started. */
    this.inputReceivedAtStart = 0n;
  }

  get isScreen() {
    return this.replica !== null;
  }

  /**
   * The message that attaches the session on a new connection (or after `attachAfresh`): a
   * resume from the last byte received when the computer gave a token, else an open.
   * @param {number} cols
   * @param {number} rows
   * @returns {SessionMessage}
   */
  attachMessage(cols, rows) {
    this.stream = (this.stream + 1) >>> 0;
    if (this.stream === 0) this.stream = 1;
    this.#waitingFor = this.stream;
    const stream = this.stream;
    const attach = this.attach;
    if (this.replica !== null) {
      this.replica.restart();
      if (this.token !== null) return { type: 'resumeScreen', stream, token: this.token, cols, rows };
      const target = attach.type === 'agent' ? ScreenTarget.agent(attach.key.session, attach.key.pane) : ScreenTarget.session(attach.name);
      return { type: 'openScreen', stream, target, cols, rows };
    }
    if (this.token !== null) {
      return { type: 'resume', stream, token: this.token, received: this.flow.received, cols, rows, window: this.window };
    }
    if (attach.type === 'agent') {
      return { type: 'openAgent', stream, session: attach.key.session, pane: attach.key.pane, cols, rows, window: this.window };
    }
    return { type: 'open', stream, name: attach.name, cols, rows, window: this.window };
  }

  /**
   * A message from the computer on the current connection.
   * @param {SessionMessage} message
   * @returns {DeviceSessionOutcome}
   */
  receive(message) {
    const stream = message.type === 'screen' ? message.update.stream
      : message.type === 'scrollback' ? message.scrollback.stream : message.stream;
    if (stream !== this.stream) return NONE; // a stream this side left
    if (this.replica !== null) return this.#receiveScreen(message, this.replica);
    switch (message.type) {
      case 'started': {
        if (this.#waitingFor !== this.stream) return broken('the computer started a session twice');
        const resuming = this.token !== null;
        if (resuming && message.offset !== this.flow.received) {
          return broken(`the computer resumed from byte ${message.offset}, not ${this.flow.received}`);
        }
        if (!resuming && message.offset !== 0n) return broken(`a new session's output started at byte ${message.offset}`);
        if (message.window > this.window) return broken(`the computer took a window of ${message.window} bytes`);
        // Credits come every quarter of the window the computer keeps to, or it would wait.
        this.flow.window = message.window;
        return this.#started(message.token, resuming);
      }
      case 'output': {
        if (this.#waitingFor !== null) return broken('output came before the session started');
        const fresh = this.flow.receive(message.offset, message.data);
        if (fresh === null) return broken(`output bytes before ${message.offset} never came`);
        return fresh.length === 0 ? NONE : { type: 'output', data: fresh };
      }
      case 'exit':
        if (message.end !== this.flow.received) {
          return broken(`the session ended after byte ${message.end}, but ${this.flow.received} bytes came`);
        }
        return { type: 'exited', status: message.status, signal: message.signal };
      case 'refused':
        return this.#refused(message.reason, message.text);
      case 'screenStarted':
      case 'screen':
      case 'scrollback':
        return broken("the computer sent a screen session's message to a session of bytes");
      default:
        return broken('the computer sent a message only a device sends');
    }
  }

  /**
   * @param {SessionMessage} message
   * @param {ScreenReplica} replica
   * @returns {DeviceSessionOutcome}
   */
  #receiveScreen(message, replica) {
    switch (message.type) {
      case 'screenStarted': {
        if (this.#waitingFor !== this.stream) return broken('the computer started a session twice');
        const resuming = this.token !== null;
        if (resuming && !constantTimeEqual(message.token, /** @type {Uint8Array} */ (this.token))) {
          return broken('the computer resumed another session');
        }
        this.inputReceivedAtStart = message.inputReceived;
        return this.#started(message.token, resuming);
      }
      case 'screen': {
        if (this.#waitingFor !== null) return broken('a screen came before the session started');
        const outcome = replica.apply(message.update);
        switch (outcome.kind) {
          case 'partial': return NONE;
          case 'broken': return broken(outcome.reason);
          case 'complete':
            return { type: 'screen', frame: { screen: replica.screen, state: outcome.state, inputBytes: replica.inputBytes, rang: outcome.rang } };
        }
        return NONE;
      }
      case 'exit':
        if (message.end !== replica.state) {
          return broken(`the session ended after screen state ${message.end}, but this device has ${replica.state}`);
        }
        return { type: 'exited', status: message.status, signal: message.signal };
      case 'refused':
        return this.#refused(message.reason, message.text);
      case 'scrollback':
        // Asked for on this stream only once it started, as a screen is sent.
        if (this.#waitingFor !== null) return broken('scrollback came before the session started');
        return { type: 'scrollback', scrollback: message.scrollback };
      case 'started':
      case 'output':
        return broken("the computer sent a session of bytes' message to a screen session");
      default:
        return broken('the computer sent a message only a device sends');
    }
  }

  /**
   * @param {Uint8Array} token
   * @param {boolean} resuming
   * @returns {DeviceSessionOutcome}
   */
  #started(token, resuming) {
    this.#waitingFor = null;
    this.token = token.slice();
    /** @type {StartKind} */
    const kind = this.#afresh ? 'afresh' : resuming ? 'resumed' : this.hasStarted ? 'afresh' : 'first';
    this.#afresh = false;
    this.hasStarted = true;
    return { type: 'started', kind };
  }

  /**
   * @param {SessionRefusal} reason
   * @param {string} text
   * @returns {DeviceSessionOutcome}
   */
  #refused(reason, text) {
    if (this.token !== null && this.#waitingFor === this.stream && (reason === 'unknownSession' || reason === 'resumePointLost')) {
      // Gone on the computer: a fresh attach, from a fresh output count and a blank screen.
      this.token = null;
      this.flow = new DeviceOutputFlow(this.window);
      if (this.replica !== null) this.replica = new ScreenReplica();
      this.#afresh = true;
      return { type: 'attachAfresh', text };
    }
    return { type: 'refused', reason, text };
  }

  /**
   * The window the device asked for since (`{"window"}`): credits come every quarter of it.
   * @param {number} window
   */
  setWindow(window) {
    this.flow.window = window;
  }

  /**
   * `count` bytes reached the screen: the credit to send, if one is due.
   * @param {number} count
   */
  consumed(count) {
    return this.flow.consume(count);
  }
}

/**
 * @param {string} why
 * @returns {DeviceSessionOutcome}
 */
function broken(why) {
  return { type: 'broken', why };
}
