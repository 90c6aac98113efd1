// The channel's one rule (docs/companion.md, "Inside the channel"): a message's first byte makes
// it a control message (`{`), a session message (0x01–0x1F, 0x0D the agents family's), or the
// end of the channel (any other byte, or no byte at all), as
// Tests/CompanionTests/ChannelMessageTests.swift checks the Swift side.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelMessage, ChannelMessageError } from '../js/channel-message.js';
import { SessionMessage } from '../js/session-message.js';
import { SessionMessageError } from '../js/session-wire.js';
import { CompanionMessageError } from '../js/companion-message.js';
import { AgentBoardMessage, AgentBoardMessageError } from '../js/agent-board-message.js';
import { HerdrAgent } from '../js/herdr-agent.js';
import { concatBytes, utf8 } from '../js/bytes.js';

test('channel messages: every first byte has its kind', () => {
  for (let byte = 0; byte <= 0xff; byte++) {
    const expected = byte === 0x7b ? 'control' : byte >= 0x01 && byte <= 0x1f ? 'session' : 'invalid';
    assert.equal(ChannelMessage.kindOf(Uint8Array.of(byte)), expected, `${byte}`);
    assert.equal(ChannelMessage.kindOf(Uint8Array.of(byte, 0x01, 0x7b)), expected, 'only the first byte counts');
  }
  assert.equal(ChannelMessage.kindOf(new Uint8Array(0)), 'invalid', 'an empty message ends the channel');
});

test('channel messages: a message of neither kind is refused, saying what it was', () => {
  /** @type {[Uint8Array, string, string][]} */
  const cases = [
    [new Uint8Array(0), 'empty', 'an empty message'],
    [Uint8Array.of(0x00), 'invalidFirstByte', 'byte 0x00'],
    [Uint8Array.of(0x20), 'invalidFirstByte', 'byte 0x20'],
    [Uint8Array.of(0x7f), 'invalidFirstByte', 'byte 0x7F'],
    [Uint8Array.of(0x80), 'invalidFirstByte', 'byte 0x80'],
    [Uint8Array.of(0xff, 0x7b), 'invalidFirstByte', 'byte 0xFF'],
    [utf8(' {"ack":"status"}'), 'invalidFirstByte', 'byte 0x20'],
  ];
  for (const [bytes, kind, said] of cases) {
    assert.throws(() => ChannelMessage.parse(bytes),
      (error) => error instanceof ChannelMessageError && error.kind === kind && error.message.includes(said), said);
  }
});

test('channel messages: each kind parses with its own codec', () => {
  assert.deepEqual(ChannelMessage.parse(utf8('{"ack":"status"}')), { type: 'control', message: { type: 'statusAcknowledged' } });
  /** @type {import('../js/agent-board-message.js').AgentBoardMessage} */
  const board = {
    sequence: 1, kind: { kind: 'changes' }, herdr: null, sessions: null, omitted: null,
    agents: [HerdrAgent.make({ session: 'default', pane: 'w1:p1' }, { status: 'blocked' })], removed: [],
  };
  const bytes = ChannelMessage.encode({ type: 'agents', message: board });
  assert.deepEqual(Array.from(bytes.subarray(0, 2)), [0x0d, 1]);
  assert.deepEqual(ChannelMessage.parse(bytes), { type: 'agents', message: board });
  assert.deepEqual(ChannelMessage.parse(utf8('{"agents":{"v":1,"watch":true}}')), { type: 'control', message: { type: 'agents', watch: true } });
  assert.deepEqual(ChannelMessage.parse(utf8('{"agents":{"v":2,"later":[]}}')), { type: 'control', message: { type: 'unknown', key: 'agents' } },
    'a later version of the family is ignored as an unknown key');
  assert.throws(() => ChannelMessage.parse(utf8('{"agents":{"v":1}}')), ChannelMessageError);
  assert.deepEqual(ChannelMessage.parse(SessionMessage.encode({ type: 'close', stream: 7 })),
    { type: 'session', message: { type: 'close', stream: 7 } });
  assert.deepEqual(ChannelMessage.parse(utf8('{"later":1}')), { type: 'control', message: { type: 'unknown', key: 'later' } });
});

test('channel messages: a malformed message of either kind is refused, saying why, with the cause', () => {
  /** @type {[Uint8Array, string, string, Function][]} */
  const cases = [
    [utf8('{"ack":"nope"}'), 'malformedControl', 'a malformed control message (an ack of something unknown)', CompanionMessageError],
    [utf8('{'), 'malformedControl', 'a malformed control message', CompanionMessageError],
    [Uint8Array.of(0x15, 0, 0, 0, 1), 'malformedSession', 'a malformed session message (an unknown session message type 21)', SessionMessageError],
    [concatBytes(Uint8Array.of(0x0d, 2), utf8('{}')), 'agentsVersion', 'an agents message of a version other than 1', Error],
    [Uint8Array.of(0x0d), 'agentsVersion', 'an agents message of a version other than 1', Error],
    [concatBytes(Uint8Array.of(0x0d, 1), utf8('{}')), 'malformedAgents', 'a malformed agents message (an agents message has no seq', AgentBoardMessageError],
    [Uint8Array.of(0x1f), 'malformedSession', 'a malformed session message (an unknown session message type 31)', SessionMessageError],
    [Uint8Array.of(0x06, 0, 0, 0, 1, 0, 0, 0, 0), 'malformedSession', 'a malformed session message (a window of 0×0 cells', SessionMessageError],
  ];
  for (const [bytes, kind, said, cause] of cases) {
    assert.throws(() => ChannelMessage.parse(bytes), (error) => {
      assert.ok(error instanceof ChannelMessageError);
      assert.equal(error.kind, kind);
      assert.ok(error.message.startsWith(said), `${error.message} starts with ${said}`);
      if (kind !== 'agentsVersion') assert.ok(error.cause instanceof cause, `${error.cause} is a ${cause.name}`);
      return true;
    });
  }
  assert.equal(AgentBoardMessage.maximumBodyBytes, 65000);
});
