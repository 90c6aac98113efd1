// The companion code in both forms (herdr://companion?… and the web client's https://…/#…):
// every rule of docs/companion.md "The code" with its boundaries, as CompanionCodeTests checks
// the Swift twin, the relay URL's rules as RelayEndpointTests, and the worked example's code.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompanionCode } from '../js/companion-code.js';
import { HerdrLink, PairingCodeError } from '../js/herdr-link.js';
import { RelayEndpoint, RelayEndpointError } from '../js/relay-endpoint.js';
import { RoomName } from '../js/relay-join.js';
import { HomeAddress } from '../js/home-address.js';
import { RelayJSON } from '../js/relay-json.js';
import { toBase64Url, toHex } from '../js/bytes.js';

const NOW = 1_800_000_000;
const RS = new Uint8Array(32).fill(0x11);
const PID = Uint8Array.from({ length: 16 }, (_, i) => i);

/**
 * The link with fields replaced (or removed, with null), as CompanionCodeTests.link.
 * @param {Record<string, string | null>} [changes]
 * @param {string} [extra]
 */
function link(changes = {}, extra = '') {
  /** @type {[string, string][]} */
  let fields = [
    ['v', '1'], ['proto', 'Noise_XK_25519_ChaChaPoly_BLAKE2s'], ['rs', toBase64Url(RS)], ['pid', toBase64Url(PID)],
    ['relay', 'https://relay.example.com'], ['n', 'studio'],
  ];
  for (const [key, value] of Object.entries(changes)) {
    fields = fields.filter(([known]) => known !== key);
    if (value !== null) fields.push([key, value]);
  }
  return HerdrLink.url('companion', fields) + extra;
}

/**
 * The same code as the web client's address.
 * @param {string} herdrLink
 */
const web = (herdrLink) => 'https://relay.example.com/#' + herdrLink.slice('herdr://companion?'.length);

/** @param {string} text */
const parse = (text) => CompanionCode.parse(text, NOW);

/**
 * The error `fn` throws: a PairingCodeError.
 * @param {() => unknown} fn
 * @returns {PairingCodeError}
 */
function refusal(fn) {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof PairingCodeError, `a PairingCodeError, not ${error}`);
    return error;
  }
  throw new Error('no error was thrown');
}

test('round trip in both forms; the room, the pid text, escaping as the Swift writer does', () => {
  const code = CompanionCode.make({
    staticPublicKey: RS, pairingID: PID, relay: RelayEndpoint.parse('https://relay.example.com'), computerName: "James's Mac",
    session: 'work', expiresAt: NOW + 120,
  });
  const url = CompanionCode.url(code);
  assert.ok(url.startsWith('herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs='));
  assert.ok(url.includes('&relay=https:%2F%2Frelay.example.com&'));
  assert.ok(url.includes('&n=James%27s%20Mac&s=work&x=1800000120'));
  assert.deepEqual(parse(url), code);
  const address = CompanionCode.webAddress(code);
  assert.equal(address, 'https://relay.example.com/#' + url.slice('herdr://companion?'.length));
  assert.equal(CompanionCode.query(code), url.slice('herdr://companion?'.length));
  assert.deepEqual(parse(address), code);
  assert.equal(code.pidText.length, 22);
  assert.equal(code.room, RoomName.derive(RS, code.pidText));
  assert.ok(RoomName.isValid(code.room));
  assert.deepEqual(parse(CompanionCode.webAddress(code, 'http://127.0.0.1:8787/herdr/')), code, 'a page under a path');
});

test("docs/companion.md's worked example: its code, the room and the prologue's pid", () => {
  const text = 'herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs=pOCSkrZRwni5dyxWn1-puxPZBrRqtoyd-dwrRAn4ogk' +
    '&pid=BwcHBwcHBwcHBwcHBwcHBw&relay=https:%2F%2Frelay.example.com&n=studio&home=%5Bfd00::7%5D:4610&x=1798761720';
  const code = CompanionCode.parse(text, 1798761600);
  assert.equal(toHex(code.staticPublicKey), 'a4e09292b651c278b9772c569f5fa9bb13d906b46ab68c9df9dc2b4409f8a209');
  assert.equal(code.pidText, 'BwcHBwcHBwcHBwcHBwcHBw');
  assert.equal(code.room, '9fdd70df39b995dbb0004306a94b7384642c383fa80619baf1c12cf51267ea86');
  assert.equal(code.relay?.origin, 'https://relay.example.com');
  assert.equal(code.computerName, 'studio');
  assert.deepEqual(code.home.map(HomeAddress.text), ['[fd00::7]:4610']);
  assert.equal(code.expiresAt, 1798761720);
  assert.equal(CompanionCode.url(code), text, 'written back byte for byte');
  assert.deepEqual(CompanionCode.parse(CompanionCode.webAddress(code), 1798761600), code);
});

