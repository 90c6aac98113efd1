// Every decoder of what the computer (or anyone on the path) can send, fed 20,000 seeded random
// and mutated byte strings: each gives a value or throws its own typed error with a stable
// `kind`, never anything else (no TypeError, no RangeError, no hang). A value that comes out
// encodes to bytes that parse to the same value, and screen updates go on into a replica, which
// answers every one with an outcome and keeps its screen the size it says.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelMessage, ChannelMessageError } from '../js/channel-message.js';
import { SessionMessage } from '../js/session-message.js';
import { SessionMessageError } from '../js/session-wire.js';
import { CompanionMessage, CompanionMessageError } from '../js/companion-message.js';
import { AgentBoardMessage, AgentBoardMessageError } from '../js/agent-board-message.js';
import { AgentBoardReceiver } from '../js/agent-board-receiver.js';
import { HomeAddress, HomeAddressError } from '../js/home-address.js';
import { IPAddress } from '../js/ip-address.js';
import { ScreenReplica } from '../js/screen-replica.js';
import { ScreenUpdate } from '../js/screen-update.js';
import { ScreenCell } from '../js/screen-cell.js';
import { CellStyle } from '../js/cell-style.js';
import { TerminalColor } from '../js/terminal-color.js';
import { ScreenModes } from '../js/screen-modes.js';
import { ScreenTarget } from '../js/screen-target.js';
import { TerminalScreen } from '../js/terminal-screen.js';
import { concatBytes, utf8 } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';

/** @typedef {import('../js/session-message.js').SessionMessage} Message */

const ITERATIONS = 20000;
const token = new Uint8Array(16).fill(0x10);
const bold = CellStyle.make({ foreground: TerminalColor.indexed(4), background: TerminalColor.rgb(1, 2, 3), flags: 1, underline: 'single' });

/** @type {Message[]} */
const sessionSeeds = [
  { type: 'open', stream: 1, name: null, cols: 80, rows: 24, window: 4 * 1024 * 1024 },
  { type: 'openAgent', stream: 2, session: 'default', pane: 'w1:p2', cols: 80, rows: 24, window: 65536 },
  { type: 'resume', stream: 1, token, received: 12n, cols: 80, rows: 24, window: 4096 },
  { type: 'started', stream: 1, token, offset: 0n, window: 4 * 1024 * 1024 },
  { type: 'output', stream: 1, offset: 2n, data: utf8('exit\r\n') },
  { type: 'input', stream: 1, data: utf8('ls\r') },
  { type: 'resize', stream: 1, cols: 100, rows: 30 },
  { type: 'credit', stream: 1, consumed: 65536n },
  { type: 'endOfInput', stream: 1 },
  { type: 'close', stream: 3 },
  { type: 'exit', stream: 1, end: 8n, status: 0, signal: 'HUP' },
  { type: 'refused', stream: 1, reason: 'unknownAgent', text: 'no agent w1:p9 in herdr session default' },
  { type: 'openScreen', stream: 3, target: ScreenTarget.session(null), cols: 20, rows: 4 },
  { type: 'openScreen', stream: 3, target: ScreenTarget.agent('work', 'w1:p1'), cols: 20, rows: 4 },
  { type: 'resumeScreen', stream: 3, token, cols: 20, rows: 4 },
  { type: 'screenStarted', stream: 3, token, inputReceived: 5n },
  { type: 'screenAck', stream: 3, state: 2n },
  { type: 'scrollbackRequest', stream: 3, end: 100n, count: 10 },
  {
    type: 'scrollback',
    scrollback: { stream: 3, first: 2n, oldest: 1n, total: 4n, lines: [[ScreenCell.make('a')], [ScreenCell.make('界', 2, bold), ScreenCell.make('', 0, bold)]] },
  },
  ...[0n, 1n, 2n].map((base) => /** @type {Message} */ ({
    type: 'screen',
    update: {
      stream: 3, state: base + 1n, base, inputBytes: 3n, isLastPart: base !== 1n, columns: 20, rows: 4,
      cursor: { row: 2, column: 2, visible: true }, modes: ScreenModes.make({ mouse: 'click', bracketedPaste: true }), bells: Number(base),
      scroll: base === 2n ? 1 : 0, title: base === 0n ? '~' : null,
      lines: [
        ScreenUpdate.row(0, [ScreenCell.make('$'), ScreenCell.make(' ')]),
        ScreenUpdate.row(1, [ScreenCell.make('s', 1, bold), ScreenCell.make('e\u0301')], 3, true),
        ScreenUpdate.row(1, [ScreenCell.make('界', 2), ScreenCell.make('', 0)], 7),
      ],
    },
  })),
];

