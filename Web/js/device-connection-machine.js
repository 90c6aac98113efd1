// The device's connection to its computer through the relay, as a pure state machine
// (docs/companion.md "The session protocol", "Resume", "Liveness", "Frame budget", "Screen
// sessions", "Agents"): what the browser's connection decides, without its sockets, crypto or
// clock. Inputs come one at a time with the time (`handle(input, now)`, seconds on a monotonic
// clock): a keystroke, a connection's messages, an attempt that ended, the page coming back from
// the background, a tick. Actions come out: start an attempt, adopt, close or abandon a
// connection, send a message, write output, draw a screen, hand on scrollback, emit an event,
// finish. `nextWake`
// says when to tick next.
//
// It keeps the session across connections (DeviceSession, the input not yet sent and the input
// log for resending), the connection in use (liveness, frame budget, flow window, the agents
// board), and the retry state between connections. An attempt (a signed join, the handshake,
// the status, its ack and what the computer serves, the registration: relay-road.js) is opaque
// here, as in the Swift twin. The relay road only: a browser has no home road, so there are no
// home probes and no head starts. The twin of DeviceConnectionMachine.

import { DeviceSession } from './device-session.js';
import { DeviceInputLog } from './device-input-log.js';
import { FrameBudget } from './session-flow.js';
import { PathLiveness } from './path-liveness.js';
import { PathWindow } from './path-window.js';
import { RelayBackoff } from './relay-backoff.js';
import { RelayLink } from './relay-link.js';
import { RetryAfterDrop } from './retry-after-drop.js';
import { RoadFailure } from './road-failure.js';
import { ChannelMessage } from './channel-message.js';
import { CompanionMessage } from './companion-message.js';
import { SessionMessage } from './session-message.js';
import { AgentBoardReceiver } from './agent-board-receiver.js';
import { concatBytes } from './bytes.js';

/** @typedef {import('./device-session.js').Attach} Attach */
/** @typedef {import('./device-session.js').ScreenFrame} ScreenFrame */
/** @typedef {import('./road-failure.js').RoadFailure} RoadFailureValue */
/** @typedef {import('./agent-board.js').AgentBoard} AgentBoard */
/** @typedef {import('./home-address.js').HomeAddress} HomeAddress */
/** @typedef {import('./scrollback-lines.js').ScrollbackLines} ScrollbackLines */

/**
 * A connection an attempt brought up: the relay's host, whether it registered the room, whether
 * the computer said it serves screen sessions (`{"serves":{"screen":1}}`).
 * @typedef {{relay: string, registeredNow: boolean, servesScreenSessions: boolean}} Arrival
 */

/**
 * - `pairingGone`: pair again: the room is gone or the relay no longer takes the join key.
 * - `unreachable`: the computer or the relay could not be reached when the session was to start.
 * - `relayRefused`: the relay refused for good (its daily quota, another connection of this device).
 * - `connectionLost`: the link dropped and reconnecting gave up.
 * - `sessionRefused`: the computer refused the session, or it could not start there.
 * - `agentNotFound`: the agent to open is not on the computer's board.
 * - `agentsUnavailable`: the computer cannot list its agents (as the caller found).
 * - `protocolViolation`: the computer broke the session protocol.
 * - `local`: this side's output failed.
 * @typedef {{kind: 'pairingGone' | 'unreachable' | 'relayRefused' | 'connectionLost' | 'sessionRefused' | 'agentNotFound'
 *   | 'agentsUnavailable' | 'protocolViolation' | 'local', message: string}} Failure
 */

/** @typedef {{type: 'exited', status: number | null, signal: string | null} | {type: 'cancelled'} | {type: 'failed', failure: Failure}} Termination */

/**
 * Why the session moved to another connection while the old one had not dropped: a ping was
 * out and nothing came for this many seconds, or the page came back (`resumed`, in `reason`'s words).
 * @typedef {{type: 'pathWentQuiet', seconds: number} | {type: 'resumed', reason: string}} MoveReason
 */

/**
 * @typedef {{type: 'connected', relay: string} | {type: 'homeAddresses', addresses: HomeAddress[]}
 *   | {type: 'moved', relay: string, because: MoveReason} | {type: 'started'}
 *   | {type: 'reconnecting', attempt: number, reason: string} | {type: 'resumed'} | {type: 'attachedAfresh', reason: string}
 *   | {type: 'registered'} | {type: 'agents', board: AgentBoard}} DeviceEvent
 */