test('the relay is reduced to its origin; anything else in it is refused, naming relay', () => {
  for (const [given, origin] of [
    ['https://Relay.Example.COM', 'https://relay.example.com'], ['https://relay.example.com:443', 'https://relay.example.com'],
    ['https://relay.example.com:8443/', 'https://relay.example.com:8443'], ['http://127.0.0.1:8787', 'http://127.0.0.1:8787'],
    ['https://[2001:db8::1]:444', 'https://[2001:db8::1]:444'], ['https://xn--bcher-kva.example', 'https://xn--bcher-kva.example'],
  ]) {
    assert.equal(parse(link({ relay: given })).relay?.origin, origin, given);
    assert.equal(parse(web(link({ relay: given }))).relay?.origin, origin, `${given}, web form`);
  }
  for (const bad of ['https://user@relay.example.com', 'https://relay.example.com/path', 'https://relay.example.com?q=1',
    'https://relay.example.com#f', 'http://relay.example.com', 'ftp://relay.example.com', 'relay.example.com',
    'https://bücher.example', 'https://relay.example.com:0', 'https://relay.example.com:65536', '']) {
    for (const text of [link({ relay: bad }), web(link({ relay: bad }))]) {
      const error = refusal(() => parse(text));
      assert.equal(error.field, 'relay', bad);
    }
  }
});

test('each field rule names the field, in both forms', () => {
  /** @type {[Record<string, string | null>, string, string][]} */
  const cases = [
    [{ v: '2' }, 'v', 'unsupportedVersion'], [{ v: null }, 'v', 'missingField'],
    [{ proto: 'Noise_XX_25519_ChaChaPoly_BLAKE2s' }, 'proto', 'unsupportedVersion'], [{ proto: null }, 'proto', 'missingField'],
    [{ rs: toBase64Url(new Uint8Array(31).fill(1)) }, 'rs', 'invalidField'],
    [{ rs: toBase64Url(new Uint8Array(33).fill(1)) }, 'rs', 'invalidField'],
    [{ rs: RelayJSON.base64(new Uint8Array(32).fill(0xfb)) }, 'rs', 'invalidField'],
    [{ rs: toBase64Url(new Uint8Array(32).fill(1)) + '=' }, 'rs', 'invalidField'],
    [{ rs: toBase64Url(new Uint8Array(32).fill(1)).slice(0, 42) + 'l' }, 'rs', 'invalidField'], // spare bits set
    [{ rs: '' }, 'rs', 'invalidField'],
    [{ pid: toBase64Url(new Uint8Array(15).fill(1)) }, 'pid', 'invalidField'],
    [{ pid: toBase64Url(new Uint8Array(17).fill(1)) }, 'pid', 'invalidField'],
    [{ pid: toBase64Url(new Uint8Array(16).fill(0xf8)) }, 'pid', 'invalidField'], // starts with -
    [{ pid: null }, 'pid', 'missingField'], [{ relay: null }, 'relay', 'missingField'], [{ n: null }, 'n', 'missingField'],
    [{ n: 'n'.repeat(65) }, 'n', 'invalidField'], [{ n: 'é'.repeat(65) }, 'n', 'invalidField'],
    [{ s: 'a b' }, 's', 'invalidField'], [{ s: '..' }, 's', 'invalidField'], [{ s: '.' }, 's', 'invalidField'],
    [{ s: '' }, 's', 'invalidField'], [{ s: 's'.repeat(65) }, 's', 'invalidField'],
    [{ x: '1799999999' }, 'x', 'expired'], [{ x: '1800000000' }, 'x', 'expired'], [{ x: '1800000901' }, 'x', 'invalidField'],
    [{ x: 'soon' }, 'x', 'invalidField'], [{ x: '' }, 'x', 'invalidField'], [{ x: '-1' }, 'x', 'invalidField'],
    [{ x: '1234567890123' }, 'x', 'invalidField'], [{ x: '1800000100.5' }, 'x', 'invalidField'],
    [{ home: '127.0.0.1:4610' }, 'home', 'invalidField'], [{ home: '100.64.1.2:4610' }, 'home', 'invalidField'],
    [{ home: '8.8.8.8:1' }, 'home', 'invalidField'], [{ home: '[fe80::1]:4610' }, 'home', 'invalidField'],
    [{ home: '169.254.3.1' }, 'home', 'invalidField'], [{ home: 'x' }, 'home', 'invalidField'],
    [{ home: '169.254.3.1:1,169.254.3.1:1' }, 'home', 'invalidField'], [{ home: '169.254.3.1:1,' }, 'home', 'invalidField'],
    [{ home: Array.from({ length: 9 }, (_, i) => `10.0.0.${i + 1}:1`).join(',') }, 'home', 'invalidField'],
  ];
  for (const [changes, field, kind] of cases) {
    for (const text of [link(changes), web(link(changes))]) {
      const error = refusal(() => parse(text));
      assert.equal(error.field, field, JSON.stringify(changes));
      assert.equal(error.kind, kind, `${JSON.stringify(changes)}: ${error.message}`);
    }
  }
});

