// The channel's control messages (docs/companion.md, "Inside the channel"): each one's bytes as
// the Swift side writes them, every bound and type its reader checks (CompanionMessage), the
// home addresses they carry (HomeAddress, IPAddress) and the printable device name.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompanionMessage, CompanionMessageError } from '../js/companion-message.js';
import { HomeAddress, HomeAddressError } from '../js/home-address.js';
import { IPAddress } from '../js/ip-address.js';
import { RelayJSON } from '../js/relay-json.js';
import { printableText, BoundedText } from '../js/printable-text.js';
import { utf8 } from '../js/bytes.js';

/** @typedef {import('../js/companion-message.js').CompanionMessage} Message */
/** @typedef {import('../js/companion-message.js').CompanionMessageErrorKind} Kind */

const secret = Uint8Array.from({ length: 32 }, (_, i) => i * 7);

/** @param {string} text @returns {Message} */
const parse = (text) => CompanionMessage.parse(utf8(text));

/** @param {string | Uint8Array} input @param {Kind} kind */
function refuses(input, kind) {
  const bytes = typeof input === 'string' ? utf8(input) : input;
  assert.throws(() => CompanionMessage.parse(bytes),
    (error) => error instanceof CompanionMessageError && error.kind === kind, `${kind}: ${typeof input === 'string' ? input : ''}`);
}

test('control messages: each is written as the Swift side writes it and parses back', () => {
  /** @type {[Message, string][]} */
  const cases = [
    [{ type: 'pairing', accepted: true }, '{"pairing":"accepted"}'],
    [{ type: 'pairing', accepted: false }, '{"pairing":"rejected"}'],
    [{ type: 'status', status: { name: 'Ada\'s "phone" \\ ☎', roomSecret: secret, registered: false } },
      `{"status":{"v":1,"name":"Ada's \\"phone\\" \\\\ ☎","roomSecret":"${Buffer64(secret)}","registered":false}}`],
    [{ type: 'statusAcknowledged' }, '{"ack":"status"}'],
    [{ type: 'registered' }, '{"registered":true}'],
    [{ type: 'home', addresses: [] }, '{"home":[]}'],
    [{ type: 'home', addresses: [HomeAddress.parse('[fd00::7]:4610'), HomeAddress.parse('169.254.3.1:4610')] },
      '{"home":["[fd00::7]:4610","169.254.3.1:4610"]}'],
    [{ type: 'ping', number: 0 }, '{"ping":0}'],
    [{ type: 'pong', number: 4294967295 }, '{"pong":4294967295}'],
    [{ type: 'inputReceived', stream: 7, bytes: 1234n }, '{"inputReceived":{"stream":7,"bytes":1234}}'],
    [{ type: 'window', stream: 7, bytes: 262144 }, '{"window":{"stream":7,"bytes":262144}}'],
    [{ type: 'agents', watch: true }, '{"agents":{"v":1,"watch":true}}'],
    [{ type: 'agents', watch: false }, '{"agents":{"v":1,"watch":false}}'],
    [{ type: 'serves', served: new Map([['screen', 1], ['b-2', 0], ['A_', 2147483647]]) }, '{"serves":{"A_":2147483647,"b-2":0,"screen":1}}'],
    [{ type: 'unknown', key: 'later' }, '{"later":null}'],
  ];
  for (const [message, text] of cases) {
    assert.equal(new TextDecoder().decode(CompanionMessage.encode(message)), text);
    const parsed = CompanionMessage.parse(CompanionMessage.encode(message));
    if (message.type === 'serves' && parsed.type === 'serves') {
      assert.deepEqual([...parsed.served].sort(), [...message.served].sort());
    } else {
      assert.deepEqual(parsed, message, text);
    }
  }
});

/**
 * Standard base64, by the platform's own encoder, for the expected texts.
 * @param {Uint8Array} bytes
 */
function Buffer64(bytes) {
  return btoa(String.fromCharCode(...bytes));
}

