// Throughput of the pure-JavaScript primitives against Node's own (OpenSSL's), in MB/s of
// input, on this machine: `node Web/bench/throughput.js [seconds per measure]`.
// Also the rate of complete XK handshakes (both sides, one thread; X25519 is WebCrypto's).

import * as nodeCrypto from 'node:crypto';
import { seal, open } from '../js/chacha20poly1305.js';
import { blake2s } from '../js/blake2s.js';
import { CipherState, HandshakeState } from '../js/noise.js';
import { XK } from '../js/handshake-pattern.js';
import { generateKeyPair } from '../js/x25519.js';

const seconds = Number(process.argv[2] ?? 1) || 1;

/**
 * Runs `fn` repeatedly for about `seconds` after a warm-up; returns MB/s of `bytes` per call.
 * @param {number} bytes @param {() => unknown} fn
 */
function rate(bytes, fn) {
  for (let i = 0; i < 20; i++) fn();
  const start = performance.now();
  let calls = 0;
  while (performance.now() - start < seconds * 1000) {
    for (let i = 0; i < 8; i++) fn();
    calls += 8;
  }
  return (calls * bytes) / 1e6 / ((performance.now() - start) / 1000);
}

const key = new Uint8Array(nodeCrypto.createHash('blake2s256').update(new Uint8Array(1)).digest());
const nonce = key.slice(0, 12);

/** @param {Uint8Array} plaintext */
function nodeSeal(plaintext) {
  const cipher = nodeCrypto.createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  cipher.update(plaintext);
  cipher.final();
  return cipher.getAuthTag();
}

/** @param {string} name @param {number} ours @param {number} native */
function row(name, ours, native) {
  console.log(`${name.padEnd(44)} ${ours.toFixed(0).padStart(6)} MB/s   node ${native.toFixed(0).padStart(6)} MB/s   ratio ${(ours / native).toFixed(2)}`);
}

for (const size of [65519, 1024, 64]) {
  const plaintext = new Uint8Array(size);
  const sealed = seal(key, nonce, plaintext);
  const native = rate(size, () => nodeSeal(plaintext));
  row(`ChaCha20-Poly1305 seal, ${size} B`, rate(size, () => seal(key, nonce, plaintext)), native);
  row(`ChaCha20-Poly1305 open, ${size} B`, rate(size, () => open(key, nonce, sealed)), native);
}
{
  const plaintext = new Uint8Array(65519);
  const state = new CipherState(key);
  row('CipherState encryptWithAd, 65519 B', rate(65519, () => state.encryptWithAd(new Uint8Array(0), plaintext)),
    rate(65519, () => nodeSeal(plaintext)));
}
for (const size of [65536, 64]) {
  const data = new Uint8Array(size);
  row(`BLAKE2s-256, ${size} B`, rate(size, () => blake2s(data)),
    rate(size, () => nodeCrypto.createHash('blake2s256').update(data).digest()));
}

const initiatorStatic = await generateKeyPair();
const responderStatic = await generateKeyPair();
let handshakes = 0;
const start = performance.now();
while (performance.now() - start < seconds * 1000) {
  const initiator = new HandshakeState({ pattern: XK, initiator: true, s: initiatorStatic, rs: responderStatic.publicKey });
  const responder = new HandshakeState({ pattern: XK, initiator: false, s: responderStatic });
  await responder.readMessage(await initiator.writeMessage());
  await initiator.readMessage(await responder.writeMessage());
  await responder.readMessage(await initiator.writeMessage());
  initiator.transportCipherStates();
  responder.transportCipherStates();
  handshakes++;
}
console.log(`Noise_XK_25519_ChaChaPoly_BLAKE2s handshakes, both sides: ${(handshakes / ((performance.now() - start) / 1000)).toFixed(0)}/s`);
