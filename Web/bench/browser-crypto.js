// Throughput of the pure-JavaScript primitives in the browser, against WebCrypto's native ones as
// anchors: ChaCha20-Poly1305 against AES-256-GCM, BLAKE2s-256 against SHA-256, and complete
// Noise_XK_25519_ChaChaPoly_BLAKE2s handshakes against the X25519 derivations one needs.
// browser-crypto.html runs it (a button, or on load with `?run[&seconds=N]`); a driver calls
// `globalThis.runCryptoBench(seconds)` (run-browser-crypto.py). Node's side: throughput.js.
//
// WebCrypto is asynchronous, so its headline rate awaits each call before the next, as a
// channel seals one message after another; a second rate keeps IN_FLIGHT calls going at once.

import { seal, open } from '../js/chacha20poly1305.js';
import { blake2s } from '../js/blake2s.js';
import { HandshakeState } from '../js/noise.js';
import { XK } from '../js/handshake-pattern.js';
import { generateKeyPair, dh } from '../js/x25519.js';

/** 65519 is a transport message's largest plaintext (65535 − the tag); 1024 and 64 are typical. */
const AEAD_SIZES = [65519, 1024, 64];
const HASH_SIZES = [65536, 64];
/** The anchor's key: AES-256, the same key length as ChaCha20's. */
const AES_KEY_BITS = 256;
const AES_NAME = `AES-${AES_KEY_BITS}-GCM`;
/** Calls kept in flight for the anchor's second, concurrent, rate. */
const IN_FLIGHT = 32;
/** The tokens that each compute one DH on each side (Noise section 7.1). */
const DH_TOKENS = new Set(['ee', 'es', 'se', 'ss']);

/**
 * @typedef {object} Row one measure against its anchor
 * @property {string} name what ours is
 * @property {number} ours our rate
 * @property {number} anchor the anchor's rate
 * @property {string} unit of both rates: `MB/s` of input, or `handshakes/s`
 * @property {number} ratio ours / anchor
 * @property {string} anchorName what the anchor is
 */

/**
 * @typedef {object} X25519Rates WebCrypto's X25519, sequential calls a second (null when missing)
 * @property {boolean} available whether this browser's WebCrypto has X25519 here
 * @property {string | null} error why not
 * @property {number | null} deriveBitsPerSecond crypto.subtle.deriveBits alone, the peer's key imported once
 * @property {number | null} dhPerSecond x25519.js's dh: importKey of the peer's key, then deriveBits, as a handshake does
 * @property {number | null} generateKeyPairPerSecond x25519.js's generateKeyPair: generateKey, then exportKey
 * @property {number} dhsPerHandshakePair DH tokens of XK, each computed by both sides
 * @property {number} ephemeralsPerHandshakePair e tokens of XK, one generated key pair each
 */

/**
 * @typedef {object} BenchResult plain JSON
 * @property {string} userAgent
 * @property {boolean} secureContext
 * @property {number} seconds per measure
 * @property {string} aesName the AEAD anchor, with its key length
 * @property {number} inFlight calls at once in the concurrent anchor rows
 * @property {Row[]} rows
 * @property {number | null} handshakesPerSecond complete XK handshakes, both sides in this page
 * @property {X25519Rates} x25519
 * @property {number} elapsedSeconds the whole run
 */

/** @param {Uint8Array} bytes */
function random(bytes) {
  return crypto.getRandomValues(bytes);
}