test('control messages: at most 4096 bytes, a JSON object of exactly one key', () => {
  const padded = (/** @type {number} */ length) => `{"later":"${'a'.repeat(length - 12)}"}`;
  assert.equal(utf8(padded(4096)).length, 4096);
  assert.deepEqual(parse(padded(4096)), { type: 'unknown', key: 'later' });
  refuses(padded(4097), 'tooLong');
  for (const text of ['{', '{}', '[]', '"ack"', '1', 'null', '{"ack":"status","ping":1}', '{"ack":"status"} x', '\ufeff{"ack":"status"}']) {
    refuses(text, 'notOneKeyObject');
  }
  refuses(Uint8Array.of(0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d), 'notOneKeyObject');
  assert.deepEqual(parse(' {"ack":"status"} '), { type: 'statusAcknowledged' }, 'JSON whitespace around the object');
  assert.deepEqual(parse('{"later":{"anything":[1,2,{}]}}'), { type: 'unknown', key: 'later' }, 'an unknown key, whatever its value');
  assert.deepEqual(parse('{"__proto__":1}'), { type: 'unknown', key: '__proto__' });
});

test('control messages: pairing, ack and registered take only their one value', () => {
  for (const text of ['{"pairing":"maybe"}', '{"pairing":true}', '{"pairing":null}']) refuses(text, 'pairing');
  for (const text of ['{"ack":"nope"}', '{"ack":"Status"}', '{"ack":1}']) refuses(text, 'ack');
  for (const text of ['{"registered":false}', '{"registered":1}', '{"registered":"true"}']) refuses(text, 'registered');
});

test('control messages: ping and pong carry a whole number of 0 to 4294967295', () => {
  for (const [text, number] of /** @type {[string, number][]} */ ([['{"ping":0}', 0], ['{"ping":4294967295}', 4294967295], ['{"ping":7.0}', 7],
    ['{"ping":1e3}', 1000], ['{"ping":-0}', 0]])) {
    assert.deepEqual(parse(text), { type: 'ping', number }, text);
  }
  for (const text of ['{"ping":-1}', '{"ping":4294967296}', '{"ping":1.5}', '{"ping":true}', '{"ping":"1"}', '{"ping":null}', '{"ping":1e400}']) {
    refuses(text, 'ping');
  }
  refuses('{"pong":[1]}', 'pong');
  assert.throws(() => CompanionMessage.encode({ type: 'ping', number: -1 }), { kind: 'unencodable' });
});

test('control messages: window is within 4 KiB to 64 MiB on a u32 stream; inputReceived counts bytes', () => {
  assert.deepEqual(parse('{"window":{"stream":4294967295,"bytes":4096}}'), { type: 'window', stream: 4294967295, bytes: 4096 });
  assert.deepEqual(parse('{"window":{"stream":0,"bytes":67108864,"later":1}}'), { type: 'window', stream: 0, bytes: 67108864 });
  for (const text of ['{"window":{"stream":1,"bytes":4095}}', '{"window":{"stream":1,"bytes":67108865}}',
    '{"window":{"stream":-1,"bytes":4096}}', '{"window":{"stream":4294967296,"bytes":4096}}', '{"window":{"bytes":4096}}',
    '{"window":{"stream":1}}', '{"window":[1,4096]}', '{"window":{"stream":true,"bytes":4096}}']) {
    refuses(text, 'window');
  }
  assert.deepEqual(parse('{"inputReceived":{"stream":3,"bytes":999999999999999}}'), { type: 'inputReceived', stream: 3, bytes: 999999999999999n });
  for (const text of ['{"inputReceived":{"stream":3,"bytes":-1}}', '{"inputReceived":{"stream":3,"bytes":1e15}}',
    '{"inputReceived":{"stream":3}}', '{"inputReceived":{"stream":4294967296,"bytes":0}}', '{"inputReceived":3}']) {
    refuses(text, 'inputReceived');
  }
});

test('control messages: agents of version 1 watches or not; another version is an unknown key', () => {
  assert.deepEqual(parse('{"agents":{"v":1,"watch":true,"later":0}}'), { type: 'agents', watch: true });
  assert.deepEqual(parse('{"agents":{"v":2,"later":[]}}'), { type: 'unknown', key: 'agents' });
  for (const text of ['{"agents":{"v":1}}', '{"agents":{"v":1,"watch":1}}', '{"agents":{"watch":true}}', '{"agents":{"v":"1","watch":true}}',
    '{"agents":true}']) {
    refuses(text, 'agents');
  }
});