/**
 * - `start`: connect for the first time.
 * - `keys`: keystrokes for the session; `endOfInput`; `resize`.
 * - `shown`: `count` bytes of output reached the screen; `outputFailed`: they could not.
 * - `open`: attach this when nothing is attached yet; `watchAgents`: start or stop the board.
 * - `scrollbackRequest`: ask for a screen session's scrolled-off lines, on `stream` only (a
 *   request for a stream the session left is dropped: its connection is gone).
 * - `stop`: the person or the caller ends it.
 * - `attemptEnded`: an attempt ended: a connection up (channel, status acknowledged), or why not.
 * - `frame`: a frame arrived on connection `id`, completing these channel messages.
 * - `ended`: connection `id` ended (or a frame on it failed to authenticate).
 * - `resumed`: the page came back from the background, or the browser went online again: the
 *   connection may be dead without a word; reconnect at once (`reason` in words).
 * - `tick`: time passed (at `nextWake`, or sooner).
 * @typedef {{type: 'start'} | {type: 'keys', bytes: Uint8Array} | {type: 'endOfInput'} | {type: 'resize', cols: number, rows: number}
 *   | {type: 'shown', count: number} | {type: 'outputFailed'} | {type: 'open', attach: Attach} | {type: 'watchAgents', watch: boolean}
 *   | {type: 'scrollbackRequest', stream: number, end: bigint, count: number}
 *   | {type: 'stop', termination: Termination}
 *   | {type: 'attemptEnded', id: number, result: {ok: true, arrival: Arrival} | {ok: false, failure: RoadFailureValue}}
 *   | {type: 'frame', id: number, messages: Uint8Array[]} | {type: 'ended', id: number, failure: RoadFailureValue}
 *   | {type: 'resumed', reason: string} | {type: 'tick'}} DeviceInput
 */

/**
 * - `connect`: start attempt `id` (a fresh socket, join, handshake, status); `attemptEnded` follows.
 * - `cancel`: call that attempt off (its result no longer matters).
 * - `adopt`: the connection `id` brought up is the one in use: its frames come as `frame`, its end as `ended`.
 * - `close`: close that connection with its closing handshake; `abandon`: drop it at once.
 * - `send`: one channel message on the connection in use.
 * - `write`: output for the terminal; `shown` (or `outputFailed`) follows once written.
 * - `draw`: a screen session's screen, complete.
 * - `scrollback`: the computer's answer to a scrollback request.
 * - `finish`: the last action.
 * @typedef {{type: 'connect', id: number} | {type: 'cancel', id: number} | {type: 'adopt', id: number} | {type: 'close', id: number}
 *   | {type: 'abandon', id: number} | {type: 'send', bytes: Uint8Array} | {type: 'write', bytes: Uint8Array}
 *   | {type: 'draw', frame: ScreenFrame} | {type: 'scrollback', scrollback: ScrollbackLines} | {type: 'emit', event: DeviceEvent} | {type: 'finish', termination: Termination}} DeviceAction
 */

/**
 * @typedef {object} DeviceConnectionSettings
 * @property {Attach | null} attach what to attach on each connection; null attaches nothing until `open`
 * @property {boolean} [screen] attach as a screen session
 * @property {boolean} [watchAgents] ask each connection for the agents board
 * @property {number} cols
 * @property {number} rows
 * @property {number} [window] the most output this side holds beyond what reached the screen (4 MiB)
 * @property {(attempt: number) => number | null} [retryDelay] seconds before reconnect attempt n (from 1); null gives up
 * @property {{seconds: number, failure: Failure} | null} [boardWait] watching with nothing attached: each connection's
 *   wait for its first board, and the failure when none comes (a herdr-host older than the agents family)
 * @property {() => number} [random] uniform in 0…1 (the reshard's jittered delay)
 */

/** @typedef {{road: string, connectedAt: number, closedBecause: string | null}} Dropped */

/**
 * @typedef {{phase: 'idle'} | {phase: 'connecting', id: number} | {phase: 'waiting', until: number} | {phase: 'up'}
 *   | {phase: 'awaitingRace', failure: RoadFailureValue, dropped: Dropped} | {phase: 'finished'}} Phase
 */

/**
 * The connection in use: what goes out on it within the frame budget, and what the computer's
 * messages on it mean.
 */
class Link {
  /**
   * @param {number} id
   * @param {string} relay
   * @param {number} now
   */
  constructor(id, relay, now) {
    this.id = id;
    this.relay = relay;
    this.connectedAt = now;
    this.budget = FrameBudget.device();
    this.liveness = new PathLiveness(now);
    /** @type {number | null} The session's stream on this connection once it started here. */
    this.stream = null;
    this.attachSent = false;
    /** @type {{cols: number, rows: number} | null} */
    this.resize = null;
    /** @type {bigint | null} */
    this.credit = null;
    /** @type {bigint | null} The newest complete screen state to acknowledge. */
    this.screenAck = null;
    /** @type {{end: bigint, count: number} | null} A scrollback request to send on `stream`. */
    this.scrollbackRequest = null;
    /** @type {number | null} A pong owed to the computer. */
    this.pong = null;
    /** @type {PathWindow | null} */
    this.window = null;
    /** @type {number | null} */
    this.windowChange = null;
    /** @type {boolean | null} */
    this.watchChange = null;
    this.board = new AgentBoardReceiver();
    /** @type {number | null} */
    this.boardDeadline = null;
    /** @type {number | null} When what the budget held back may go. */
    this.flushAt = null;
    /** @type {string | null} Why this side dropped it. */
    this.closedBecause = null;
  }
}

