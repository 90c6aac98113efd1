// An in-memory relay for the I/O shells' tests, speaking relay protocol v1 as herdr-relay does
// (docs/relay.md "Admission and rooms", interop-facts §5): Hello, Challenge, Proof, Result;
// signed joins checked against the room's verifier (Ed25519 through WebCrypto), `mac offline`,
// one slot per role (the newest admitted wins, the holder closed 1000 `displaced`), `peer gone`
// to the other side when one leaves, binary frames spliced, frames before a peer dropped, and
// `/register`. A socket can be made silent (a path that died without a word). Challenges and
// registration tokens can be fixed (the worked example's).

import { RelayAdmission, RelayClose } from '../js/relay-protocol.js';
import { RelayTranscript } from '../js/relay-join.js';
import { RelayJSON } from '../js/relay-json.js';
import { toHex, utf8 } from '../js/bytes.js';

/** @typedef {import('../js/frame-pipe.js').RelaySocket} RelaySocket */
/** @typedef {import('../js/frame-pipe.js').RelaySocketEvent} RelaySocketEvent */
/** @typedef {import('../js/relay-join.js').RelayRole} RelayRole */

/**
 * One socket as the relay holds it.
 * @typedef {object} Peer
 * @property {number} number
 * @property {string} room
 * @property {'hello' | 'proof' | 'checking' | 'admitted' | 'gone'} state
 * @property {RelayRole | null} role
 * @property {Uint8Array | null} nonce
 * @property {boolean} silent its path is dead: nothing reaches it, nothing of it arrives
 * @property {(event: RelaySocketEvent) => void} deliver to the client
 */

/**
 * @typedef {object} RoomState
 * @property {Uint8Array | null} verifier
 * @property {Peer | null} mac
 * @property {Peer | null} phone
 * @property {Set<string>} tokens registration tokens given, as hex
 */

export class FakeRelay {
  #sockets = 0;
  /** @type {Map<string, RoomState>} */
  rooms = new Map();
  /**
   * Every admission's frames, in order, for the tests to read.
   * @type {{role: string, room: string, texts: string[]}[]}
   */
  admissions = [];
  /**
   * Every `/register` body.
   * @type {string[]}
   */
  registrations = [];
  /**
   * Frames spliced, in order: who sent them.
   * @type {{from: RelayRole, bytes: Uint8Array}[]}
   */
  spliced = [];

