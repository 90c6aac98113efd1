// The device's key store in memory (the IndexedDB one is the browser's, with the same
// interface): one static key, made once and never extractable; pairings kept, updated and
// removed, each copy apart from what the store holds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKeyStore } from '../js/key-store.js';
import { RelayJoinKey } from '../js/relay-join.js';
import { publicKeyOf } from '../js/x25519.js';

test('the device key is made once, its private half a non-extractable CryptoKey', async () => {
  const store = new MemoryKeyStore();
  const [first, second] = await Promise.all([store.deviceKey(), store.deviceKey()]);
  assert.equal(first, second);
  assert.equal(first.privateKey.extractable, false);
  assert.deepEqual(await publicKeyOf(first.privateKey), first.publicKey);
  await assert.rejects(crypto.subtle.exportKey('pkcs8', first.privateKey));
});

test('pairings: saved, read as copies, updated, removed', async () => {
  const store = new MemoryKeyStore();
  const roomSecret = new Uint8Array(32).fill(8);
  const joinKey = await RelayJoinKey.fromRoomSecret(roomSecret);
  const record = {
    id: 'ab'.repeat(32), name: 'studio', relay: 'https://relay.example.com', computerKey: new Uint8Array(32).fill(1),
    pairingID: 'BwcHBwcHBwcHBwcHBwcHBw', roomSecret, joinKey: { signingKey: joinKey.signingKey, verifier: joinKey.verifier },
    registered: false, deviceName: 'phone', session: null, home: ['[fd00::7]:4610'], pairedAt: 1798761600, relayLastWorked: null,
  };
  await store.savePairing(record);
  const read = await store.pairing(record.id);
  assert.deepEqual(read, record);
  assert.ok(read !== null);
  read.roomSecret.fill(0);
  read.home.push('x');
  assert.deepEqual((await store.pairing(record.id))?.roomSecret, roomSecret, 'a copy: the store keeps its own');
  const updated = await store.updatePairing(record.id, { registered: true, relayLastWorked: 1798761700 });
  assert.equal(updated?.registered, true);
  assert.equal((await store.pairings()).length, 1);
  assert.equal(await store.updatePairing('cd'.repeat(32), { registered: true }), null);
  await store.removePairing(record.id);
  assert.deepEqual(await store.pairings(), []);
  assert.equal(await store.pairing(record.id), null);
});