/** @param {number} attempt */
function defaultRetryDelay(attempt) {
  return attempt <= 10 ? Math.min(0.5 * 2 ** Math.min(attempt - 1, 5), 15) : null;
}

/** @param {number} cells */
function clamp(cells) {
  return Math.max(1, Math.min(Math.trunc(cells), SessionMessage.maximumCells));
}

/**
 * @param {Failure['kind']} kind
 * @param {string} message
 * @returns {Termination}
 */
function failed(kind, message) {
  return { type: 'failed', failure: { kind, message } };
}

/** @param {unknown} error */
function words(error) {
  return error instanceof Error ? error.message : String(error);
}

export class DeviceConnectionMachine {
  /** Seconds between the first connection's quick retries while the computer is between parks. */
  static offlineRetries = Object.freeze([0.1, 0.25, 0.5, 1]);
  /** The same after an at-once retry: the computer parks again as soon as the relay closed it. */
  static reparkRetries = Object.freeze([0.02, 0.05, 0.1, 0.25, 0.5, 1]);
  /** Seconds a failed race waits before the next, while the path stays quiet. */
  static raceRetryDelay = 2;
  /** Bytes typed while the link is down wait up to this many (later ones are dropped). */
  static maximumPendingInput = 1024 * 1024;

  /** @type {Phase} */
  #phase = { phase: 'idle' };
  /** @type {DeviceAction[]} */
  #actions = [];
  #nextAttempt = 0;
  /** When the last race started. */
  #racedAt = -Infinity;
  /** @type {{id: number, from: number, cause: {type: 'quiet', silentFor: number} | {type: 'resumed', reason: string}} | null} */
  #race = null;

  /** @param {DeviceConnectionSettings} settings */
  constructor(settings) {
    /** @readonly */
    this.settings = Object.freeze({
      attach: settings.attach, screen: settings.screen ?? false, watchAgents: settings.watchAgents ?? false,
      cols: settings.cols, rows: settings.rows, window: settings.window ?? 4 * 1024 * 1024,
      retryDelay: settings.retryDelay ?? defaultRetryDelay, boardWait: settings.boardWait ?? null,
      random: settings.random ?? Math.random,
    });
    /** @type {Attach | null} */
    this.attach = settings.attach;
    this.watching = this.settings.watchAgents;
    this.size = { cols: clamp(settings.cols), rows: clamp(settings.rows) };
    this.session = this.#sessionFor(settings.attach);
    /** The computer's home addresses, as it last said (kept for a device that has a home road). */
    /** @type {HomeAddress[]} */
    this.home = [];
    /** Typed and not sent yet. */
    this.input = new Uint8Array(0);
    this.inputLog = new DeviceInputLog();
    this.endOfInput = false;
    /** A connection got through once. */
    this.connectedOnce = false;
    this.retry = {
      /** Attempts since the session was last up. */
      attempt: 0,
      /** Retry-soon waits in a row (a relay cluster moving the room). */
      reshards: 0,
      /** Quick retries used while the computer was between two parks. */
      quickRetries: 0,
      lastReason: '',
      /** The next attempt after a drop goes at once. */
      atOnce: false,
      /** The attempt under way is a free one: if it fails, the wait goes on until then. */
      freeUntil: /** @type {number | null} */ (null),
    };
    /** @type {Link | null} The connection in use. */
    this.link = null;
  }

  get isFinished() {
    return this.#phase.phase === 'finished';
  }

  /** The phase, for tests and status lines: idle, connecting, waiting, up, awaitingRace, finished. */
  get phase() {
    return this.#phase.phase;
  }

  /** When to `tick` next (seconds, the clock `handle` is given); null when nothing waits on it. */
  get nextWake() {
    let next = Infinity;
    const phase = this.#phase;
    if (phase.phase === 'waiting') next = phase.until;
    if (phase.phase === 'up' && this.link !== null) {
      const link = this.link;
      if (link.flushAt !== null) {
        next = Math.min(next, link.flushAt);
        if (link.liveness.isOwed) next = Math.min(next, link.liveness.nextDeadline());
      } else {
        next = Math.min(next, link.liveness.nextDeadline());
      }
      if (link.boardDeadline !== null) next = Math.min(next, link.boardDeadline);
    }
    return Number.isFinite(next) ? next : null;
  }