/** Lets the page draw (and a driver's polling run) between measures. */
function breathe() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Synchronous calls a second of `fn`, run for about `seconds` after a warm-up (the JIT's).
 * @param {number} seconds @param {() => unknown} fn
 */
function callsPerSecond(seconds, fn) {
  for (let i = 0; i < 20; i++) fn();
  const start = performance.now();
  let calls = 0;
  while (performance.now() - start < seconds * 1000) {
    for (let i = 0; i < 8; i++) fn();
    calls += 8;
  }
  return calls / ((performance.now() - start) / 1000);
}

/**
 * Asynchronous calls a second, each awaited before the next starts.
 * @param {number} seconds @param {() => Promise<unknown>} fn
 */
async function awaitedCallsPerSecond(seconds, fn) {
  for (let i = 0; i < 20; i++) await fn();
  const start = performance.now();
  let calls = 0;
  while (performance.now() - start < seconds * 1000) {
    await fn();
    calls++;
  }
  return calls / ((performance.now() - start) / 1000);
}

/**
 * Asynchronous calls a second, `depth` started at once and all awaited, round after round.
 * @param {number} seconds @param {number} depth @param {() => Promise<unknown>} fn
 */
async function concurrentCallsPerSecond(seconds, depth, fn) {
  const round = () => Promise.all(Array.from({ length: depth }, fn));
  await round();
  const start = performance.now();
  let calls = 0;
  while (performance.now() - start < seconds * 1000) {
    await round();
    calls += depth;
  }
  return calls / ((performance.now() - start) / 1000);
}

/**
 * @param {string} name @param {number} ours @param {number} anchor @param {string} unit @param {string} anchorName
 * @returns {Row}
 */
function row(name, ours, anchor, unit, anchorName) {
  return { name, ours, anchor, unit, ratio: ours / anchor, anchorName };
}

/**
 * ChaCha20-Poly1305 seal and open against AES-GCM encrypt and decrypt, at each size.
 * @param {number} seconds @param {(row: Row) => void} add
 */
async function measureAead(seconds, add) {
  const key = random(new Uint8Array(32));
  const nonce = random(new Uint8Array(12));
  const aesKey = await crypto.subtle.importKey('raw', key, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
  // One nonce for every call, as throughput.js: a benchmark's keys protect nothing.
  const gcm = { name: 'AES-GCM', iv: nonce, tagLength: 128 };
  for (const size of AEAD_SIZES) {
    const megabytes = size / 1e6;
    const plaintext = random(new Uint8Array(size));
    const sealed = seal(key, nonce, plaintext);
    const gcmSealed = new Uint8Array(await crypto.subtle.encrypt(gcm, aesKey, plaintext));
    const encrypt = () => crypto.subtle.encrypt(gcm, aesKey, plaintext);
    const decrypt = () => crypto.subtle.decrypt(gcm, aesKey, gcmSealed);

    const sealRate = callsPerSecond(seconds, () => seal(key, nonce, plaintext)) * megabytes;
    await breathe();
    add(row(`ChaCha20-Poly1305 seal, ${size} B`, sealRate,
      await awaitedCallsPerSecond(seconds, encrypt) * megabytes, 'MB/s', `${AES_NAME} encrypt, awaited one by one`));
    const openRate = callsPerSecond(seconds, () => open(key, nonce, sealed)) * megabytes;
    await breathe();
    add(row(`ChaCha20-Poly1305 open, ${size} B`, openRate,
      await awaitedCallsPerSecond(seconds, decrypt) * megabytes, 'MB/s', `${AES_NAME} decrypt, awaited one by one`));
    add(row(`ChaCha20-Poly1305 seal, ${size} B`, sealRate,
      await concurrentCallsPerSecond(seconds, IN_FLIGHT, encrypt) * megabytes, 'MB/s',
      `${AES_NAME} encrypt, ${IN_FLIGHT} in flight`));
  }
}

/**
 * BLAKE2s-256 against WebCrypto's SHA-256, awaited one by one.
 * @param {number} seconds @param {(row: Row) => void} add
 */
async function measureHash(seconds, add) {
  for (const size of HASH_SIZES) {
    const data = random(new Uint8Array(size));
    const ours = callsPerSecond(seconds, () => blake2s(data)) * size / 1e6;
    await breathe();
    const anchor = await awaitedCallsPerSecond(seconds, () => crypto.subtle.digest('SHA-256', data)) * size / 1e6;
    add(row(`BLAKE2s-256, ${size} B`, ours, anchor, 'MB/s', 'SHA-256 digest, awaited one by one'));
  }
}

/**
 * The tokens of `pattern` in `tokens`, over every message: for a DH token each side computes it
 * once (the writer and the reader), for `e` the writer generates one key pair.
 * @param {import('../js/handshake-pattern.js').HandshakePattern} pattern @param {Set<string>} tokens
 */
function countTokens(pattern, tokens) {
  let count = 0;
  for (const message of pattern.messagePatterns) {
    for (const token of message.tokens) if (tokens.has(token)) count++;
  }
  return count;
}

/**
 * WebCrypto's X25519 alone: bare derivations, x25519.js's dh and its key generation.
 * @param {number} seconds
 * @returns {Promise<X25519Rates>}
 */
async function measureX25519(seconds) {
  const rates = {
    available: false, error: /** @type {string | null} */ (null),
    deriveBitsPerSecond: /** @type {number | null} */ (null),
    dhPerSecond: /** @type {number | null} */ (null),
    generateKeyPairPerSecond: /** @type {number | null} */ (null),
    dhsPerHandshakePair: 2 * countTokens(XK, DH_TOKENS),
    ephemeralsPerHandshakePair: countTokens(XK, new Set(['e'])),
  };
  // A browser without X25519 in WebCrypto (or outside a secure context) fails here: said, not thrown.
  const pairs = await Promise.all([generateKeyPair(), generateKeyPair()]).catch((error) => String(error));
  if (typeof pairs === 'string') {
    rates.error = pairs;
    return rates;
  }
  rates.available = true;
  const [ours, theirs] = pairs;
  const privateKey = ours.privateKey;
  const peer = await crypto.subtle.importKey('raw', theirs.publicKey, { name: 'X25519' }, true, []);
  rates.deriveBitsPerSecond = await awaitedCallsPerSecond(seconds,
    () => crypto.subtle.deriveBits({ name: 'X25519', public: peer }, privateKey, 256));
  rates.dhPerSecond = await awaitedCallsPerSecond(seconds, () => dh(privateKey, theirs.publicKey));
  rates.generateKeyPairPerSecond = await awaitedCallsPerSecond(seconds, () => generateKeyPair());
  return rates;
}

/**
 * Complete XK handshakes a second, both sides in this page, as throughput.js runs them.
 * @param {number} seconds
 */
async function handshakesPerSecond(seconds) {
  const initiatorStatic = await generateKeyPair();
  const responderStatic = await generateKeyPair();
  const handshake = async () => {
    const initiator = new HandshakeState({ pattern: XK, initiator: true, s: initiatorStatic, rs: responderStatic.publicKey });
    const responder = new HandshakeState({ pattern: XK, initiator: false, s: responderStatic });
    await responder.readMessage(await initiator.writeMessage());
    await initiator.readMessage(await responder.writeMessage());
    await responder.readMessage(await initiator.writeMessage());
    initiator.transportCipherStates();
    responder.transportCipherStates();
  };
  return awaitedCallsPerSecond(seconds, handshake);
}

let running = false;

/**
 * Every measure, `seconds` each (23 measures in all, as run-browser-crypto.py counts for its timeout).
 * @param {number} seconds
 * @param {(row: Row) => void} [onRow] told of each row as it is measured
 * @returns {Promise<BenchResult>}
 */
export async function runCryptoBench(seconds, onRow = () => {}) {
  if (running) throw new Error('runCryptoBench: a run is already going');
  if (!(seconds > 0 && seconds <= 60)) throw new RangeError('runCryptoBench: seconds per measure are in (0, 60]');
  running = true;
  try {
    const begun = performance.now();
    /** @type {Row[]} */
    const rows = [];
    /** @param {Row} measured */
    const add = (measured) => {
      rows.push(measured);
      onRow(measured);
    };
    await measureAead(seconds, add);
    await measureHash(seconds, add);
    const x25519 = await measureX25519(seconds);
    let handshakes = null;
    if (x25519.available && x25519.deriveBitsPerSecond !== null) {
      handshakes = await handshakesPerSecond(seconds);
      // The ratio is the share of a handshake's time that its bare derivations take.
      add(row('Noise_XK_25519_ChaChaPoly_BLAKE2s handshakes, both sides', handshakes,
        x25519.deriveBitsPerSecond / x25519.dhsPerHandshakePair, 'handshakes/s',
        `X25519 deriveBits/s ÷ ${x25519.dhsPerHandshakePair} (the DHs of a pair)`));
    }
    return {
      userAgent: navigator.userAgent,
      secureContext: globalThis.isSecureContext,
      seconds,
      aesName: AES_NAME,
      inFlight: IN_FLIGHT,
      rows,
      handshakesPerSecond: handshakes,
      x25519,
      elapsedSeconds: (performance.now() - begun) / 1000,
    };
  } finally {
    running = false;
  }
}

// ## The page

/** @param {number} value */
function format(value) {
  return value >= 100 ? value.toFixed(0) : value.toPrecision(3);
}

/** @param {string} id */
function element(id) {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`browser-crypto.html has no #${id}`);
  return found;
}

/** @param {Row} measured */
function showRow(measured) {
  const tr = document.createElement('tr');
  for (const text of [measured.name, format(measured.ours), format(measured.anchor), measured.unit,
    measured.ratio.toFixed(2), measured.anchorName]) {
    const td = document.createElement('td');
    td.textContent = text;
    tr.append(td);
  }
  element('rows').append(tr);
}

/**
 * The page's run: the table filled as rows come, then the JSON.
 * @param {number} seconds
 */
async function runInPage(seconds) {
  const button = /** @type {HTMLButtonElement} */ (element('run'));
  button.disabled = true;
  element('rows').replaceChildren();
  element('json').textContent = '';
  element('status').textContent = `Running, ${seconds} s a measure…`;
  try {
    const result = await runCryptoBench(seconds, showRow);
    element('status').textContent = `Done in ${result.elapsedSeconds.toFixed(1)} s` +
      (result.x25519.available ? '.' : `; no X25519 here: ${result.x25519.error}`);
    element('json').textContent = JSON.stringify(result, null, 2);
  } catch (error) {
    element('status').textContent = `Failed: ${error}`;
  } finally {
    button.disabled = false;
  }
}

/** The seconds a measure the page's field asks for, 1 when it makes no sense. */
function secondsAsked() {
  const value = Number(/** @type {HTMLInputElement} */ (element('seconds')).value);
  return value > 0 && value <= 60 ? value : 1;
}

Object.assign(globalThis, { runCryptoBench });
if (typeof document !== 'undefined' && document.getElementById('run') !== null) {
  const query = new URLSearchParams(location.search);
  const fromQuery = query.get('seconds');
  if (fromQuery !== null) /** @type {HTMLInputElement} */ (element('seconds')).value = fromQuery;
  element('run').addEventListener('click', () => { runInPage(secondsAsked()); });
  if (query.has('run')) runInPage(secondsAsked());
}