test('boundaries that pass: 64 characters of name, an empty name, 64 of session, 900 s ahead, home lists', () => {
  assert.equal(parse(link({ n: 'n'.repeat(64) })).computerName.length, 64);
  assert.equal(parse(link({ n: '👩‍👩‍👧‍👦'.repeat(64) })).computerName, '👩‍👩‍👧‍👦'.repeat(64), 'characters, not code units');
  assert.equal(parse(link({ n: '' })).computerName, '');
  assert.equal(parse(link({ s: 's'.repeat(64) })).session, 's'.repeat(64));
  assert.equal(parse(link({ x: '1800000900' })).expiresAt, NOW + 900);
  assert.equal(parse(link({ x: '1800000001' })).expiresAt, NOW + 1);
  assert.equal(parse(link()).expiresAt, null);
  assert.equal(parse(link()).session, null);
  const eight = Array.from({ length: 8 }, (_, i) => `10.0.0.${i + 1}:4610`).join(',');
  assert.equal(parse(link({ home: eight })).home.length, 8);
  const later = parse(link({ home: '[fd00::1]:4242', cmd: 'rm -rf /' }));
  assert.equal(later.relay?.origin, 'https://relay.example.com', 'unknown keys are ignored, never a command');
  assert.deepEqual(parse(link({ home: '[fd00::1]:4242' })).home.map(HomeAddress.text), ['[fd00::1]:4242']);
  assert.doesNotThrow(() => parse(link().replace('herdr://companion', 'HERDR://Companion')));
  assert.doesNotThrow(() => parse(web(link()).replace('https://relay.example.com', 'HTTPS://Relay.Example.com')));
  assert.equal(parse(link().replace('n=studio', 'n=a+b%20c')).computerName, 'a+b c', '+ is taken as it is, %20 is a space');
  const homeOnly = parse(link({ relay: null, home: '169.254.3.1:4610' }));
  assert.equal(homeOnly.relay, null, 'a code of the home network alone parses; pairing from a browser refuses it');
});

test('the link itself follows the v1 rules', () => {
  const good = link();
  const duplicate = refusal(() => parse(good + '&pid=' + toBase64Url(PID)));
  assert.deepEqual([duplicate.kind, duplicate.field], ['duplicateField', 'pid']);
  for (const bad of [
    good.replace('companion?', 'companion/x?'), good.replace('companion?', 'companion/?'), good + '#frag',
    good.replace('herdr://companion', 'herdr://user@companion'), good.replace('herdr://companion', 'herdr://companion:80'),
    good.replace('n=studio', 'n=stu dio'), good.replace('n=studio', 'n=stu\tdio'), good.replace('n=studio', 'n=stu\u007fdio'),
    good.replace('n=studio', 'n=%zz'), good.replace('n=studio', 'n=%F'), good.replace('n=studio', 'n=%FF'),
    good.replace('n=studio', 'n=%C3%28'), 'https://companion?v=1', good.replace('herdr://companion', 'herdr://pair'),
    good.replace('herdr://', 'herdr:/'), good.replace('herdr://', 'herd://'), 'herdr://companion',
  ]) {
    assert.throws(() => parse(bad), PairingCodeError, bad);
  }
  assert.equal(refusal(() => parse('herdr://pair?v=1')).kind, 'malformed');
  assert.equal(refusal(() => parse('hello')).kind, 'notAPairingCode');
  const long = good + '&pad=' + 'x'.repeat(8192 - good.length - 5);
  assert.equal(long.length, 8192);
  assert.doesNotThrow(() => parse(long));
  assert.equal(refusal(() => parse(long + 'x')).kind, 'tooLong');
  assert.equal(refusal(() => parse(good.replace('n=studio', 'n=' + 'é'.repeat(4100)))).kind, 'tooLong', 'bytes, not characters');
  assert.equal(HerdrLink.host(good), 'companion');
  assert.equal(HerdrLink.host('HERDR://Pair?v=1'), 'pair');
  assert.equal(HerdrLink.host('https://companion?v=1'), null);
});