  /**
   * Takes one input at `now`; the actions to carry out, in order.
   * @param {DeviceInput} input
   * @param {number} now
   * @returns {DeviceAction[]}
   */
  handle(input, now) {
    this.#actions = [];
    if (this.#phase.phase === 'finished') {
      // Whatever an attempt still brings up after the end is closed at once.
      if (input.type === 'attemptEnded' && input.result.ok) this.#actions.push({ type: 'close', id: input.id });
      return this.#actions;
    }
    switch (input.type) {
      case 'start':
        if (this.#phase.phase === 'idle') this.#connect();
        break;
      case 'keys':
        if (input.bytes.length === 0 || this.input.length + input.bytes.length > DeviceConnectionMachine.maximumPendingInput) break;
        this.input = concatBytes(this.input, input.bytes);
        this.#flush(now);
        break;
      case 'endOfInput':
        this.endOfInput = true;
        this.#flush(now);
        break;
      case 'resize':
        this.size = { cols: clamp(input.cols), rows: clamp(input.rows) };
        if (this.link !== null) this.link.resize = { ...this.size };
        this.#flush(now);
        break;
      case 'shown':
        this.#shown(input.count, now);
        break;
      case 'outputFailed':
        this.#finish(failed('local', "the terminal's output could not be written"));
        break;
      case 'open':
        this.#open(input.attach, now);
        break;
      case 'scrollbackRequest':
        if (this.link === null || this.link.stream !== input.stream || !this.session.isScreen) break;
        this.link.scrollbackRequest = { end: input.end, count: input.count };
        this.#flush(now);
        break;
      case 'watchAgents':
        if (input.watch === this.watching) break;
        this.watching = input.watch;
        if (this.link !== null) {
          if (!input.watch) this.link.boardDeadline = null;
          this.link.watchChange = input.watch;
        }
        this.#flush(now);
        break;
      case 'stop':
        if (this.link !== null && this.link.stream !== null) {
          this.#send(SessionMessage.encode({ type: 'close', stream: this.link.stream }));
        }
        this.#finish(input.termination);
        break;
      case 'attemptEnded':
        this.#attemptEnded(input.id, input.result, now);
        break;
      case 'frame': {
        const link = this.link;
        if (link === null || link.id !== input.id) break;
        link.liveness.heard(now);
        for (const message of input.messages) {
          this.#receive(message, now);
          if (this.link?.id !== input.id) break;
        }
        break;
      }
      case 'ended':
        if (this.link !== null && this.link.id === input.id) this.#dropped(input.failure, now);
        break;
      case 'resumed':
        this.#resumed(input.reason, now);
        break;
      case 'tick':
        this.#tick(now);
        break;
    }
    return this.#actions;
  }

  // ## Events and the end

  /** @param {DeviceEvent} event */
  #emit(event) {
    this.#actions.push({ type: 'emit', event });
  }

