import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toHex, fromHex, toBase64Url, fromBase64Url, utf8, concatBytes, constantTimeEqual } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';

test('hex: round trip, either case in, lowercase out', () => {
  assert.equal(toHex(new Uint8Array(0)), '');
  assert.equal(toHex(Uint8Array.of(0, 1, 0xab, 0xff)), '0001abff');
  assert.deepEqual(fromHex('0001ABff'), Uint8Array.of(0, 1, 0xab, 0xff));
  assert.deepEqual(fromHex(''), new Uint8Array(0));
  const random = seededRandom(1);
  for (let length = 0; length < 70; length++) {
    const bytes = random.bytes(length);
    assert.deepEqual(fromHex(toHex(bytes)), bytes);
  }
});

test('hex: refuses odd lengths and anything but digits', () => {
  for (const bad of ['0', 'abc', '0g', 'g0', ' 00', '00 ', '0x00', '-1', 'zz', '\u0660\u0660']) {
    assert.throws(() => fromHex(bad), SyntaxError, bad);
  }
});

test('base64url: RFC 4648 section 10 vectors, unpadded', () => {
  const cases = [['', ''], ['f', 'Zg'], ['fo', 'Zm8'], ['foo', 'Zm9v'], ['foob', 'Zm9vYg'], ['fooba', 'Zm9vYmE'],
    ['foobar', 'Zm9vYmFy']];
  for (const [plain, encoded] of cases) {
    assert.equal(toBase64Url(utf8(plain)), encoded);
    assert.deepEqual(fromBase64Url(encoded), utf8(plain));
  }
  // The URL-safe alphabet's two characters.
  assert.equal(toBase64Url(Uint8Array.of(0xfb, 0xff, 0xbf)), '-_-_');
  assert.deepEqual(fromBase64Url('-_-_'), Uint8Array.of(0xfb, 0xff, 0xbf));
});

test('base64url: a 32-byte key is 43 characters (the pairing link rs)', () => {
  const rs = fromHex('a4e09292b651c278b9772c569f5fa9bb13d906b46ab68c9df9dc2b4409f8a209');
  assert.equal(toBase64Url(rs), 'pOCSkrZRwni5dyxWn1-puxPZBrRqtoyd-dwrRAn4ogk');
  assert.deepEqual(fromBase64Url('pOCSkrZRwni5dyxWn1-puxPZBrRqtoyd-dwrRAn4ogk'), rs);
  const random = seededRandom(2);
  for (let length = 0; length < 100; length++) {
    const bytes = random.bytes(length);
    const text = toBase64Url(bytes);
    assert.equal(text.length, Math.ceil((length * 4) / 3));
    assert.deepEqual(fromBase64Url(text), bytes);
  }
});

test('base64url: refuses padding, the standard alphabet, bad lengths and non-canonical text', () => {
  for (const bad of ['Zg==', 'Zm8=', 'Z', 'Zm9vY', '+/+/', 'ab/c', 'Zm9v ', ' Zm9v', 'Zm\n9v', 'Zh', 'Zm9', 'Zm9vYh']) {
    assert.throws(() => fromBase64Url(bad), SyntaxError, JSON.stringify(bad));
  }
  // 'Zh', 'Zm9' and 'Zm9vYh' carry set bits past their last byte: only 'Zg', 'Zm8', 'Zm9vYg' are canonical.
  assert.deepEqual(fromBase64Url('Zg'), utf8('f'));
  assert.deepEqual(fromBase64Url('Zm8'), utf8('fo'));
  assert.deepEqual(fromBase64Url('Zm9vYg'), utf8('foob'));
  // A key one character short or long is not a key.
  const rs = 'pOCSkrZRwni5dyxWn1-puxPZBrRqtoyd-dwrRAn4ogk';
  assert.throws(() => fromBase64Url(rs + 'A' + 'A'), SyntaxError);
  assert.equal(fromBase64Url(rs.slice(0, 42)).length, 31);
});

test('utf8 and concatBytes', () => {
  assert.deepEqual(utf8('herdr-remote/v1/pid:'), Uint8Array.from('herdr-remote/v1/pid:', (c) => c.charCodeAt(0)));
  assert.deepEqual(utf8('é€😀'), Uint8Array.of(0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80));
  assert.deepEqual(concatBytes(), new Uint8Array(0));
  assert.deepEqual(concatBytes(Uint8Array.of(1), new Uint8Array(0), Uint8Array.of(2, 3)), Uint8Array.of(1, 2, 3));
  const base = Uint8Array.of(9, 8, 7, 6);
  assert.deepEqual(concatBytes(base.subarray(1, 3), base.subarray(0, 1)), Uint8Array.of(8, 7, 9));
});

test('constantTimeEqual: equal, one bit different anywhere, different lengths', () => {
  const a = seededRandom(3).bytes(64);
  assert.equal(constantTimeEqual(a, a.slice()), true);
  assert.equal(constantTimeEqual(new Uint8Array(0), new Uint8Array(0)), true);
  for (let i = 0; i < a.length; i++) {
    for (let bit = 0; bit < 8; bit++) {
      const b = a.slice();
      b[i] ^= 1 << bit;
      assert.equal(constantTimeEqual(a, b), false);
    }
  }
  assert.equal(constantTimeEqual(a, a.subarray(0, 63)), false);
});
