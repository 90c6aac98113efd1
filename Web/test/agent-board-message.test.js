// The agents family's board messages (docs/companion.md, "Agents"): bodies as the Swift side
// writes them, every bound and type its reader checks, and the device's receiver that puts a
// board together and applies changes, as Tests/HerdrAgentsTests/AgentBoardMessageTests.swift
// checks the Swift side.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentBoardMessage, AgentBoardMessageError } from '../js/agent-board-message.js';
import { AgentBoardReceiver } from '../js/agent-board-receiver.js';
import { AgentBoard } from '../js/agent-board.js';
import { HerdrAgent, HerdrAgentStatus } from '../js/herdr-agent.js';
import { HerdrAvailability, HerdrSessionInfo } from '../js/herdr-session-info.js';
import { seededRandom } from '../test-support/support.js';
import { utf8 } from '../js/bytes.js';

/** @typedef {import('../js/agent-board-message.js').AgentBoardMessage} Message */
/** @typedef {import('../js/herdr-agent.js').HerdrAgentStatusValue} Status */

/** @param {string} text @returns {Message} */
const parse = (text) => AgentBoardMessage.parseBody(utf8(text));

/**
 * @param {string} pane
 * @param {{session?: string, status?: Status, name?: string | null, since?: number | null}} [fields]
 */
function agent(pane, fields = {}) {
  return HerdrAgent.make({ session: fields.session ?? 'default', pane },
    { name: fields.name ?? null, kind: 'claude', status: fields.status ?? 'working', title: 'a title', since: fields.since ?? null });
}

const sessions = [
  HerdrSessionInfo.make('default', true, 'ready'),
  HerdrSessionInfo.make('work', false, 'unresponsive', 'no answer in 2 s'),
];

/**
 * A board's whole parts, as a computer would send them (one part per `perPart` agents).
 * @param {AgentBoard} board
 * @param {number} sequence
 * @param {number} [perPart]
 * @returns {Message[]}
 */
function fullParts(board, sequence, perPart = 256) {
  const agents = [...board.agents.values()];
  const parts = Math.max(1, Math.ceil(agents.length / perPart));
  return Array.from({ length: parts }, (_, i) => ({
    sequence: sequence + i, kind: { kind: 'full', part: i + 1, parts }, herdr: i === 0 ? board.herdr : null,
    sessions: i === 0 ? board.sessions : null, omitted: i === 0 ? board.omitted : null,
    agents: agents.slice(i * perPart, (i + 1) * perPart), removed: [],
  }));
}

/** @param {AgentBoard | null} a @param {AgentBoard} b */
function sameBoard(a, b) {
  assert.ok(a !== null);
  assert.deepEqual({ ...a, agents: [...a.agents].sort() }, { ...b, agents: [...b.agents].sort() });
}

test('agents messages: the body is written as the Swift side writes it and parses back', () => {
  /** @type {Message} */
  const message = {
    sequence: 1, kind: { kind: 'full', part: 1, parts: 1 }, herdr: HerdrAvailability.make('ready'),
    sessions: [HerdrSessionInfo.make('default', true, 'ready')], omitted: 0,
    agents: [HerdrAgent.make({ session: 'default', pane: 'w1:p2' }, { name: 'claude-2', kind: 'claude', status: 'blocked', title: 'Approve edit?', since: 1796512345 })],
    removed: [],
  };
  // docs/companion.md's first example body.
  const documented = '{"seq":1,"full":{"part":1,"parts":1},"herdr":{"state":"ready"},"sessions":[{"name":"default","default":true,"state":"ready"}],"omitted":0,"agents":[{"session":"default","pane":"w1:p2","name":"claude-2","kind":"claude","status":"blocked","title":"Approve edit?","since":1796512345}]}';
  assert.equal(new TextDecoder().decode(AgentBoardMessage.body(message)), documented);
  assert.deepEqual(parse(documented), message);
  const changes = '{"seq":2,"changes":true,"agents":[{"session":"default","pane":"w1:p2","name":"claude-2","kind":"claude","status":"working","since":1796512400}],"removed":[]}';
  assert.equal(new TextDecoder().decode(AgentBoardMessage.body(parse(changes))), changes);
  const receiver = new AgentBoardReceiver();
  receiver.receive(parse(documented));
  const board = receiver.receive(parse(changes));
  assert.equal(board?.agents.get(AgentBoard.keyText({ session: 'default', pane: 'w1:p2' }))?.status, 'working');
});

