// What the device keeps (docs/companion.md "What each side keeps"): its Noise static key pair,
// and for each computer it paired with, the pairing: relay origin, `rs`, `pid`, the room secret,
// its join key, whether the room is registered, the name this device paired under, the home
// addresses the computer last said, when the relay road last worked. Behind a small interface:
// IndexedDB in a browser (the private keys as non-extractable CryptoKeys, which IndexedDB keeps as
// they are), memory in the tests. Nothing here logs, and a record's secrets never reach a message.
// The twin of the device's companion_key, hosts.json and secrets.json.

import { generateKeyPair } from './x25519.js';

/** @typedef {import('./x25519.js').KeyPair} KeyPair */

/**
 * One computer this device paired with. `id` is the room (one pairing, one room).
 * @typedef {object} PairingRecord
 * @property {string} id the room: lowercase hex, 64 digits
 * @property {string} name how the person calls it (the computer's name, else the relay's host)
 * @property {string} relay the relay's origin, `https://host[:port]`
 * @property {Uint8Array} computerKey the computer's static public key `rs`, pinned
 * @property {string} pairingID the `pid` as the code spelled it
 * @property {Uint8Array} roomSecret
 * @property {{signingKey: CryptoKey, verifier: Uint8Array} | null} joinKey the room's join key, non-extractable
 * @property {boolean} registered whether the relay took the room's verifier
 * @property {string} deviceName the name this device paired under, sent on every connection
 * @property {string | null} session the herdr session the code named
 * @property {string[]} home where the computer's home door listens, as it last said
 * @property {number} pairedAt Unix seconds
 * @property {number | null} relayLastWorked Unix seconds
 */

/**
 * @typedef {object} KeyStore
 * @property {() => Promise<KeyPair>} deviceKey the device's static X25519 key pair, made at first use
 * @property {() => Promise<PairingRecord[]>} pairings
 * @property {(id: string) => Promise<PairingRecord | null>} pairing
 * @property {(record: PairingRecord) => Promise<void>} savePairing adds or replaces
 * @property {(id: string, changes: Partial<PairingRecord>) => Promise<PairingRecord | null>} updatePairing
 * @property {(id: string) => Promise<void>} removePairing
 */

/**
 * A copy whose arrays the caller may not change in the store.
 * @param {PairingRecord} record
 * @returns {PairingRecord}
 */
function copy(record) {
  return {
    ...record, computerKey: record.computerKey.slice(), roomSecret: record.roomSecret.slice(), home: record.home.slice(),
    joinKey: record.joinKey === null ? null : { signingKey: record.joinKey.signingKey, verifier: record.joinKey.verifier.slice() },
  };
}

/** The store of the tests: everything in memory. @implements {KeyStore} */
export class MemoryKeyStore {
  /** @type {Promise<KeyPair> | null} */
  #key = null;
  /** @type {Map<string, PairingRecord>} */
  #pairings = new Map();

  deviceKey() {
    this.#key ??= generateKeyPair();
    return this.#key;
  }

  async pairings() {
    return Array.from(this.#pairings.values(), copy);
  }

  /** @param {string} id */
  async pairing(id) {
    const record = this.#pairings.get(id);
    return record === undefined ? null : copy(record);
  }

  /** @param {PairingRecord} record */
  async savePairing(record) {
    this.#pairings.set(record.id, copy(record));
  }

  /** @param {string} id @param {Partial<PairingRecord>} changes */
  async updatePairing(id, changes) {
    const record = this.#pairings.get(id);
    if (record === undefined) return null;
    const updated = copy({ ...record, ...changes, id });
    this.#pairings.set(id, updated);
    return copy(updated);
  }

  /** @param {string} id */
  async removePairing(id) {
    this.#pairings.delete(id);
  }
}

const DATABASE = 'herdr-remote';
const VERSION = 1;
const DEVICE = 'device';
const PAIRINGS = 'pairings';

/**
 * @template T
 * @param {IDBRequest<T>} request
 * @returns {Promise<T>}
 */
function settled(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB refused the request'));
  });
}

/**
 * The browser's store: one IndexedDB database (`herdr-remote`) of the page's origin, with the
 * device key and one record a pairing. Not for Node (there is no IndexedDB there).
 * @implements {KeyStore}
 */
export class IndexedDBKeyStore {
  /** @type {Promise<IDBDatabase> | null} */
  #database = null;

  /** @returns {Promise<IDBDatabase>} */
  #open() {
    this.#database ??= new Promise((resolve, reject) => {
      const request = indexedDB.open(DATABASE, VERSION);
      request.onupgradeneeded = () => {
        const database = request.result;
        if (!database.objectStoreNames.contains(DEVICE)) database.createObjectStore(DEVICE);
        if (!database.objectStoreNames.contains(PAIRINGS)) database.createObjectStore(PAIRINGS, { keyPath: 'id' });
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error ?? new Error('IndexedDB could not be opened (a private window may refuse it)'));
    });
    return this.#database;
  }

  /**
   * @template T
   * @param {string} store
   * @param {IDBTransactionMode} mode
   * @param {(objects: IDBObjectStore) => IDBRequest<T>} body
   * @returns {Promise<T>}
   */
  async #request(store, mode, body) {
    const database = await this.#open();
    const transaction = database.transaction(store, mode);
    const complete = new Promise((resolve, reject) => {
      transaction.oncomplete = () => resolve(undefined);
      transaction.onerror = () => reject(transaction.error ?? new Error('IndexedDB refused the transaction'));
      transaction.onabort = () => reject(transaction.error ?? new Error('IndexedDB aborted the transaction'));
    });
    const result = await settled(body(transaction.objectStore(store)));
    await complete;
    return result;
  }

  async deviceKey() {
    const kept = /** @type {KeyPair | undefined} */ (await this.#request(DEVICE, 'readonly', (objects) => objects.get('static')));
    if (kept !== undefined) return kept;
    const made = await generateKeyPair();
    await this.#request(DEVICE, 'readwrite', (objects) => objects.add(made, 'static'));
    return made;
  }

  async pairings() {
    return /** @type {PairingRecord[]} */ (await this.#request(PAIRINGS, 'readonly', (objects) => objects.getAll()));
  }

  /** @param {string} id */
  async pairing(id) {
    return /** @type {PairingRecord | undefined} */ (await this.#request(PAIRINGS, 'readonly', (objects) => objects.get(id))) ?? null;
  }

  /** @param {PairingRecord} record */
  async savePairing(record) {
    await this.#request(PAIRINGS, 'readwrite', (objects) => objects.put(record));
  }

  /** @param {string} id @param {Partial<PairingRecord>} changes */
  async updatePairing(id, changes) {
    const record = await this.pairing(id);
    if (record === null) return null;
    const updated = { ...record, ...changes, id };
    await this.savePairing(updated);
    return updated;
  }

  /** @param {string} id */
  async removePairing(id) {
    await this.#request(PAIRINGS, 'readwrite', (objects) => objects.delete(id));
  }
}