  /** @param {Uint8Array} bytes */
  #send(bytes) {
    this.#actions.push({ type: 'send', bytes });
  }

  /**
   * The last action: the connection in use is closed, and whatever comes after is ignored.
   * @param {Termination} termination
   */
  #finish(termination) {
    if (this.link !== null) this.#actions.push({ type: 'close', id: this.link.id });
    if (this.#race !== null) this.#actions.push({ type: 'cancel', id: this.#race.id });
    if (this.#phase.phase === 'connecting') this.#actions.push({ type: 'cancel', id: this.#phase.id });
    this.link = null;
    this.#race = null;
    this.#phase = { phase: 'finished' };
    this.#actions.push({ type: 'finish', termination });
  }

  /**
   * Whether the session ran once, or, for a connection that attaches nothing, a connection got
   * through once: failures after that are drops to retry, not a computer never reached.
   */
  get #wasUp() {
    return this.session.hasStarted || (this.attach === null && this.connectedOnce);
  }

  /**
   * @param {Attach | null} attach
   * @returns {DeviceSession}
   */
  #sessionFor(attach) {
    return new DeviceSession(attach ?? { type: 'session', name: null }, { window: this.settings.window, screen: this.settings.screen });
  }

  // ## The person's side

  /**
   * @param {Attach} attach
   * @param {number} now
   */
  #open(attach, now) {
    if (this.attach !== null) return;
    this.attach = attach;
    this.session = this.#sessionFor(attach);
    if (this.link !== null) this.link.boardDeadline = null;
    this.#sendAttach(now);
  }

  /**
   * `count` bytes reached the screen: the window follows what the path delivered, and a credit
   * goes when one is due.
   * @param {number} count
   * @param {number} now
   */
  #shown(count, now) {
    const link = this.link;
    const window = link?.window?.received(count, now) ?? null;
    if (link !== null && window !== null) {
      this.session.setWindow(window);
      link.windowChange = window;
    }
    const credit = this.session.consumed(count);
    if (link === null) return;
    if (credit !== null) link.credit = credit;
    if (credit !== null || link.windowChange !== null) this.#flush(now);
  }

  /** @param {number} now */
  #tick(now) {
    const phase = this.#phase;
    if (phase.phase === 'waiting' && now >= phase.until) this.#connect();
    if (this.#phase.phase === 'up' && this.link !== null) {
      this.#flush(now); // an idle ping, or what the budget held back
      const deadline = this.link?.boardDeadline ?? null;
      const wait = this.settings.boardWait;
      if (deadline !== null && now >= deadline && wait !== null) return this.#finish({ type: 'failed', failure: wait.failure });
      const silent = this.link?.liveness.suspicion(now) ?? null;
      if (silent !== null) this.#startRace({ type: 'quiet', silentFor: silent }, now);
    }
  }

  /**
   * The page came back from the background (or the browser went online): the socket may have
   * died while it was frozen, and nothing says so. Reconnect at once: a race beside the
   * connection in use (it takes the relay's slot, so the old one is displaced), a fresh attempt
   * for one under way, the wait between attempts cut short by a free attempt.
   * @param {string} reason
   * @param {number} now
   */
  #resumed(reason, now) {
    const phase = this.#phase;
    switch (phase.phase) {
      case 'waiting':
        this.retry.freeUntil = phase.until;
        this.#connect();
        return;
      case 'connecting':
        this.#actions.push({ type: 'cancel', id: phase.id });
        this.#connect();
        return;
      case 'up':
        this.#startRace({ type: 'resumed', reason }, now);
        return;
      default:
        return;
    }
  }

  // ## Sending

  /** @param {number} now */
  #sendAttach(now) {
    const link = this.link;
    if (link === null || link.attachSent || this.attach === null) return;
    const message = this.session.attachMessage(this.size.cols, this.size.rows);
    link.attachSent = true;
    link.budget.take(now);
    this.#send(SessionMessage.encode(message));
  }

  /**
   * Sends what waits, as far as the budget allows; the rest when `flushAt` comes. A ping follows
   * the session messages when one is due.
   * @param {number} now
   */
  #flush(now) {
    const link = this.link;
    if (link === null) return;
    const stream = link.stream;
    while (link.budget.wait(now) === 0) {
      let bytes;
      if (link.pong !== null) {
        bytes = CompanionMessage.encode({ type: 'pong', number: link.pong });
        link.pong = null;
      } else if (link.watchChange !== null) {
        bytes = CompanionMessage.encode({ type: 'agents', watch: link.watchChange });
        link.watchChange = null;
      } else if (stream !== null && link.screenAck !== null) {
        // An answer itself: no ping follows it, as one follows keystrokes.
        bytes = SessionMessage.encode({ type: 'screenAck', stream, state: link.screenAck });
        link.screenAck = null;
      } else if (stream !== null && link.windowChange !== null) {
        bytes = CompanionMessage.encode({ type: 'window', stream, bytes: link.windowChange });
        link.windowChange = null;
      } else if (stream !== null && this.input.length > 0) {
        const count = Math.min(this.input.length, SessionMessage.maximumData - 8);
        const data = this.input.slice(0, count);
        bytes = SessionMessage.encode({ type: 'input', stream, data });
        this.input = this.input.slice(count);
        this.inputLog.record(data);
        link.liveness.sentSessionMessage();
      } else if (stream !== null && this.endOfInput) {
        bytes = SessionMessage.encode({ type: 'endOfInput', stream });
        this.endOfInput = false;
        link.liveness.sentSessionMessage();
      } else if (stream !== null && link.resize !== null) {
        bytes = SessionMessage.encode({ type: 'resize', stream, cols: link.resize.cols, rows: link.resize.rows });
        link.resize = null;
        link.liveness.sentSessionMessage();
      } else if (stream !== null && link.scrollbackRequest !== null) {
        bytes = SessionMessage.encode({ type: 'scrollbackRequest', stream, ...link.scrollbackRequest });
        link.scrollbackRequest = null;
        link.liveness.sentSessionMessage(); // its answer is due: a quiet path shows sooner
      } else if (stream !== null && link.credit !== null) {
        bytes = SessionMessage.encode({ type: 'credit', stream, consumed: link.credit });
        link.credit = null;
        link.liveness.sentSessionMessage();
      } else {
        const id = link.liveness.pingIfDue(now);
        if (id === null) {
          link.flushAt = null;
          return;
        }
        bytes = CompanionMessage.encode({ type: 'ping', number: id });
      }
      link.budget.take(now);
      this.#send(bytes);
    }
    link.flushAt = this.#hasWaiting(link, now) ? now + link.budget.wait(now) : null;
  }

  /**
   * Whether something waits for the budget on `link`: a message, or a ping due.
   * @param {Link} link
   * @param {number} now
   */
  #hasWaiting(link, now) {
    if (link.pong !== null || link.watchChange !== null) return true;
    if (!link.liveness.isOwed && link.liveness.nextDeadline() <= now) return true;
    if (link.stream === null) return false;
    return link.windowChange !== null || this.input.length > 0 || this.endOfInput || link.resize !== null ||
      link.credit !== null || link.screenAck !== null || link.scrollbackRequest !== null;
  }

  // ## Receiving

  /**
   * One message from the computer on the connection in use.
   * @param {Uint8Array} bytes
   * @param {number} now
   */
  #receive(bytes, now) {
    // A computer that breaks the channel's rule would break it again after a reconnect: the
    // session ends, saying what came.
    let message;
    try {
      message = ChannelMessage.parse(bytes);
    } catch (error) {
      return this.#finish(failed('protocolViolation', `the computer sent ${words(error)}`));
    }
    const link = /** @type {Link} */ (this.link);
    switch (message.type) {
      case 'control': {
        const control = message.message;
        switch (control.type) {
          case 'home':
            this.home = control.addresses;
            this.#emit({ type: 'homeAddresses', addresses: control.addresses });
            return;
          case 'ping':
            link.pong = control.number;
            this.#flush(now);
            return;
          case 'pong': {
            const sample = link.liveness.pong(control.number, now);
            if (sample !== null) link.window?.roundTrip(sample);
            return;
          }
          case 'inputReceived': {
            // Before the resume's `started`: what the old connection did not deliver goes first,
            // ahead of anything typed since.
            if (control.stream !== this.session.stream) return;
            const resend = this.inputLog.rewind(control.bytes);
            if (resend !== null) this.input = concatBytes(resend, this.input);
            return;
          }
          default:
            return;
        }
      }
      case 'agents': {
        let board;
        try {
          board = link.board.receive(message.message);
        } catch (error) {
          return this.#finish(failed('protocolViolation', `the computer broke the agents board: ${words(error)}`));
        }
        if (board === null) return;
        link.boardDeadline = null;
        this.#emit({ type: 'agents', board });
        return;
      }
      case 'session':
        return this.#sessionMessage(message.message, now);
    }
  }

  /**
   * @param {import('./session-message.js').SessionMessage} message
   * @param {number} now
   */
  #sessionMessage(message, now) {
    const outcome = this.session.receive(message);
    const link = /** @type {Link} */ (this.link);
    switch (outcome.type) {
      case 'none':
        return;
      case 'started': {
        // A session opened afresh counts its input from 0, like the computer does.
        if (outcome.kind === 'afresh') this.inputLog.reset();
        link.stream = this.session.stream;
        if (this.session.isScreen) {
          // A screen session's start says how much input arrived: the rest goes again, first.
          if (outcome.kind !== 'afresh') {
            const resend = this.inputLog.rewind(this.session.inputReceivedAtStart);
            if (resend !== null) this.input = concatBytes(resend, this.input);
          }
        } else {
          // The computer keeps to at most the window `started` names; the path's share of it
          // starts small and grows as the path shows it carries more.
          const window = new PathWindow(this.session.flow.window);
          this.session.setWindow(window.current);
          if (link.liveness.smoothedRTT !== null) window.roundTrip(link.liveness.smoothedRTT);
          if (window.current < window.ceiling) link.windowChange = window.current;
          link.window = window;
        }
        this.#flush(now);
        if (outcome.kind === 'first') this.#emit({ type: 'started' });
        if (outcome.kind === 'resumed') this.#emit({ type: 'resumed' });
        return;
      }
      case 'output':
        this.#actions.push({ type: 'write', bytes: outcome.data });
        return;
      case 'screen':
        this.#actions.push({ type: 'draw', frame: outcome.frame });
        link.screenAck = outcome.frame.state;
        this.#flush(now);
        return;
      case 'scrollback':
        this.#actions.push({ type: 'scrollback', scrollback: outcome.scrollback });
        return;
      case 'exited':
        // The computer keeps an ended session until told: its exit may have been lost.
        this.#send(SessionMessage.encode({ type: 'close', stream: this.session.stream }));
        link.stream = null;
        return this.#finish({ type: 'exited', status: outcome.status, signal: outcome.signal });
      case 'attachAfresh': {
        this.#emit({ type: 'attachedAfresh', reason: outcome.text });
        const attach = this.session.attachMessage(this.size.cols, this.size.rows);
        link.stream = null;
        link.credit = null;
        link.scrollbackRequest = null; // the old session's line numbers
        link.budget.take(now);
        this.#send(SessionMessage.encode(attach));
        return;
      }
      case 'refused': {
        const kind = outcome.reason === 'unknownAgent' ? 'agentNotFound' : 'sessionRefused';
        return this.#finish(failed(kind, `the computer refused the session: ${outcome.text}`));
      }
      case 'broken':
        return this.#finish(failed('protocolViolation', `the computer broke the session protocol: ${outcome.why}`));
    }
  }

  // ## Attempts

  #newAttemptID() {
    this.#nextAttempt += 1;
    return this.#nextAttempt;
  }

  /** Starts the attempt that connects. */
  #connect() {
    const id = this.#newAttemptID();
    this.#phase = { phase: 'connecting', id };
    this.#actions.push({ type: 'connect', id });
  }

  /**
   * @param {number} id
   * @param {{ok: true, arrival: Arrival} | {ok: false, failure: RoadFailureValue}} result
   * @param {number} now
   */
  #attemptEnded(id, result, now) {
    const phase = this.#phase;
    if (phase.phase === 'connecting' && phase.id === id) {
      if (result.ok) this.#adopt(id, result.arrival, null, now);
      else this.#connectFailed(result.failure, now);
    } else if (this.#race !== null && this.#race.id === id) {
      this.#raceEnded(this.#race, result, now);
    } else if (result.ok) {
      this.#actions.push({ type: 'close', id }); // an attempt overtaken by another
    }
  }

  /**
   * The connection `id` is the one in use from now on: the session attaches or resumes on it.
   * @param {number} id
   * @param {Arrival} arrival
   * @param {MoveReason | null} reason
   * @param {number} now
   */
  #adopt(id, arrival, reason, now) {
    if (this.session.isScreen && !arrival.servesScreenSessions) {
      // An older herdr-host would end the channel on the first screen message.
      this.#actions.push({ type: 'close', id });
      return this.#finish(failed('sessionRefused',
        "the computer's herdr-host serves no screen sessions: update herdr-host on the computer"));
    }
    this.#actions.push({ type: 'adopt', id });
    if (reason !== null) this.#emit({ type: 'moved', relay: arrival.relay, because: reason });
    this.retry.reshards = 0;
    this.retry.atOnce = false;
    this.retry.quickRetries = 0;
    this.retry.freeUntil = null;
    if (arrival.registeredNow) this.#emit({ type: 'registered' });
    this.#emit({ type: 'connected', relay: arrival.relay });
    this.connectedOnce = true;
    this.#phase = { phase: 'up' };
    const link = new Link(id, arrival.relay, now);
    const wait = this.settings.boardWait;
    if (this.watching && this.attach === null && wait !== null) link.boardDeadline = now + wait.seconds;
    // The board is asked for on each connection: none starts watching.
    link.watchChange = this.watching ? true : null;
    this.link = link;
    this.#sendAttach(now);
    this.#flush(now);
  }

  /**
   * @param {RoadFailureValue} failure
   * @param {number} now
   */
  #connectFailed(failure, now) {
    const until = this.retry.freeUntil;
    if (until !== null) {
      this.retry.freeUntil = null;
      // Only what no retry can mend ends it; anything else waits on as before.
      const end = this.#stop(failure, 1);
      if (end !== null) return this.#finish(end);
      this.retry.lastReason = RoadFailure.describe(failure);
      if (until <= now) return this.#connect();
      this.#phase = { phase: 'waiting', until };
      return;
    }
    if (failure.kind === 'resharding' && this.#waitSoon(RoadFailure.describe(failure), now)) return;
    const end = this.#stop(failure, this.retry.attempt);
    if (end !== null) return this.#finish(end);
    this.retry.lastReason = RoadFailure.describe(failure);
    if (failure.kind === 'computerOffline' && !this.#wasUp) {
      this.#wait(DeviceConnectionMachine.offlineRetries[this.retry.attempt], now);
      this.retry.attempt += 1;
      return;
    }
    // An at-once retry can find the computer between two parks: the relay closed it when this
    // device's old socket went, and it is parking again.
    if (failure.kind === 'computerOffline' && this.retry.atOnce &&
      this.retry.quickRetries < DeviceConnectionMachine.reparkRetries.length) {
      this.#wait(DeviceConnectionMachine.reparkRetries[this.retry.quickRetries], now);
      this.retry.quickRetries += 1;
      return;
    }
    this.retry.atOnce = false;
    this.retry.attempt += 1;
    this.#backOff(this.retry.lastReason, false, now);
  }

  /**
   * The connection in use ended (`failure`: what its end means for retrying).
   * @param {RoadFailureValue} failure
   * @param {number} now
   */
  #dropped(failure, now) {
    const link = this.link;
    if (link === null) return;
    this.link = null;
    const dropped = { road: link.relay, connectedAt: link.connectedAt, closedBecause: link.closedBecause };
    // A race's new connection takes the old one's place at the relay, which closes the old one
    // (`displaced`): the race decides what comes next.
    if (this.#race !== null && this.#race.from === link.id) {
      this.#phase = { phase: 'awaitingRace', failure, dropped };
      return;
    }
    this.#retryAfterDrop(failure, dropped, now);
  }

  /**
   * @param {RoadFailureValue} failure
   * @param {Dropped} dropped
   * @param {number} now
   */
  #retryAfterDrop(failure, dropped, now) {
    if (dropped.closedBecause !== null) failure = { kind: 'unavailable', why: dropped.closedBecause };
    if (failure.kind === 'displaced' && now - this.#racedAt < 60) {
      failure = { kind: 'unavailable', why: "a new connection of this device took the old one's place at the relay" };
    }
    if (failure.kind === 'resharding' && this.#waitSoon(RoadFailure.describe(failure), now)) return;
    const end = this.#stop(failure, 1);
    if (end !== null) return this.#finish(end);
    this.retry.lastReason = RoadFailure.describe(failure);
    if (this.#wasUp) this.retry.attempt = 0;
    this.retry.attempt += 1;
    this.retry.atOnce = RetryAfterDrop.atOnce(now - dropped.connectedAt);
    this.#backOff(this.retry.lastReason, this.retry.atOnce, now);
  }

  /**
   * The end a failure means, or null to retry.
   * @param {RoadFailureValue} failure
   * @param {number} attempt
   * @returns {Termination | null}
   */
  #stop(failure, attempt) {
    const text = RoadFailure.describe(failure);
    switch (failure.kind) {
      case 'pairingGone': return failed('pairingGone', text);
      case 'quotaExceeded':
      case 'displaced':
      case 'refused': return failed('relayRefused', text);
      case 'unavailable':
      case 'resharding':
        // Nothing ran yet and this was the first try: say so at once.
        return attempt === 0 && !this.#wasUp ? failed('unreachable', text) : null;
      case 'computerOffline':
        // herdr-host parks again right after each device leaves: the first try gets a few quick retries.
        return !this.#wasUp && attempt >= DeviceConnectionMachine.offlineRetries.length ? failed('unreachable', text) : null;
    }
  }

  /**
   * A relay cluster moving the room: wait a fraction of a second (not a backoff step), up to
   * RelayLink's number of reshards in a row; false once they are used up.
   * @param {string} reason
   * @param {number} now
   */
  #waitSoon(reason, now) {
    if (this.retry.reshards >= RelayLink.soonRetries) return false;
    this.retry.reshards += 1;
    if (this.#wasUp) this.#emit({ type: 'reconnecting', attempt: this.retry.reshards, reason });
    this.#wait(RelayBackoff.soonDelay(this.settings.random()), now);
    return true;
  }

  /**
   * Reconnect attempt `retry.attempt` after the policy's delay (at once when `atOnce`), or the
   * end when the policy gives up.
   * @param {string} reason
   * @param {boolean} atOnce
   * @param {number} now
   */
  #backOff(reason, atOnce, now) {
    const attempt = this.retry.attempt;
    const delay = this.settings.retryDelay(attempt);
    if (delay === null) {
      const message = attempt <= 1
        ? `the link dropped (${this.retry.lastReason}); reconnecting is off`
        : `gave up reconnecting after ${attempt - 1} attempts; last: ${this.retry.lastReason}`;
      return this.#finish(failed('connectionLost', message));
    }
    this.#emit({ type: 'reconnecting', attempt, reason });
    if (atOnce) this.#connect();
    else this.#wait(delay, now);
  }

  /**
   * @param {number} seconds
   * @param {number} now
   */
  #wait(seconds, now) {
    this.#phase = { phase: 'waiting', until: now + seconds };
  }

  // ## Racing

  /**
   * The connection in use went quiet, or the page came back: a fresh connection while the old one
   * carries on until the new one takes the session over.
   * @param {{type: 'quiet', silentFor: number} | {type: 'resumed', reason: string}} cause
   * @param {number} now
   */
  #startRace(cause, now) {
    // A race is a reconnect: not with reconnecting off.
    if (this.settings.retryDelay(1) === null || this.link === null || this.#race !== null) return;
    const id = this.#newAttemptID();
    this.#race = { id, from: this.link.id, cause };
    this.#racedAt = now;
    this.#actions.push({ type: 'connect', id });
  }

  /**
   * @param {{id: number, from: number, cause: {type: 'quiet', silentFor: number} | {type: 'resumed', reason: string}}} race
   * @param {{ok: true, arrival: Arrival} | {ok: false, failure: RoadFailureValue}} result
   * @param {number} now
   */
  #raceEnded(race, result, now) {
    this.#race = null;
    const phase = this.#phase;
    if (result.ok) {
      /** @type {MoveReason} */
      const reason = race.cause.type === 'quiet'
        ? { type: 'pathWentQuiet', seconds: race.cause.silentFor + now - this.#racedAt }
        : { type: 'resumed', reason: race.cause.reason };
      if (this.link !== null && this.link.id === race.from) {
        // At once, without the closing handshake: the old path is quiet or gone.
        this.#actions.push({ type: 'abandon', id: this.link.id });
        this.link = null;
        this.#adopt(race.id, result.arrival, reason, now);
      } else if (phase.phase === 'awaitingRace') {
        this.#adopt(race.id, result.arrival, reason, now);
      } else {
        this.#actions.push({ type: 'close', id: race.id });
      }
      return;
    }
    if (phase.phase === 'awaitingRace') {
      this.#retryAfterDrop(phase.failure, phase.dropped, now);
    } else if (this.link !== null && this.link.id === race.from) {
      this.link.liveness.suspectAgain(now + DeviceConnectionMachine.raceRetryDelay);
    }
  }
}