const controlSeeds = [
  '{"pairing":"accepted"}', '{"ack":"status"}', '{"registered":true}', '{"home":["[fd00::7]:4610","169.254.3.1:4610"]}',
  '{"ping":7}', '{"pong":4294967295}', '{"inputReceived":{"stream":7,"bytes":1234}}', '{"window":{"stream":7,"bytes":262144}}',
  '{"agents":{"v":1,"watch":true}}', '{"serves":{"screen":1}}', '{"later":[1,{"x":null}]}',
  '{"status":{"v":1,"name":"phone","roomSecret":"CAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAg=","registered":false}}',
];

const agentSeeds = [
  '{"seq":1,"full":{"part":1,"parts":1},"herdr":{"state":"ready"},"sessions":[{"name":"default","default":true,"state":"ready"}],"omitted":0,"agents":[{"session":"default","pane":"w1:p2","name":"claude-2","kind":"claude","status":"blocked","title":"Approve edit?","since":1796512345}]}',
  '{"seq":2,"changes":true,"agents":[{"session":"default","pane":"w1:p2","status":"working","since":1796512400}],"removed":[{"session":"work","pane":"w2:p1"}],"herdr":{"state":"failing","detail":"x"}}',
];

/** The seeds, by kind: a mutation starts from a session message half the time, else a control or an agents message. */
const seeds = [
  sessionSeeds.map((message) => SessionMessage.encode(message)),
  sessionSeeds.map((message) => SessionMessage.encode(message)),
  controlSeeds.map(utf8),
  agentSeeds.map((body) => concatBytes(Uint8Array.of(0x0d, 1), utf8(body))),
];

const homeSeeds = ['[fd00::7]:4610', '169.254.3.1:4610', '192.168.1.20:1', '[fc00:1:2:3:4:5:6:7]:65535', '[::ffff:10.0.0.1]:80'].map(utf8);

/** Bytes worth putting at a field: the bounds the parsers check. */
const EDGES = [0x00, 0x01, 0x02, 0x03, 0x04, 0x0d, 0x1f, 0x20, 0x22, 0x2c, 0x2d, 0x30, 0x3a, 0x40, 0x5b, 0x5d, 0x7b, 0x7d, 0x7f, 0x80,
  0xbf, 0xc0, 0xc1, 0xe0, 0xed, 0xef, 0xf4, 0xf5, 0xfe, 0xff];
const JSON_PIECES = ['{', '}', '[', ']', ',', ':', '"', 'null', 'true', 'false', '-1', '0', '1e15', '4294967296', '1.5', '"x"', '\\u0000',
  '"seq"', '"full"', '"changes"', '"agents"', '"part"', '"parts"', '"v"', '"watch"', '"home"', '"status"', '"ack"', '"serves"', 'é', '\ud83d'];

/**
 * A mutation of `bytes`: bytes changed to random or edge values, bytes inserted or removed, the
 * message cut, a region repeated, or (for JSON) a piece of JSON put in.
 * @param {ReturnType<typeof seededRandom>} random
 * @param {Uint8Array} bytes
 * @returns {Uint8Array}
 */
function mutate(random, bytes) {
  let out = Array.from(bytes);
  for (let edits = random.below(3) === 0 ? 2 + random.below(3) : 1; edits > 0; edits--) {
    const at = random.below(out.length + 1);
    switch (random.below(8)) {
      case 0:
        if (out.length > 0) out[Math.min(at, out.length - 1)] = random.below(256);
        break;
      case 1:
        if (out.length > 0) out[Math.min(at, out.length - 1)] = EDGES[random.below(EDGES.length)];
        break;
      case 2:
        out.splice(at, 0, ...random.bytes(1 + random.below(6)));
        break;
      case 3:
        out.splice(at, 1 + random.below(6));
        break;
      case 4:
        out = out.slice(0, at);
        break;
      case 5: {
        const length = random.below(Math.min(64, out.length + 1));
        out.splice(at, 0, ...out.slice(Math.max(0, at - length), at));
        break;
      }
      case 6:
        out.splice(at, 0, ...utf8(JSON_PIECES[random.below(JSON_PIECES.length)]));
        break;
      default:
        // A 16-bit field set to a bound: 0, 1, 999, 1000, 1001, 0x8000, 0xffff.
        if (at + 1 < out.length) {
          const value = [0, 1, 999, 1000, 1001, 0x8000, 0x8001, 0xffff][random.below(8)];
          out[at] = value >> 8;
          out[at + 1] = value & 0xff;
        }
    }
  }
  return Uint8Array.from(out);
}