test('agents messages: the longest board fits its parts and comes back whole', () => {
  const longest = Array.from({ length: AgentBoard.maximumAgents }, (_, i) => {
    const pane = `w${i}:` + 'p'.repeat(HerdrAgent.maximumPaneBytes - `w${i}:`.length);
    return HerdrAgent.make({ session: 's'.repeat(64), pane },
      { name: '"'.repeat(64), kind: '\\'.repeat(32), status: 'blocked', title: '"'.repeat(128), since: 1e12 });
  });
  const board = AgentBoard.make({ sessions, agents: longest });
  const messages = fullParts(board, 7, 70);
  assert.equal(messages.length, 4);
  const receiver = new AgentBoardReceiver();
  /** @type {AgentBoard | null} */
  let result = null;
  for (const message of messages) {
    const body = AgentBoardMessage.body(message);
    assert.ok(body.length <= AgentBoardMessage.maximumBodyBytes, `${body.length}`);
    result = receiver.receive(AgentBoardMessage.parseBody(body));
    if (message !== messages[messages.length - 1]) assert.equal(result, null);
  }
  sameBoard(result, board);
});

test('agents messages: seeded changes turn the old board into the new one', () => {
  const random = seededRandom(5);
  /** @returns {AgentBoard} */
  const randomBoard = () => AgentBoard.make({
    herdr: random.below(2) === 0 ? HerdrAvailability.make('ready') : HerdrAvailability.make('failing', 'bad'),
    sessions: random.below(2) === 0 ? sessions : [sessions[0]],
    agents: Array.from({ length: random.below(13) }, () => agent(`w1:p${1 + random.below(15)}`, {
      session: random.below(2) === 0 ? 'default' : 'work', status: HerdrAgentStatus.all[random.below(5)],
      name: random.below(2) === 0 ? `agent-${1 + random.below(3)}` : null, since: random.below(4),
    })),
    omitted: random.below(2),
  });
  for (let round = 0; round < 200; round++) {
    const old = randomBoard();
    const now = randomBoard();
    const receiver = new AgentBoardReceiver();
    for (const message of fullParts(old, 1, 5)) receiver.receive(AgentBoardMessage.parseBody(AgentBoardMessage.body(message)));
    sameBoard(receiver.board, old);
    /** @type {Message} */
    const changes = {
      sequence: 100, kind: { kind: 'changes' }, herdr: now.herdr, sessions: now.sessions, omitted: now.omitted,
      agents: [...now.agents.values()], removed: [...old.agents.keys()].filter((key) => !now.agents.has(key))
        .map((key) => /** @type {import('../js/herdr-agent.js').HerdrAgent} */ (old.agents.get(key)).key),
    };
    receiver.receive(AgentBoardMessage.parseBody(AgentBoardMessage.body(changes)));
    sameBoard(receiver.board, now);
  }
});

test('agents messages: a receiver refuses messages out of turn', () => {
  for (const [body, kind] of [['{"seq":1,"changes":true,"agents":[],"removed":[]}', 'outOfOrder'],
    ['{"seq":1,"full":{"part":2,"parts":2},"agents":[]}', 'outOfOrder']]) {
    assert.throws(() => new AgentBoardReceiver().receive(parse(body)), { kind });
  }
  const receiver = new AgentBoardReceiver();
  receiver.receive(parse('{"seq":4,"full":{"part":1,"parts":1},"herdr":{"state":"ready"},"sessions":[],"omitted":0,"agents":[]}'));
  assert.throws(() => receiver.receive(parse('{"seq":4,"changes":true,"agents":[],"removed":[]}')), { kind: 'sequence' });
  const parts = new AgentBoardReceiver();
  parts.receive(parse('{"seq":1,"full":{"part":1,"parts":3},"herdr":{"state":"ready"},"sessions":[],"omitted":0,"agents":[]}'));
  assert.throws(() => parts.receive(parse('{"seq":2,"full":{"part":3,"parts":3},"agents":[]}')), { kind: 'outOfOrder' });
  // 257 agents over two parts: past the bound.
  const many = (/** @type {number} */ from, /** @type {number} */ count) => Array.from({ length: count },
    (_, i) => `{"session":"default","pane":"p${from + i}","status":"idle"}`).join(',');
  const big = new AgentBoardReceiver();
  big.receive(parse(`{"seq":1,"full":{"part":1,"parts":2},"herdr":{"state":"ready"},"sessions":[],"omitted":0,"agents":[${many(0, 200)}]}`));
  assert.throws(() => big.receive(parse(`{"seq":2,"full":{"part":2,"parts":2},"agents":[${many(200, 57)}]}`)), { kind: 'tooManyAgents' });
});