test('control messages: serves passes over names and versions it cannot read, and holds at most 16 keys', () => {
  const sixteen = '{"serves":{' + Array.from({ length: 16 }, (_, i) => `"k${i}":${i}`).join(',') + '}}';
  const parsed = parse(sixteen);
  assert.ok(parsed.type === 'serves' && parsed.served.size === 16);
  const names = '{"serves":{"' + 'n'.repeat(32) + '":1,"' + 'n'.repeat(33) + '":1,"":1,"é":1,"big":2147483648,"ok":2147483647}}';
  assert.deepEqual(parse(names), { type: 'serves', served: new Map([['n'.repeat(32), 1], ['ok', 2147483647]]) });
  refuses('{"serves":[]}', 'serves');
  refuses('{"serves":null}', 'serves');
});

test('control messages: a status is {v: 1, name, roomSecret: 32 bytes of standard base64, registered}', () => {
  /** @param {Record<string, unknown>} fields */
  const status = (fields) => JSON.stringify({ status: { v: 1, name: 'phone', roomSecret: RelayJSON.base64(secret), registered: true, ...fields } });
  assert.deepEqual(parse(status({ later: [1] })), { type: 'status', status: { name: 'phone', roomSecret: secret, registered: true } });
  assert.deepEqual(parse(status({ v: 1.0 })).type, 'status');
  for (const fields of [
    { v: 2 }, { v: true }, { name: '' }, { name: 7 }, { name: 'x'.repeat(65) }, { name: ' phone' }, { name: 'phone ' },
    { name: 'a\u0000b' }, { name: 'tab\there' }, { name: 'zero\u200bwidth' }, { name: 'private\ue000' }, { name: 'nb\u00a0space' },
    { name: 'line\u2028break' }, { name: '\ud800' }, { name: 'unassigned\u0378' },
    { roomSecret: RelayJSON.base64(secret.subarray(0, 31)) }, { roomSecret: RelayJSON.base64(secret).replace(/=$/, '') },
    { roomSecret: RelayJSON.base64(secret).replace(/\+/g, '-') }, { roomSecret: 'CAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAh=' },
    { roomSecret: null }, { registered: 'yes' }, { registered: null },
  ]) {
    refuses(status(fields), 'status');
  }
  refuses('{"status":{"name":"phone"}}', 'status');
  refuses('{"status":"phone"}', 'status');
  // Names of 64 code points, spaces inside, any script.
  for (const name of ['x'.repeat(64), 'Ada phone', '電話', '🙂'.repeat(64), 'e\u0301'.repeat(32)]) {
    assert.equal(parse(status({ name })).type, 'status', name);
  }
  refuses(status({ name: 'e\u0301'.repeat(33) }), 'status');
});

test('control messages: home holds at most 8 distinct home-network addresses', () => {
  const eight = Array.from({ length: 8 }, (_, i) => `"192.168.0.${i + 1}:4610"`).join(',');
  const parsed = parse(`{"home":[${eight}]}`);
  assert.ok(parsed.type === 'home' && parsed.addresses.length === 8);
  refuses(`{"home":[${eight},"10.0.0.1:1"]}`, 'home');
  for (const list of ['["192.168.0.1:4610","192.168.0.1:4610"]', '["[fd00::7]:4610","[fd00:0::7]:4610"]', '["127.0.0.1:4610"]',
    '["100.64.0.1:4610"]', '["8.8.8.8:53"]', '["[fe80::1]:4610"]', '["[fd7a:115c:a1e0::1]:4610"]', '["192.168.0.1"]', '[1]', '"x"',
    '["[::1]:4610"]']) {
    refuses(`{"home":${list}}`, 'home');
  }
});