/**
 * Runs `decode`; returns its value, or null after checking that what it threw is an `errorClass`
 * with a kind that is a non-empty string.
 * @template T
 * @param {() => T} decode
 * @param {Function} errorClass
 * @param {string} what
 * @returns {T | null}
 */
function decodeOrTypedError(decode, errorClass, what) {
  try {
    return decode();
  } catch (error) {
    if (!(error instanceof errorClass) || !(error instanceof Error) || typeof (/** @type {{kind?: unknown}} */ (error).kind) !== 'string' ||
      error.message === '') {
      assert.ok(false, `${what} threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    }
    return null;
  }
}

/** @param {unknown} value */
const show = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Array.from(v) : v instanceof Map ? [...v] : v));

test(`codecs: ${ITERATIONS} seeded random and mutated messages give a value or a typed error`, () => {
  const random = seededRandom(20260);
  const replica = new ScreenReplica();
  const receiver = new AgentBoardReceiver();
  /** @type {Record<string, number>} */
  const counts = { session: 0, control: 0, agents: 0, refused: 0, screens: 0, homes: 0 };
  const firstBytes = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
    0x14, 0x15, 0x7b, 0x00, 0x20, 0xff];
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    /** @type {Uint8Array} */
    let bytes;
    if (random.below(4) === 0) {
      // Random bytes after a first byte of any kind.
      bytes = concatBytes(Uint8Array.of(firstBytes[random.below(firstBytes.length)]), random.bytes(random.below(160)));
    } else {
      const kind = seeds[random.below(seeds.length)];
      bytes = mutate(random, kind[random.below(kind.length)]);
    }
    const what = `iteration ${iteration}: ${show(bytes)}`;

    // The channel's rule, and each codec on its own.
    const channel = decodeOrTypedError(() => ChannelMessage.parse(bytes), ChannelMessageError, what);
    const session = decodeOrTypedError(() => SessionMessage.parse(bytes), SessionMessageError, what);
    const control = decodeOrTypedError(() => CompanionMessage.parse(bytes), CompanionMessageError, what);
    const agents = decodeOrTypedError(() => AgentBoardMessage.parseBody(bytes.subarray(2)), AgentBoardMessageError, what);
    if (channel === null) {
      counts.refused += 1;
    } else {
      counts[channel.type] += 1;
      assert.deepEqual(ChannelMessage.parse(ChannelMessage.encode(channel)), channel, `encoded again, ${what}`);
    }
    if (session !== null) {
      assert.deepEqual(SessionMessage.parse(SessionMessage.encode(session)), session, `session encoded again, ${what}`);
      if (session.type === 'screen') {
        const outcome = replica.apply(session.update);
        assert.ok(['partial', 'complete', 'broken'].includes(outcome.kind));
        if (outcome.kind === 'broken' || random.below(8) === 0) replica.restart();
        const screen = replica.screen;
        assert.ok(screen.lines.every((line) => line.length === TerminalScreen.columns(screen)), 'every row as wide as the screen');
        counts.screens += 1;
      }
    }
    if (control !== null) assert.deepEqual(CompanionMessage.parse(CompanionMessage.encode(control)), control, `control encoded again, ${what}`);
    if (agents !== null) {
      assert.deepEqual(AgentBoardMessage.parseBody(AgentBoardMessage.body(agents)), agents, `agents encoded again, ${what}`);
      decodeOrTypedError(() => receiver.receive(agents), AgentBoardMessageError, what);
    }
    // Addresses from text: a mutated address, each byte a character.
    const text = String.fromCharCode(...mutate(random, homeSeeds[random.below(homeSeeds.length)]).subarray(0, 60));
    const home = decodeOrTypedError(() => HomeAddress.parse(text), HomeAddressError, what);
    if (home !== null) {
      counts.homes += 1;
      assert.deepEqual(HomeAddress.parse(HomeAddress.text(home)), home);
    }
    const address = IPAddress.parseNumeric(text);
    if (address !== null) assert.ok(IPAddress.equal(/** @type {import('../js/ip-address.js').IPAddress} */ (IPAddress.parseNumeric(IPAddress.text(address))), address));
  }
  // The mutations reach every kind of outcome.
  assert.ok(counts.session > 1000 && counts.control > 300 && counts.agents > 100 && counts.refused > 5000 && counts.screens > 50 &&
    counts.homes > 1000,
    show(counts));
});

test('codecs: random IP address texts of the right alphabet parse only as inet_pton would, and round trip', () => {
  const random = seededRandom(7);
  const alphabet = '0123456789abcdefABCDEF:.';
  let parsed = 0;
  for (let iteration = 0; iteration < 20000; iteration++) {
    const length = 1 + random.below(20);
    let text = '';
    for (let i = 0; i < length; i++) text += alphabet[random.below(random.below(3) === 0 ? alphabet.length : 12)];
    if (random.below(3) === 0) text = text.replace(/:+/, '::');
    const address = IPAddress.parseNumeric(text);
    if (address === null) continue;
    parsed += 1;
    const canonical = IPAddress.text(address);
    const again = IPAddress.parseNumeric(canonical);
    assert.ok(again !== null && IPAddress.equal(again, address), `${text} → ${canonical}`);
    assert.equal(IPAddress.text(again), canonical);
  }
  assert.ok(parsed > 100, `${parsed}`);
});

test('codecs: 20,000 seeded random screen updates within the parser\'s bounds: the replica answers each, never throws', () => {
  const random = seededRandom(31);
  const replica = new ScreenReplica();
  /** @type {Record<string, number>} */
  const outcomes = { partial: 0, complete: 0, broken: 0 };
  const cells = [ScreenCell.make('a'), ScreenCell.blank, ScreenCell.make('界', 2, bold), ScreenCell.make('', 0, bold), ScreenCell.make('e\u0301')];
  for (let iteration = 0; iteration < 20000; iteration++) {
    const columns = 1 + random.below(random.below(4) === 0 ? 12 : 4);
    const rows = 1 + random.below(random.below(4) === 0 ? 8 : 3);
    const near = replica.state + BigInt(random.below(3));
    const state = near === 0n ? 1n : near;
    const base = random.below(3) === 0 ? 0n : random.below(4) === 0 ? BigInt(random.below(Number(state))) : replica.state < state ? replica.state : 0n;
    /** @type {import('../js/screen-update.js').ScreenUpdateRow[]} */
    const lines = [];
    let index = 0;
    let column = 0;
    for (let entries = random.below(5); entries > 0 && index < rows; entries--) {
      if (column >= columns) {
        index += 1;
        column = 0;
        if (index >= rows) break;
      }
      const start = column + random.below(columns - column);
      const count = random.below(columns - start + 1);
      const keepsRest = random.below(2) === 0;
      lines.push(ScreenUpdate.row(index, Array.from({ length: count }, () => cells[random.below(cells.length)]), start, keepsRest));
      if (keepsRest) {
        column = start + count;
      } else {
        index += 1 + random.below(2);
        column = 0;
      }
    }
    /** @type {Message} */
    const message = {
      type: 'screen',
      update: {
        stream: 1, state, base, inputBytes: BigInt(random.below(100)), isLastPart: random.below(4) !== 0, columns, rows,
        cursor: { row: random.below(rows), column: random.below(columns), visible: random.below(2) === 0 },
        modes: ScreenModes.make({ mouse: ScreenModes.mouseModes[random.below(4)] }), bells: random.below(3),
        scroll: base === 0n ? 0 : random.below(rows), title: random.below(3) === 0 ? `t${iteration}` : null, lines,
      },
    };
    const parsed = SessionMessage.parse(SessionMessage.encode(message));
    assert.ok(parsed.type === 'screen');
    const outcome = replica.apply(parsed.update);
    outcomes[outcome.kind] += 1;
    const screen = replica.screen;
    assert.ok(screen.lines.length >= 1 && screen.lines.every((line) => line.length === TerminalScreen.columns(screen)));
    if (outcome.kind === 'broken' || random.below(50) === 0) replica.restart();
  }
  assert.ok(outcomes.partial > 1000 && outcomes.complete > 1000 && outcomes.broken > 1000, show(outcomes));
});
