// Handshake patterns as data (Noise sections 7.1–7.5): tokens, message patterns, pre-messages,
// and the named one-way and interactive patterns. HandshakeState (noise.js) interprets any
// valid pattern.

import { NoiseError } from './noise-error.js';

/** @typedef {'e' | 's' | 'ee' | 'es' | 'se' | 'ss'} Token */
/** @typedef {'->' | '<-'} Direction `->` initiator to responder, `<-` responder to initiator */

/**
 * @typedef {object} MessagePattern
 * @property {Direction} direction
 * @property {readonly Token[]} tokens
 */

/**
 * @typedef {object} HandshakePattern
 * @property {string} name the name in protocol names, e.g. `XK`
 * @property {readonly Token[]} initiatorPreMessage `-> …` before `...`: empty, e, s, or e, s
 * @property {readonly Token[]} responderPreMessage `<- …` before `...`
 * @property {readonly MessagePattern[]} messagePatterns
 */

const TOKENS = new Set(['e', 's', 'ee', 'es', 'se', 'ss']);

/**
 * A checked, frozen pattern. Throws a NoiseError `invalidPattern` unless: every token is known;
 * pre-messages hold only e and s, each at most once; there is at least one message and none is
 * empty; directions alternate starting with the initiator; no party sends e or s twice (or
 * sends one it pre-messaged); and every DH token names keys that exist by then (section 7.3's
 * first two validity rules).
 * @param {string} name
 * @param {readonly Token[]} initiatorPreMessage
 * @param {readonly Token[]} responderPreMessage
 * @param {readonly (readonly [Direction, readonly Token[]])[]} messages e.g. `[['->', ['e', 'es']], ['<-', ['e', 'ee']]]`
 * @returns {HandshakePattern}
 */
export function handshakePattern(name, initiatorPreMessage, responderPreMessage, messages) {
  /** @param {string} why */
  const fail = (why) => new NoiseError('invalidPattern', `${name}: ${why}`);
  for (const pre of [initiatorPreMessage, responderPreMessage]) {
    if (!pre.every((token) => token === 'e' || token === 's') || new Set(pre).size !== pre.length) {
      throw fail('pre-messages may hold only e and s, each once');
    }
  }
  if (messages.length === 0) throw fail('no message patterns');
  // Keys each side holds so far, index 0 the initiator, 1 the responder.
  const hasE = [initiatorPreMessage.includes('e'), responderPreMessage.includes('e')];
  const hasS = [initiatorPreMessage.includes('s'), responderPreMessage.includes('s')];
  messages.forEach(([direction, tokens], index) => {
    const sender = index % 2;
    if (direction !== (sender === 0 ? '->' : '<-')) throw fail(`message ${index + 1} breaks the -> <- alternation`);
    if (tokens.length === 0) throw fail(`message ${index + 1} is empty`);
    for (const token of tokens) {
      if (!TOKENS.has(token)) throw fail(`message ${index + 1} has an unknown token ${JSON.stringify(token)}`);
      switch (token) {
        case 'e':
          if (hasE[sender]) throw fail('a party sends e twice');
          hasE[sender] = true;
          break;
        case 's':
          if (hasS[sender]) throw fail('a party sends s twice');
          hasS[sender] = true;
          break;
        case 'ee':
          if (!hasE[0] || !hasE[1]) throw fail('ee before both ephemerals exist');
          break;
        case 'es':
          if (!hasE[0] || !hasS[1]) throw fail("es before the initiator's e and the responder's s exist");
          break;
        case 'se':
          if (!hasS[0] || !hasE[1]) throw fail("se before the initiator's s and the responder's e exist");
          break;
        case 'ss':
          if (!hasS[0] || !hasS[1]) throw fail('ss before both statics exist');
          break;
      }
    }
  });
  return Object.freeze({
    name,
    initiatorPreMessage: Object.freeze([...initiatorPreMessage]),
    responderPreMessage: Object.freeze([...responderPreMessage]),
    messagePatterns: Object.freeze(messages.map(([direction, tokens]) =>
      Object.freeze({ direction, tokens: Object.freeze([...tokens]) }))),
  });
}

/**
 * The pattern in the spec's notation, one message per line, indented under its name:
 * pre-messages, then `...` when there are any, then the messages.
 * @param {HandshakePattern} pattern
 * @returns {string}
 */
export function describePattern(pattern) {
  const lines = [];
  if (pattern.initiatorPreMessage.length > 0) lines.push(`-> ${pattern.initiatorPreMessage.join(', ')}`);
  if (pattern.responderPreMessage.length > 0) lines.push(`<- ${pattern.responderPreMessage.join(', ')}`);
  if (lines.length > 0) lines.push('...');
  for (const message of pattern.messagePatterns) lines.push(`${message.direction} ${message.tokens.join(', ')}`);
  return `${pattern.name}:\n${lines.map((line) => `  ${line}`).join('\n')}`;
}

// One-way patterns (section 7.4).
export const N = handshakePattern('N', [], ['s'], [['->', ['e', 'es']]]);
export const K = handshakePattern('K', ['s'], ['s'], [['->', ['e', 'es', 'ss']]]);
export const X = handshakePattern('X', [], ['s'], [['->', ['e', 'es', 's', 'ss']]]);

// Interactive patterns (section 7.5).
export const NN = handshakePattern('NN', [], [], [['->', ['e']], ['<-', ['e', 'ee']]]);
export const NK = handshakePattern('NK', [], ['s'], [['->', ['e', 'es']], ['<-', ['e', 'ee']]]);
export const NX = handshakePattern('NX', [], [], [['->', ['e']], ['<-', ['e', 'ee', 's', 'es']]]);
export const KN = handshakePattern('KN', ['s'], [], [['->', ['e']], ['<-', ['e', 'ee', 'se']]]);
export const KK = handshakePattern('KK', ['s'], ['s'], [['->', ['e', 'es', 'ss']], ['<-', ['e', 'ee', 'se']]]);
export const KX = handshakePattern('KX', ['s'], [], [['->', ['e']], ['<-', ['e', 'ee', 'se', 's', 'es']]]);
export const XN = handshakePattern('XN', [], [], [['->', ['e']], ['<-', ['e', 'ee']], ['->', ['s', 'se']]]);
export const XK = handshakePattern('XK', [], ['s'], [['->', ['e', 'es']], ['<-', ['e', 'ee']], ['->', ['s', 'se']]]);
export const XX = handshakePattern('XX', [], [], [['->', ['e']], ['<-', ['e', 'ee', 's', 'es']], ['->', ['s', 'se']]]);
export const IN = handshakePattern('IN', [], [], [['->', ['e', 's']], ['<-', ['e', 'ee', 'se']]]);
export const IK = handshakePattern('IK', [], ['s'], [['->', ['e', 'es', 's', 'ss']], ['<-', ['e', 'ee', 'se']]]);
export const IX = handshakePattern('IX', [], [], [['->', ['e', 's']], ['<-', ['e', 'ee', 'se', 's', 'es']]]);

/** Every named pattern. */
export const ALL_PATTERNS = Object.freeze([N, K, X, NN, NK, NX, KN, KK, KX, XN, XK, XX, IN, IK, IX]);

/**
 * The named pattern called `name` (`XK`, `NN`, …), or undefined.
 * @param {string} name
 * @returns {HandshakePattern | undefined}
 */
export function patternNamed(name) {
  return ALL_PATTERNS.find((pattern) => pattern.name === name);
}