test('the https form: the same checks; without a code after # the address says it carries none', () => {
  const code = web(link());
  const query = code.split('#')[1];
  assert.doesNotThrow(() => parse(code));
  for (const [text, kind] of [
    ['https://relay.example.com/', 'notAPairingCode'], ['https://relay.example.com', 'notAPairingCode'],
    ['https://relay.example.com/#', 'notAPairingCode'], ['HTTP://127.0.0.1:8787/', 'notAPairingCode'],
    ['https://relay.example.com/?v=1', 'notAPairingCode'], ['https://relay.example.com/?x#' + query, 'malformed'],
    ['http://relay.example.com/#' + query, 'malformed'], ['https://user@relay.example.com/#' + query, 'malformed'],
    ['https://relay.example.com:0/#' + query, 'malformed'], ['https:relay.example.com#v=1', 'notAPairingCode'],
    ['https://#' + query, 'malformed'], ['https://rel ay.example.com/#' + query, 'malformed'],
    [code + '#again', 'malformed'], [code.replace('#', '# '), 'malformed'], [code.replace('n=studio', 'n=stu\ndio'), 'malformed'],
    [code + '&pid=' + toBase64Url(PID), 'duplicateField'],
    ['https://relay.example.com/' + 'p'.repeat(1024) + '#' + query, 'tooLong'],
    ['https://relay.example.com/#' + query + '&pad=' + 'x'.repeat(8192), 'tooLong'],
  ]) {
    const error = refusal(() => parse(text));
    assert.equal(error.kind, kind, `${text.slice(0, 60)}: ${error.message}`);
  }
  assert.equal(refusal(() => parse('https://relay.example.com/')).message,
    'This address carries no pairing code (nothing after #): scan the code herdr-host pair shows');
  // The address before # may be up to 1024 bytes; the query after it is measured as the link it is.
  const longest = 'https://relay.example.com/' + 'p'.repeat(1024 - 26);
  assert.doesNotThrow(() => parse(longest + '#' + query));
  const padded = link() + '&pad=' + 'x'.repeat(8192 - link().length - 5);
  assert.doesNotThrow(() => parse(web(padded)));
  assert.equal(refusal(() => parse(web(padded + 'x'))).kind, 'tooLong');
  assert.doesNotThrow(() => parse(code.replace('https://relay.example.com/', 'https://other.example:8443/pair/')),
    'a web client served elsewhere');
  assert.doesNotThrow(() => parse(code.replace('https://relay.example.com/', 'http://localhost:8080/')));
  assert.throws(() => CompanionCode.webAddress(parse(link({ relay: null, home: '169.254.3.1:4610' }))), RangeError);
  assert.ok(CompanionCode.isWebAddress('HTTPS://x') && CompanionCode.isWebAddress('http://x') && !CompanionCode.isWebAddress('herdr://x'));
});