test('home addresses: parsed and written as PeerGate does', () => {
  /** @type {[string, string][]} text, canonical text */
  const good = [
    ['192.168.1.20:4610', '192.168.1.20:4610'], ['10.0.0.1:1', '10.0.0.1:1'], ['172.31.255.255:65535', '172.31.255.255:65535'],
    ['169.254.3.1:4610', '169.254.3.1:4610'], ['[fd00::7]:4610', '[fd00::7]:4610'], ['[FD00:0:0::7]:04610', '[fd00::7]:4610'],
    ['[fc00:1:2:3:4:5:6:7]:1', '[fc00:1:2:3:4:5:6:7]:1'], ['[fd12:0:0:1:0:0:0:1]:9', '[fd12:0:0:1::1]:9'],
    ['[fd00:0:0:1:1:0:0:0]:9', '[fd00:0:0:1:1::]:9'],
    ['[::ffff:192.168.1.1]:4610', '192.168.1.1:4610'], ['[fdff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:1', '[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:1'],
  ];
  for (const [text, canonical] of good) assert.equal(HomeAddress.text(HomeAddress.parse(text)), canonical, text);
  const bad = [
    '', '192.168.1.20', '192.168.1.20:', '192.168.1.20:0', '192.168.1.20:65536', '192.168.1.20:123456', '192.168.1.20:+1',
    '192.168.01.20:1', '192.168.1:1', '192.168.1.256:1', '[192.168.1.20]:1', 'fd00::7:4610', '[fd00::7]', '[fd00::7]4610',
    '[fd00::7%eth0]:1', '[fe80::1]:1', '[febf::1]:1', '127.0.0.1:1', '[::1]:1', '100.64.0.1:1', '[fd7a:115c:a1e0::1]:1', '1.1.1.1:1',
    '[2001:db8::1]:1', '[::]:1', '0.0.0.0:1', '[fd00::7]:1 ', ' 10.0.0.1:1', '[' + 'f'.repeat(50) + ']:1', '[:fd00::1]:1',
    '[fd00::1:]:1', '[fd00:::1]:1', '[fd00::1::2]:1', '[fd00:12345::1]:1', '[fd00:1:2:3:4:5:6:7:8]:1', '[fd00:1:2:3:4:5:6:1.2.3.4]:1',
    '[fd00::01.2.3.4]:1', '10.0.0.1\u0000:1',
  ];
  for (const text of bad) assert.throws(() => HomeAddress.parse(text), HomeAddressError, JSON.stringify(text));
  // The link-local IPv4 range is home; the tailnet's v6 /48 inside fc00::/7 is not.
  assert.equal(HomeAddress.text(HomeAddress.parse('[fd7a:115c:a1e1::1]:2')), '[fd7a:115c:a1e1::1]:2');
});

test('IP addresses: written as inet_ntop writes them', () => {
  /** @type {[string, string][]} */
  const cases = [
    ['::', '::'], ['::1', '::1'], ['1::', '1::'], ['1:0:0:2:0:0:0:3', '1:0:0:2::3'], ['1:0:0:2:0:0:3:4', '1::2:0:0:3:4'],
    ['1:0:2:0:3:0:4:0', '1:0:2:0:3:0:4:0'], ['::ffff:1.2.3.4', '::ffff:1.2.3.4'], ['::1.2.3.4', '::1.2.3.4'],
    ['::0.0.0.1', '::1'], ['0:0:0:0:0:1:0:0', '::1:0:0'], ['FFFF::', 'ffff::'], ['0:0:1::', '0:0:1::'], ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
    ['10.20.30.40', '10.20.30.40'],
  ];
  for (const [text, canonical] of cases) {
    const address = IPAddress.parseNumeric(text);
    assert.ok(address !== null, text);
    assert.equal(IPAddress.text(address), canonical, text);
    const again = IPAddress.parseNumeric(canonical);
    assert.ok(again !== null && IPAddress.equal(again, address), `${canonical} parses back`);
  }
  for (const text of ['', ':', ':::', '1:2:3:4:5:6:7:8::', '::1:2:3:4:5:6:7:8', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.4 ', 'g::1', '1:2:3:4:5:6:7']) {
    assert.equal(IPAddress.parseNumeric(text), null, text);
  }
});

test('printable text: the device name rule and the board texts', () => {
  assert.equal(printableText('  a\u0000b\u200bc\u00a0d\u2029  ', 64), 'abc d');
  assert.equal(printableText('x'.repeat(70), 64), 'x'.repeat(64));
  assert.equal(printableText(' \u0301a', 64), ' \u0301a', 'a space that carries a mark is a character of its own, not trimmed');
  assert.equal(BoundedText.printable('line\nbreak\ttab', 64), 'line break tab');
  assert.equal(BoundedText.printable('é'.repeat(40), 64), 'é'.repeat(32));
  assert.equal(BoundedText.printable('ab' + '🇫🇷', 5), 'ab', 'a flag is not cut in half');
  assert.equal(BoundedText.optional('\u0000\u200b', 8), null);
});
