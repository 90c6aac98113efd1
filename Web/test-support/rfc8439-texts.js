// Plaintexts of RFC 8439's test vectors, shared by the ChaCha20, Poly1305 and AEAD tests.

/** Sections 2.4.2 and 2.8.2. */
export const SUNSCREEN =
  "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";

/** Appendix A.2 #2 and A.3 #2, #3 (375 bytes). */
export const IETF_CONTRIBUTION =
  'Any submission to the IETF intended by the Contributor for publication as all or part of an IETF ' +
  'Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an ' +
  '"IETF Contribution". Such statements include oral statements in IETF sessions, as well as written and ' +
  'electronic communications made at any time or place, which are addressed to';

/** Appendix A.2 #3 and A.3 #4. */
export const JABBERWOCKY =
  "'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the borogoves,\n" +
  'And the mome raths outgrabe.';

/**
 * The key 00 01 02 … 1f (sections 2.3.2, 2.4.2) or 80 81 … 9f (sections 2.6.2, 2.8.2).
 * @param {number} first
 * @returns {Uint8Array}
 */
export function countingKey(first) {
  return Uint8Array.from({ length: 32 }, (_, i) => first + i);
}