test("the web client's address as herdr-host pair --web-client takes it", () => {
  assert.equal(CompanionCode.webClientAddress('https://relay.example.com'), 'https://relay.example.com/');
  assert.equal(CompanionCode.webClientAddress('https://relay.example.com:8443/herdr/'), 'https://relay.example.com:8443/herdr/');
  assert.equal(CompanionCode.webClientAddress('http://127.0.0.1:8787'), 'http://127.0.0.1:8787/');
  assert.equal(CompanionCode.webClientAddress('http://[::1]:8787/x'), 'http://[::1]:8787/x');
  for (const [bad, why] of [
    ['http://relay.example.com', 'http:// only for a loopback host'], ['https://u@relay.example.com', 'user, a query'],
    ['https://relay.example.com/?q', 'user, a query'], ['https://relay.example.com/#f', 'user, a query'],
    ['ftp://relay.example.com', 'https://host'], ['https://', 'https://host'], ['https://relay example', 'https://host'],
    ['https://relay.example.com/' + 'p'.repeat(1024), '1024 bytes'], ['https://relay.example.com:99999', 'https://host'],
  ]) {
    assert.throws(() => CompanionCode.webClientAddress(bad),
      (error) => error instanceof PairingCodeError && error.kind === 'invalidField' && error.message.includes(why), bad);
  }
});

test('relay URLs: accepted and reduced, or refused saying why', () => {
  for (const [url, origin, host, port, tls] of /** @type {[string, string, string, number, boolean][]} */ ([
    ['https://relay.test', 'https://relay.test', 'relay.test', 443, true],
    ['https://relay.test/', 'https://relay.test', 'relay.test', 443, true],
    ['HTTPS://Relay.Example.COM', 'https://relay.example.com', 'relay.example.com', 443, true],
    ['https://relay.test:443', 'https://relay.test', 'relay.test', 443, true],
    ['https://relay.test:8443/', 'https://relay.test:8443', 'relay.test', 8443, true],
    ['https://203.0.113.7:444', 'https://203.0.113.7:444', '203.0.113.7', 444, true],
    ['https://[2001:DB8::1]', 'https://[2001:db8::1]', '2001:db8::1', 443, true],
    ['https://[2001:db8::1]:8443', 'https://[2001:db8::1]:8443', '2001:db8::1', 8443, true],
    ['http://127.0.0.1:8787', 'http://127.0.0.1:8787', '127.0.0.1', 8787, false],
    ['http://127.1.2.3', 'http://127.1.2.3', '127.1.2.3', 80, false],
    ['http://localhost:80/', 'http://localhost', 'localhost', 80, false],
    ['http://[::1]:9000', 'http://[::1]:9000', '::1', 9000, false],
  ])) {
    const endpoint = RelayEndpoint.parse(url);
    assert.deepEqual([endpoint.origin, endpoint.host, endpoint.port, endpoint.usesTLS], [origin, host, port, tls], url);
  }
  for (const [url, why] of [
    ['relay.test', 'scheme'], ['wss://relay.test', 'scheme'], ['ftp://relay.test', 'scheme'], ['https://', 'host is missing'],
    ['https://:443', 'host is missing'], ['https://user@relay.test', 'user info'], ['https://user:pw@relay.test', 'user info'],
    ['https://relay.test/room', 'path'], ['https://relay.test//', 'path'], ['https://relay.test?x=1', 'query'],
    ['https://relay.test/?', 'query'], ['https://relay.test#top', 'fragment'], ['https://relay.test:', 'port'],
    ['https://relay.test:0', 'port'], ['https://relay.test:65536', 'port'], ['https://relay.test:44x', 'port'],
    ['https://relay.test:000443', 'port'], ['https://relay test', 'printable ASCII'], ['https://relay_test', 'letters, digits'],
    ['https://[2001:db8::1', 'unterminated'], ['https://[relay.test]', 'IPv6'], ['https://[2001:db8::1]x', 'junk'],
    ['http://relay.test', 'loopback'], ['http://192.168.1.2:8787', 'loopback'], ['http://[::2]', 'loopback'],
    ['https://.relay.test', 'bad host'], ['https://relay..test', 'bad host'],
  ]) {
    assert.throws(() => RelayEndpoint.parse(url),
      (error) => error instanceof RelayEndpointError && error.kind === 'invalidEndpoint' && error.message.includes(why) &&
        error.message.includes(url), url);
  }
  const endpoint = RelayEndpoint.parse('https://relay.test:8443');
  assert.equal(RelayEndpoint.webSocketURL(endpoint, 'ab'.repeat(32)), `wss://relay.test:8443/?room=${'ab'.repeat(32)}`);
  assert.equal(RelayEndpoint.webSocketURL(RelayEndpoint.parse('http://127.0.0.1:8787'), 'r'), 'ws://127.0.0.1:8787/?room=r');
});