  /**
   * @param {{origin?: string, nonce?: (role: RelayRole) => Uint8Array, token?: () => Uint8Array}} [options]
   */
  constructor(options = {}) {
    this.origin = options.origin ?? 'https://relay.example.com';
    this.nonce = options.nonce ?? (() => crypto.getRandomValues(new Uint8Array(32)));
    this.token = options.token ?? (() => crypto.getRandomValues(new Uint8Array(24)));
    /** @type {Map<RelaySocket, Peer>} */
    this.peers = new Map();
    /** `openSocket` for the shells: a WebSocket to `…/?room=<room>`. */
    this.openSocket = (/** @type {string} */ url) => this.#open(url);
    /**
     * The HTTP side.
     * @type {import('../js/frame-pipe.js').RelayHTTP}
     */
    this.http = { post: (path, room, body) => Promise.resolve(this.#post(path, room, body)) };
  }

  /** @param {string} room @returns {RoomState} */
  room(room) {
    let state = this.rooms.get(room);
    if (state === undefined) {
      state = { verifier: null, mac: null, phone: null, tokens: new Set() };
      this.rooms.set(room, state);
    }
    return state;
  }

  /**
   * The path of `socket` dies: nothing reaches it any more and nothing it sends arrives, and no
   * one is told (the relay still holds it until something replaces it).
   * @param {RelaySocket} socket
   */
  silence(socket) {
    const peer = this.peers.get(socket);
    if (peer !== undefined) peer.silent = true;
  }

  /**
   * The relay closes `socket` (a limit, a shutdown).
   * @param {RelaySocket} socket
   * @param {import('../js/relay-protocol.js').RelayCloseValue} close
   */
  closeSocket(socket, close) {
    const peer = this.peers.get(socket);
    if (peer !== undefined) this.#close(peer, close);
  }

  /**
   * The admitted socket of `role` in `room`, if any.
   * @param {string} room
   * @param {RelayRole} role
   */
  holder(room, role) {
    const peer = this.rooms.get(room)?.[role] ?? null;
    if (peer === null) return null;
    for (const [socket, known] of this.peers) if (known === peer) return socket;
    return null;
  }

  /** @param {string} url @returns {RelaySocket} */
  #open(url) {
    const room = new URL(url).searchParams.get('room') ?? '';
    /** @type {RelaySocketEvent[]} */
    const queue = [];
    /** @type {((event: RelaySocketEvent) => void) | null} */
    let handler = null;
    let closed = false;
    /** @type {Peer} */
    const peer = {
      number: ++this.#sockets, room, state: 'hello', role: null, nonce: null, silent: false,
      deliver: (event) => {
        if (closed || peer.silent) return;
        if (event.type === 'closed') closed = true;
        queueMicrotask(() => (handler === null ? queue.push(event) : handler(event)));
      },
    };
    let closing = false;
    /** @param {string | Uint8Array} data */
    const send = (data) => {
      if (closed || closing) throw new Error('the relay socket is closed');
      if (peer.silent) return;
      queueMicrotask(() => this.#received(peer, data));
    };
    /** @type {RelaySocket} */
    const socket = {
      sendText: send,
      send,
      close: () => {
        if (closed || closing) return;
        closing = true;
        // After what was sent before it, as a WebSocket's close frame.
        queueMicrotask(() => {
          this.#gone(peer);
          peer.deliver({ type: 'closed', code: 1000, reason: '', opened: true });
        });
      },
      abandon: () => {
        handler = () => {};
        queue.length = 0;
        closed = true;
        this.#gone(peer);
      },
      listen: (next) => {
        handler = next;
        while (queue.length > 0 && handler === next) next(/** @type {RelaySocketEvent} */ (queue.shift()));
      },
    };
    this.peers.set(socket, peer);
    if (!/^[0-9a-f]{64}$/.test(room)) {
      // A refused upgrade (400 bad room): a browser sees only a close that never opened.
      peer.deliver({ type: 'closed', code: 1006, reason: '', opened: false });
      peer.state = 'gone';
    } else {
      peer.deliver({ type: 'open' });
    }
    return socket;
  }

  /**
   * @param {Peer} peer
   * @param {string | Uint8Array} data
   */
  async #received(peer, data) {
    if (peer.state === 'gone') return;
    if (peer.state === 'admitted') return this.#splice(peer, data);
    if (typeof data !== 'string') return this.#close(peer, RelayClose.refused('bad hello'));
    const log = this.admissions.find((entry) => entry.room === peer.room && entry.role === `#${peer.number}`);
    if (peer.state === 'hello') {
      const hello = RelayJSON.object(utf8(data));
      const role = hello?.role;
      if (hello === null || RelayJSON.integer(hello.v) !== 1 || (role !== 'mac' && role !== 'phone')) {
        return this.#close(peer, RelayClose.refused('bad hello'));
      }
      peer.role = role;
      peer.nonce = this.nonce(role);
      peer.state = 'proof';
      this.admissions.push({ role: `#${peer.number}`, room: peer.room, texts: [data] });
      const challenge = `{"nonce":"${RelayJSON.base64(peer.nonce)}"}`;
      this.admissions[this.admissions.length - 1].texts.push(challenge);
      return peer.deliver({ type: 'text', text: challenge });
    }
    if (peer.state !== 'proof' || peer.role === null || peer.nonce === null) return;
    peer.state = 'checking';
    log?.texts.push(data);
    const proof = RelayJSON.object(utf8(data));
    if (proof === null) return this.#refuse(peer, 'bad proof', log);
    const room = this.room(peer.room);
    if (room.verifier !== null) {
      const signature = typeof proof.sig === 'string' ? RelayJSON.bytes(proof.sig) : null;
      if (signature === null) return this.#refuse(peer, 'signature required', log);
      const key = await crypto.subtle.importKey('raw', room.verifier, { name: 'Ed25519' }, false, ['verify']);
      const transcript = RelayTranscript.join(peer.role, peer.nonce, peer.room, this.origin);
      if (!await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, transcript)) return this.#refuse(peer, 'bad signature', log);
    }
    if (peer.role === 'phone' && room.mac === null) return this.#refuse(peer, 'mac offline', log);
    if (peer.state !== 'checking') return;
    const holder = room[peer.role];
    if (holder !== null) {
      room[peer.role] = null;
      this.#close(holder, RelayClose.displaced, false);
    }
    room[peer.role] = peer;
    peer.state = 'admitted';
    let result = '{"ok":true}';
    if (peer.role === 'phone') {
      const token = this.token();
      room.tokens.add(toHex(token));
      result = `{"ok":true,"registrationToken":"${RelayJSON.base64(token)}"}`;
    }
    log?.texts.push(result);
    peer.deliver({ type: 'text', text: result });
  }

