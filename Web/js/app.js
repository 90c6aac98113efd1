// The page: pairing by the camera (a code in the address's fragment), the board of every paired
// computer's agents, and an agent's pane as a screen session. It wires the device's pieces
// (DevicePairingRunner, DeviceConnection, the key store) to the views (BoardView, TerminalView);
// every protocol decision is theirs. The twin of herdr-remote's commands, for a phone.

import { CompanionCode } from './companion-code.js';
import { DevicePairingRunner } from './device-pairing-runner.js';
import { DeviceConnection } from './device-connection.js';
import { IndexedDBKeyStore } from './key-store.js';
import { openRelaySocket, fetchRelayHTTP, browserClock } from './relay-socket.js';
import { RelayEndpoint } from './relay-endpoint.js';
import { HomeAddress } from './home-address.js';
import { BoardView } from './board-view.js';
import { TerminalView } from './terminal-view.js';
import { EchoPredictor } from './echo-predictor.js';
import { TerminalScreen } from './terminal-screen.js';
import { ScrollbackHistory } from './scrollback-history.js';
import { unpair } from './companion-removal.js';

/** @typedef {import('./key-store.js').PairingRecord} PairingRecord */
/** @typedef {import('./key-store.js').KeyStore} KeyStore */
/** @typedef {import('./agent-board.js').AgentBoard} AgentBoard */
/** @typedef {import('./herdr-agent.js').HerdrAgent} HerdrAgent */
/** @typedef {import('./board-view.js').BoardComputer} BoardComputer */
/** @typedef {import('./x25519.js').KeyPair} KeyPair */
/** @typedef {import('./relay-road.js').RelayPairing} RelayPairing */
/** @typedef {import('./device-connection-machine.js').DeviceEvent} DeviceEvent */
/** @typedef {import('./device-connection-machine.js').Termination} Termination */

/** @param {string} id */
function element(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found;
}

const views = { pairing: element('pairing'), board: element('board'), terminal: element('terminal') };
const title = element('title');
const road = element('road');
const back = element('back');
const failure = element('error');

/**
 * Predictive echo's mode, as `connect --predict` takes it: `adaptive` unless the page's storage
 * says otherwise (`localStorage['herdr.predict']`: `always`, `never` or `adaptive`).
 * @returns {import('./echo-predictor.js').EchoPredictionMode}
 */
function predictionMode() {
  const stored = localStorage.getItem('herdr.predict');
  return stored === 'always' || stored === 'never' ? stored : 'adaptive';
}

/** @param {'pairing' | 'board' | 'terminal'} name */
function show(name) {
  for (const [key, view] of Object.entries(views)) view.hidden = key !== name;
  back.hidden = name !== 'terminal';
}

/** @param {string | null} text */
function sayError(text) {
  failure.textContent = text ?? '';
  failure.hidden = text === null;
}

/** The name this browser pairs under: what kind of device it is, in 1–64 printable characters. */
function deviceName() {
  const agent = navigator.userAgent;
  const kind = /iPhone/.test(agent) ? 'iPhone' : /iPad/.test(agent) ? 'iPad' : /Android/.test(agent) ? 'Android phone' : 'computer';
  return `browser on ${kind}`;
}

/**
 * What a connection needs of a kept pairing.
 * @param {PairingRecord} record
 * @returns {RelayPairing}
 */
function relayPairing(record) {
  return {
    relay: RelayEndpoint.parse(record.relay), room: record.id, computerKey: record.computerKey, pairingID: record.pairingID,
    roomSecret: record.roomSecret, registered: record.registered,
  };
}

/** @param {Termination} termination */
function ended(termination) {
  switch (termination.type) {
    case 'exited': return termination.status === 0 ? 'The session ended.' : `The session ended (${termination.signal ?? `status ${termination.status}`}).`;
    case 'cancelled': return 'Closed.';
    case 'failed': return termination.failure.message;
  }
}

class App {
  /** @type {KeyStore} */
  store = new IndexedDBKeyStore();
  /** @type {Map<string, {record: PairingRecord, connection: DeviceConnection, state: string, board: AgentBoard | null}>} */
  computers = new Map();
  board = new BoardView(views.board, {
    onOpen: (computer, agent) => this.openSession(computer, { type: 'agent', key: agent.key }, agent.name ?? agent.key.pane),
    onOpenTerminal: (computer) => this.openSession(computer, { type: 'session', name: this.computers.get(computer)?.record.session ?? null }, 'terminal'),
    onUnpair: (computer) => this.unpair(computer),
  });
  /** @type {{computer: string, connection: DeviceConnection, terminal: TerminalView, predictor: EchoPredictor, lastScreen: number} | null} */
  session = null;
  sticky = { ctrl: false, alt: false };
  /** @type {Set<string>} computers whose Unpair was pressed once */
  confirming = new Set();
  /** @type {KeyPair | null} the device's static key, once read */
  key = null;

