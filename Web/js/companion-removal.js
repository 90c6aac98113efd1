// Unpairing a computer from the device: the room deleted at the relay with a signed delete (the
// computer sees its room gone and forgets the device), then what the device kept erased. The
// twin of herdr-remote's CompanionRemoval: best effort, and it says what happened.

import { RelayJSON } from './relay-json.js';
import { RelayJoinKey, RelayRequests } from './relay-join.js';
import { utf8 } from './bytes.js';

/** @typedef {import('./frame-pipe.js').RelayHTTP} RelayHTTP */
/** @typedef {import('./key-store.js').PairingRecord} PairingRecord */
/** @typedef {import('./key-store.js').KeyStore} KeyStore */

/** The relay's challenges are 32 bytes (RelayLimits.nonceSize). */
const CHALLENGE_SIZE = 32;

/**
 * Deletes `record`'s relay room (a fresh challenge from `/attest/challenge`, the delete
 * transcript signed with the room's join key, `POST /delete`), then removes the record from
 * `store` whatever the relay said; the words say what happened.
 * @param {PairingRecord} record
 * @param {RelayHTTP} http the relay's HTTP side at `record.relay`
 * @param {KeyStore} store
 * @returns {Promise<string>}
 */
export async function unpair(record, http, store) {
  let outcome;
  try {
    const key = record.joinKey === null
      ? await RelayJoinKey.fromRoomSecret(record.roomSecret)
      : new RelayJoinKey(record.joinKey.signingKey, record.joinKey.verifier);
    const asked = await http.post('/attest/challenge', record.id, '');
    const challenge = RelayJSON.bytes(RelayJSON.object(utf8(asked.text))?.challenge);
    if (asked.status !== 200 || challenge === null || challenge.length !== CHALLENGE_SIZE) {
      throw new Error(`the relay gave no challenge (${asked.status})`);
    }
    const signature = await key.signDelete(challenge, record.id, record.relay);
    const answer = await http.post('/delete', record.id, RelayRequests.delete(challenge, signature));
    const said = RelayJSON.object(utf8(answer.text));
    if (answer.status === 200 && said?.ok === true) {
      outcome = 'the relay room was deleted, so the computer knows the pairing is gone';
    } else if (said?.error === 'not established') {
      outcome = 'the relay room was never established, so there was nothing to delete';
    } else {
      throw new Error(typeof said?.error === 'string' ? said.error : `status ${answer.status}`);
    }
  } catch (error) {
    outcome = `the relay room could not be deleted (${error instanceof Error ? error.message : String(error)}); it expires after 30 days unused`;
  }
  await store.removePairing(record.id);
  return outcome;
}
