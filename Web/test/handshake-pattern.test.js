import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handshakePattern, describePattern, patternNamed, ALL_PATTERNS, XK, NN } from '../js/handshake-pattern.js';
import { NoiseError } from '../js/noise-error.js';

test('XK is the spec\'s (section 7.5)', () => {
  assert.equal(describePattern(XK), 'XK:\n  <- s\n  ...\n  -> e, es\n  <- e, ee\n  -> s, se');
  assert.equal(describePattern(NN), 'NN:\n  -> e\n  <- e, ee');
  assert.deepEqual(XK.responderPreMessage, ['s']);
  assert.deepEqual(XK.initiatorPreMessage, []);
  assert.deepEqual(XK.messagePatterns.map((m) => m.direction), ['->', '<-', '->']);
});

test('the 15 named patterns are there, valid, frozen and found by name', () => {
  assert.deepEqual(ALL_PATTERNS.map((p) => p.name),
    ['N', 'K', 'X', 'NN', 'NK', 'NX', 'KN', 'KK', 'KX', 'XN', 'XK', 'XX', 'IN', 'IK', 'IX']);
  for (const pattern of ALL_PATTERNS) {
    assert.equal(patternNamed(pattern.name), pattern);
    assert.ok(Object.isFrozen(pattern) && Object.isFrozen(pattern.messagePatterns) &&
      Object.isFrozen(pattern.messagePatterns[0].tokens));
    // Rebuilding it from its own data passes validation.
    handshakePattern(pattern.name, pattern.initiatorPreMessage, pattern.responderPreMessage,
      pattern.messagePatterns.map((m) => [m.direction, m.tokens]));
  }
  assert.equal(patternNamed('XK1'), undefined);
  assert.equal(patternNamed('xk'), undefined);
});

test('validation refuses what section 7.3 forbids', () => {
  /** @type {[string, Parameters<typeof handshakePattern>][]} */
  const bad = [
    ['no messages', ['A', [], [], []]],
    ['an empty message', ['A', [], [], [['->', ['e']], ['<-', []]]]],
    ['starts with <-', ['A', [], [], [['<-', ['e']]]]],
    ['no alternation', ['A', [], [], [['->', ['e']], ['->', ['s']]]]],
    ['e twice', ['A', [], [], [['->', ['e']], ['<-', ['e', 'ee']], ['->', ['e']]]]],
    ['s twice', ['A', [], [], [['->', ['s']], ['<-', ['e']], ['->', ['s']]]]],
    ['s after pre-message s', ['A', ['s'], [], [['->', ['e', 's']]]]],
    ['ee too early', ['A', [], [], [['->', ['e', 'ee']]]]],
    ['es without rs', ['A', [], [], [['->', ['e', 'es']]]]],
    ['se without e of the responder', ['A', [], ['s'], [['->', ['s', 'se']]]]],
    ['ss without s', ['A', [], ['s'], [['->', ['e', 'ss']]]]],
    ['a DH token in a pre-message', ['A', ['ee'], [], [['->', ['e']]]]],
    ['a pre-message key twice', ['A', [], ['s', 's'], [['->', ['e', 'es']]]]],
    ['an unknown token', ['A', [], [], [['->', [/** @type {any} */ ('psk')]]]]],
  ];
  for (const [why, args] of bad) {
    assert.throws(() => handshakePattern(...args),
      (error) => error instanceof NoiseError && error.kind === 'invalidPattern', why);
  }
});