test('agents messages: a malformed body is refused with a reason', () => {
  const malformed = [
    '[]', '{}', '{"seq":0,"changes":true,"agents":[],"removed":[]}', '{"seq":4294967296,"changes":true,"agents":[],"removed":[]}',
    '{"seq":1,"changes":true,"agents":[]}', '{"seq":1,"changes":false,"agents":[],"removed":[]}',
    '{"seq":1,"full":{"part":1,"parts":9},"herdr":{"state":"ready"},"sessions":[],"omitted":0,"agents":[]}',
    '{"seq":1,"full":{"part":3,"parts":2},"agents":[]}',
    '{"seq":1,"full":{"part":1,"parts":1},"sessions":[],"omitted":0,"agents":[]}',
    '{"seq":1,"full":{"part":2,"parts":2},"omitted":0,"agents":[]}',
    '{"seq":1,"full":{"part":1,"parts":1},"herdr":{"state":"fine"},"sessions":[],"omitted":0,"agents":[]}',
    '{"seq":1,"full":{"part":1,"parts":1},"herdr":{"state":"ready"},"sessions":[],"omitted":-1,"agents":[]}',
    '{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1:p1"}],"removed":[]}',
    '{"seq":1,"changes":true,"agents":[{"session":"no space","pane":"w1:p1","status":"idle"}],"removed":[]}',
    '{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1 p1","status":"idle"}],"removed":[]}',
    '{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1:p1","status":"idle","since":-1}],"removed":[]}',
    '{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1:p1","status":"idle","name":7}],"removed":[]}',
    '{"seq":1,"changes":true,"agents":[],"removed":[{"session":"default"}]}',
    '{"seq":1,"changes":true,"agents":[],"removed":[],"sessions":[{"name":"a","default":true,"state":"ready"},{"name":"a","default":false,"state":"ready"}]}',
    '{"seq":1,"changes":true,"agents":[],"removed":[],"herdr":null}',
    '{"seq":1,"full":{"part":1,"parts":1},"changes":null,"herdr":{"state":"ready"},"sessions":[],"omitted":0,"agents":[]}',
    '{"seq":1,"full":{"part":1,"parts":1},"herdr":{"state":"ready"},"sessions":[],"omitted":0,"agents":[],"removed":[]}',
    '{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1:p1","status":"idle","title":null}],"removed":[]}',
  ];
  for (const body of malformed) {
    assert.throws(() => parse(body), (error) => error instanceof AgentBoardMessageError && error.kind === 'malformed' && error.message !== '', body);
  }
});

test('agents messages: texts at their bound parse, one byte more does not; over 65000 bytes or 256 agents is refused', () => {
  const atBound = 'é'.repeat(HerdrAgent.maximumNameBytes / 2);
  for (const [name, parses] of /** @type {[string, boolean][]} */ ([[atBound, true], [atBound + 'x', false]])) {
    const body = `{"seq":1,"changes":true,"removed":[],"agents":[{"session":"default","pane":"w1:p1","status":"idle","name":"${name}"}]}`;
    assert.equal((() => { try { parse(body); return true; } catch { return false; } })(), parses);
  }
  const long = `{"seq":1,"changes":true,"removed":[],"agents":[],"pad":"${'a'.repeat(AgentBoardMessage.maximumBodyBytes)}"}`;
  assert.throws(() => parse(long), { kind: 'tooLong' });
  const entry = '{"session":"default","pane":"w1:p1","status":"idle"}';
  assert.throws(() => parse(`{"seq":1,"changes":true,"removed":[],"agents":[${new Array(257).fill(entry).join(',')}]}`), { kind: 'malformed' });
});

test('agents messages: unknown fields are ignored, an unknown status is unknown, texts made printable', () => {
  const message = parse('{"seq":1,"changes":true,"later":[1],"removed":[],"agents":[{"session":"default","pane":"w1:p1","status":"thinking","colour":"red","name":" a\\u0000b\\n","title":"\\u200b"}]}');
  assert.equal(message.agents[0].status, 'unknown');
  assert.equal(message.agents[0].name, 'ab');
  assert.equal(message.agents[0].title, null, 'a text with nothing printable left is none');
});

test('a board lists blocked agents first, the longest waiting first, then by session and pane', () => {
  /** @param {string} pane @param {import('../js/herdr-agent.js').HerdrAgentStatusValue} status @param {number | null} since @param {string} [session] */
  const agent = (pane, status, since, session = 'default') => HerdrAgent.make({ session, pane }, { status, since });
  const board = AgentBoard.make({
    agents: [
      agent('w1:p1', 'idle', 5), agent('w1:p10', 'blocked', null), agent('w1:p2', 'blocked', null),
      agent('w1:p3', 'blocked', 20), agent('w1:p4', 'blocked', 10), agent('w1:p5', 'working', 1),
      agent('w1:p6', 'done', 30), agent('w1:p7', 'unknown', 1), agent('w1:p1', 'blocked', null, 'a'),
    ],
  });
  assert.deepEqual(
    AgentBoard.sorted(board).map((a) => `${a.key.session}/${a.key.pane}`),
    ['default/w1:p4', 'default/w1:p3', 'a/w1:p1', 'default/w1:p2', 'default/w1:p10', 'default/w1:p6', 'default/w1:p5',
      'default/w1:p1', 'default/w1:p7']);
});