  /**
   * @param {Peer} peer
   * @param {string} error
   * @param {{texts: string[]} | undefined} log
   */
  #refuse(peer, error, log) {
    const result = `{"ok":false,"error":${RelayJSON.quoted(error)}}`;
    log?.texts.push(result);
    peer.deliver({ type: 'text', text: result });
    this.#close(peer, RelayClose.refused(error));
  }

  /**
   * @param {Peer} peer
   * @param {string | Uint8Array} data
   */
  #splice(peer, data) {
    const room = this.room(peer.room);
    const other = peer.role === 'mac' ? room.phone : room.mac;
    if (typeof data !== 'string') this.spliced.push({ from: /** @type {RelayRole} */ (peer.role), bytes: data });
    if (other === null) return; // frames before a peer exists are dropped
    other.deliver(typeof data === 'string' ? { type: 'text', text: data } : { type: 'binary', bytes: data.slice() });
  }

  /**
   * The relay closes `peer`; its admitted peer is closed with `peer gone` unless `peerGoes` is false.
   * @param {Peer} peer
   * @param {import('../js/relay-protocol.js').RelayCloseValue} close
   * @param {boolean} [peerGoes]
   */
  #close(peer, close, peerGoes = true) {
    if (peer.state === 'gone') return;
    peer.deliver({ type: 'closed', code: close.code, reason: close.reason, opened: true });
    if (peerGoes) this.#gone(peer);
    else peer.state = 'gone';
  }

  /**
   * A socket went: out of its slot, and its admitted peer closed with `peer gone`.
   * @param {Peer} peer
   */
  #gone(peer) {
    const wasAdmitted = peer.state === 'admitted';
    peer.state = 'gone';
    const room = this.rooms.get(peer.room);
    if (room === undefined || !wasAdmitted || peer.role === null || room[peer.role] !== peer) return;
    room[peer.role] = null;
    const other = peer.role === 'mac' ? room.phone : room.mac;
    if (other !== null) {
      if (peer.role === 'mac') room.phone = null;
      else room.mac = null;
      other.state = 'gone';
      other.deliver({ type: 'closed', code: RelayClose.peerGone.code, reason: RelayClose.peerGone.reason, opened: true });
    }
  }

  /**
   * @param {string} path
   * @param {string} roomName
   * @param {string} body
   * @returns {{status: number, text: string}}
   */
  #post(path, roomName, body) {
    if (path !== '/register') return { status: 501, text: 'not implemented' };
    this.registrations.push(body);
    const object = RelayJSON.object(utf8(body));
    if (object === null) return { status: 400, text: '{"ok":false,"error":"bad json"}' };
    if (!RelayJSON.has(object, 'verifier')) return { status: 400, text: '{"ok":false,"error":"missing verifier"}' };
    const room = this.room(roomName);
    if (room.verifier !== null) return { status: 403, text: '{"ok":false,"error":"already registered"}' };
    const token = RelayJSON.bytes(object.registrationToken);
    if (token === null) return { status: 403, text: '{"ok":false,"error":"token required"}' };
    if (!room.tokens.has(toHex(token))) return { status: 403, text: '{"ok":false,"error":"bad token"}' };
    const verifier = RelayJSON.bytes(object.verifier);
    if (verifier === null || verifier.length !== 32) return { status: 400, text: '{"ok":false,"error":"bad verifier"}' };
    room.tokens.delete(toHex(token));
    room.verifier = verifier;
    return { status: 200, text: '{"ok":true}' };
  }
}

export { RelayAdmission };