  async start() {
    if (!globalThis.isSecureContext || !crypto.subtle) {
      sayError('This page needs a secure connection (https://) for its cryptography.');
      return;
    }
    /** @type {KeyPair} */
    let key;
    try {
      key = await this.store.deviceKey();
    } catch (error) {
      sayError(`This browser cannot keep this device's keys (X25519 in WebCrypto and IndexedDB are needed): ${error instanceof Error ? error.message : error}`);
      return;
    }
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.resumed('the page came back');
    });
    window.addEventListener('online', () => this.resumed('the network came back'));
    back.addEventListener('click', () => this.closeSession());
    this.wireKeys();
    setInterval(() => this.showFreshness(), 1000);
    // A code opened in a tab that already shows the page only changes its fragment.
    window.addEventListener('hashchange', () => void this.takeCode(key));
    await this.takeCode(key);
  }

  /**
   * Pairs with the code in the address's fragment, if there is one, then shows the board.
   * @param {KeyPair} key
   */
  async takeCode(key) {
    if (location.hash.length > 1) {
      const code = location.href;
      // The code is a secret until paired: off the address bar and out of the history at once.
      history.replaceState(null, '', location.pathname + location.search);
      this.closeSession();
      sayError(null);
      await this.pair(code, key);
    }
    await this.showBoard(key);
  }

  /**
   * Pairs with the code of a camera-opened address, showing the 6-digit code to type on the computer.
   * @param {string} text
   * @param {KeyPair} key
   */
  async pair(text, key) {
    show('pairing');
    const state = element('pairing-state');
    const shown = element('pairing-code');
    /** @type {import('./companion-code.js').CompanionCode} */
    let code;
    try {
      code = CompanionCode.parse(text, Date.now() / 1000);
    } catch (error) {
      sayError(`This pairing code cannot be used: ${error instanceof Error ? error.message : error}`);
      return;
    }
    if (code.relay === null) {
      sayError('This code pairs on the home network only; a browser reaches a computer through a relay. Run herdr-host pair --web on the computer.');
      return;
    }
    if (code.relay.origin !== location.origin) {
      sayError(`This code names the relay ${code.relay.origin}, but this page came from ${location.origin}: open the code at its relay's address.`);
      return;
    }
    element('pairing-title').textContent = `Pairing with ${code.computerName}`;
    state.textContent = `Connecting to ${code.relay.host}…`;
    const name = deviceName();
    const runner = new DevicePairingRunner({
      code, deviceName: name, staticKey: key, openSocket: openRelaySocket, http: fetchRelayHTTP(code.relay.origin),
      clock: browserClock,
      console: {
        showCode: (digits, words) => {
          // Read in two halves, as herdr-remote shows it: 123 456.
          shown.textContent = digits.length === 6 ? `${digits.slice(0, 3)} ${digits.slice(3)}` : digits;
          state.textContent = words;
        },
        blankCode: (reason) => {
          shown.textContent = '';
          state.textContent = reason;
        },
        say: (words) => { state.textContent = words; },
      },
      keep: (roomSecret, registered, home) => this.store.savePairing({
        id: code.room, name: code.computerName, relay: code.relay?.origin ?? location.origin, computerKey: code.staticPublicKey,
        pairingID: code.pidText, roomSecret, joinKey: null, registered, deviceName: name, session: code.session,
        home: home.map(HomeAddress.text), pairedAt: Math.floor(Date.now() / 1000), relayLastWorked: null,
      }),
      forget: () => this.store.removePairing(code.room),
    });
    const result = await runner.run();
    shown.textContent = '';
    switch (result.type) {
      case 'paired':
        state.textContent = `Paired with ${code.computerName}.`;
        return;
      case 'rejected': sayError(`${code.computerName} refused the pairing (a wrong code, or it was cancelled there).`); return;
      case 'timedOut': sayError('The pairing took too long; run herdr-host pair --web again and scan the new code.'); return;
      case 'cancelled': sayError('The pairing was cancelled.'); return;
      case 'roomTaken': sayError('Another device took this pairing first; run herdr-host pair --web again.'); return;
      case 'keepFailed': sayError(`This browser could not keep the pairing: ${result.reason}`); return;
    }
  }

  /** @param {KeyPair} key */
  async showBoard(key) {
    this.key = key;
    const records = await this.store.pairings();
    for (const record of records) {
      if (this.computers.has(record.id)) continue;
      const connection = this.boardConnection(record, key);
      this.computers.set(record.id, { record, connection, state: 'connecting', board: null });
      connection.start();
    }
    if (!this.session) {
      show('board');
      title.textContent = 'herdr';
    }
    this.renderBoard();
  }

  /**
   * The board's connection to one computer, to start once it is the computer's. A relay room
   * holds one connection of a device (the newest displaces the one before), so a computer whose
   * terminal is open has none: its session's connection watches the agents instead
   * (`openSession`). Events of a connection that is no longer the computer's are dropped.
   * @param {PairingRecord} record
   * @param {KeyPair} key
   */
  boardConnection(record, key) {
    const connection = new DeviceConnection({
      // The board never gives up on a computer: it says since when it is unreachable, and tries
      // again at most every 30 s (and at once when the page comes back).
      settings: { attach: null, watchAgents: true, cols: 80, rows: 24, retryDelay: (attempt) => Math.min(30, 2 ** (attempt - 1)) },
      pairing: relayPairing(record), deviceName: record.deviceName, staticKey: key, openSocket: openRelaySocket,
      http: fetchRelayHTTP(record.relay), clock: browserClock,
      onEvent: (event) => {
        if (this.computers.get(record.id)?.connection === connection) this.boardEvent(record.id, event);
      },
    });
    return connection;
  }

  /**
   * @param {string} id
   * @param {DeviceEvent | {type: 'finished', termination: Termination}} event
   */
  boardEvent(id, event) {
    const computer = this.computers.get(id);
    if (!computer) return;
    const host = RelayEndpoint.parse(computer.record.relay).host;
    switch (event.type) {
      case 'connected': computer.state = `connected through ${host}`; break;
      case 'moved': computer.state = `connected through ${host}`; break;
      case 'reconnecting': computer.state = `unreachable since ${new Date().toLocaleTimeString()}: ${event.reason}; trying again`; break;
      case 'agents': computer.board = event.board; break;
      case 'registered': void this.store.updatePairing(id, { registered: true }); break;
      case 'finished':
        computer.state = event.termination.type === 'failed' ? event.termination.failure.message : 'stopped';
        if (event.termination.type === 'failed' && event.termination.failure.kind === 'pairingGone') {
          computer.state = 'the pairing is gone on the computer: unpair it here and pair again';
        }
        break;
      default: return;
    }
    this.renderBoard();
  }

  renderBoard() {
    /** @type {BoardComputer[]} */
    const shown = [...this.computers.values()].map((computer) => ({
      id: computer.record.id, name: computer.record.name,
      state: this.confirming.has(computer.record.id) ? 'tap Unpair again to unpair' : computer.state, board: computer.board,
    }));
    this.board.render(shown);
  }

  /** @param {string} id */
  async unpair(id) {
    const computer = this.computers.get(id);
    if (!computer) return;
    if (!this.confirming.has(id)) {
      this.confirming.add(id);
      this.renderBoard();
      setTimeout(() => {
        this.confirming.delete(id);
        this.renderBoard();
      }, 5000);
      return;
    }
    this.confirming.delete(id);
    computer.connection.cancel();
    this.computers.delete(id);
    const outcome = await unpair(computer.record, fetchRelayHTTP(computer.record.relay), this.store);
    this.renderBoard();
    road.textContent = `Unpaired ${computer.record.name}: ${outcome}.`;
  }

  /**
   * Opens `attach` on computer `id` as a screen session: an agent's pane, or the herdr session.
   * @param {string} id
   * @param {import('./device-session.js').Attach} attach
   * @param {string} what its name for the bar
   */
  openSession(id, attach, what) {
    const computer = this.computers.get(id);
    if (!computer || !this.key) return;
    this.closeSession();
    show('terminal');
    title.textContent = `${what} · ${computer.record.name}`;
    const container = element('term');
    container.replaceChildren();
    const predictor = new EchoPredictor(predictionMode());
    /** @type {import('./terminal-screen.js').TerminalScreen | null} */
    let latest = null;
    const history = new ScrollbackHistory();
    /** When lines that scrolled off were last asked for on a new screen (s). */
    let lookedForNewer = -Infinity;
    /**
     * Asks the computer for scrolled-off lines, if the history wants any now (one at a time).
     * @param {'older' | 'newer'} direction
     */
    const askScrollback = (direction) => {
      const stream = connection.sessionStream;
      if (stream === null) return; // between connections: asked again after the resume
      const request = direction === 'older' ? history.older(stream) : history.newer(stream);
      if (request === null) return;
      connection.requestScrollback(request);
      terminal.drawHistory(history); // the top says it is loading
    };
    const terminal = new TerminalView(container, {
      onInput: (bytes) => {
        predictor.typed(bytes, browserClock.now());
        connection.send(bytes);
        if (latest) terminal.draw(latest, predictor.overlay);
      },
      sticky: () => this.sticky,
      onStickyUsed: () => this.setSticky({ ctrl: false, alt: false }),
      onScrollbackWanted: askScrollback,
    });
    const size = terminal.measure();
    const host = RelayEndpoint.parse(computer.record.relay).host;
    // The session's connection takes the board's place (one connection of a device per room).
    computer.connection.cancel();
    const connection = new DeviceConnection({
      settings: { attach, screen: true, watchAgents: true, cols: size.cols, rows: size.rows },
      pairing: relayPairing(computer.record), deviceName: computer.record.deviceName, staticKey: this.key,
      openSocket: openRelaySocket, http: fetchRelayHTTP(computer.record.relay), clock: browserClock,
      onScreen: (frame) => {
        predictor.received(frame, browserClock.now());
        const screen = frame.screen;
        latest = TerminalScreen.make(screen.lines.map((line) => line.slice()), screen.cursor, screen.modes, screen.title);
        terminal.draw(latest, predictor.overlay);
        const now = browserClock.now();
        if (this.session) this.session.lastScreen = now;
        // Output while the person reads the history may have scrolled lines off: they come in
        // below what is held. Screens do not say so, so look at most once a second.
        if (terminal.scrolledBack && now - lookedForNewer >= 1) {
          lookedForNewer = now;
          askScrollback('newer');
        }
        return true;
      },
      onScrollback: (answer) => {
        const verdict = history.receive(answer);
        if (verdict === 'ignored') return;
        terminal.drawHistory(history);
        if (verdict === 'refused') return; // not what was asked: not asked again until the person scrolls
        if (history.behind) askScrollback('newer');
        else if (terminal.wantsOlder) askScrollback('older');
      },
      onEvent: (event) => {
        switch (event.type) {
          case 'agents': this.boardEvent(id, event); break;
          case 'connected': case 'moved': road.textContent = `through ${host}`; break;
          case 'reconnecting': road.textContent = `reconnecting through ${host}…`; break;
          case 'resumed':
            // A request in flight went with the old connection; the lines held are still the session's.
            history.resumed();
            terminal.drawHistory(history);
            if (terminal.scrolledBack) askScrollback('newer');
            break;
          case 'attachedAfresh':
            // A new session on the computer: its lines are numbered from 0 again.
            history.attachAfresh();
            terminal.drawHistory(history);
            terminal.scrollToLive();
            break;
          case 'finished':
            road.textContent = ended(event.termination);
            if (event.termination.type === 'failed') sayError(event.termination.failure.message);
            break;
          default: break;
        }
      },
    });
    this.session = { computer: id, connection, terminal, predictor, lastScreen: browserClock.now() };
    connection.start();
    terminal.focus();
    window.onresize = () => {
      const next = terminal.measure();
      connection.resize(next.cols, next.rows);
    };
  }

  closeSession() {
    if (!this.session) return;
    this.session.connection.cancel();
    // The board's connection again, once the session's is gone.
    const computer = this.computers.get(this.session.computer);
    if (computer && this.key) {
      computer.connection = this.boardConnection(computer.record, this.key);
      computer.connection.start();
    }
    this.session = null;
    window.onresize = null;
    road.textContent = '';
    sayError(null);
    show('board');
    title.textContent = 'herdr';
  }

  /** @param {string} reason */
  resumed(reason) {
    for (const computer of this.computers.values()) computer.connection.resumed(reason);
    this.session?.connection.resumed(reason);
  }

  showFreshness() {
    if (!this.session) return;
    const age = browserClock.now() - this.session.lastScreen;
    const base = road.textContent?.replace(/ · screen .*$/, '') ?? '';
    road.textContent = age >= 5 ? `${base} · screen ${Math.round(age)} s old` : base;
  }

  /** @param {{ctrl: boolean, alt: boolean}} sticky */
  setSticky(sticky) {
    this.sticky = sticky;
    for (const button of document.querySelectorAll('[data-sticky]')) {
      const which = /** @type {'ctrl' | 'alt'} */ (button.getAttribute('data-sticky'));
      button.setAttribute('aria-pressed', String(sticky[which]));
    }
  }

  wireKeys() {
    for (const button of document.querySelectorAll('.keys button')) {
      // Keep the phone's keyboard up: the key row never takes the focus from the terminal.
      button.addEventListener('pointerdown', (event) => event.preventDefault());
      button.addEventListener('click', () => {
        const sticky = button.getAttribute('data-sticky');
        if (sticky === 'ctrl' || sticky === 'alt') {
          this.setSticky({ ...this.sticky, [sticky]: !this.sticky[sticky] });
          this.session?.terminal.focus();
          return;
        }
        const key = button.getAttribute('data-key');
        if (key) this.session?.terminal.pressKey(key, { ctrl: button.getAttribute('data-ctrl') === 'true' });
      });
    }
  }
}

const app = new App();
void app.start().catch((error) => sayError(`Something went wrong: ${error instanceof Error ? error.message : error}`));
