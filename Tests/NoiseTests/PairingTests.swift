import EndToEndChannel
import HerdrCrypto
import Noise
import RelayProtocol
import Testing

/// The pairing helpers of interop-facts §5. Besides the canonical-encoding vector from the facts,
/// the expected values were computed independently with Python (`struct`, `hashlib`, and the
/// `cryptography` package's HKDF and Ed25519), not with this code.
@Suite struct PairingTests {
    @Test func canonicalVector() {
        #expect(
            Hex.encode(Canonical.encode(domain: "test", fields: [[0x01, 0x02], Array("hi".utf8)]))
                == "0000000474657374000000020102000000026869")
        #expect(Hex.encode(Canonical.encode(domain: "", fields: [])) == "00000000")
        #expect(Hex.encode(Canonical.encode(domain: "d", fields: [[]])) == "000000016400000000")
    }

    @Test func roomName() {
        let rs = (0..<32).map { UInt8($0) }
        let room = RoomName.derive(staticPublicKey: rs, pid: "pid-1234")
        #expect(room == "f383d20dbd1b14a95a66a360d8d96c8c60129f970d99195bf36f84712a35c403")
        #expect(RoomName.isValid(room))
        #expect(!RoomName.isValid(room.uppercased()))
        #expect(!RoomName.isValid(String(room.dropLast())))
        #expect(RoomName.derive(staticPublicKey: rs, pid: "pid-1235") != room)
    }

    @Test func transcripts() {
        let origin = "https://relay.example"
        #expect(
            Hex.encode(
                RelayTranscript.join(
                    role: .device, nonce: [UInt8](repeating: 0xaa, count: 32), room: "roomname", origin: origin))
                == "00000011697465726d322d72656c61792d6a6f696e0000000101000000010200000020"
                + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                + "00000008726f6f6d6e616d650000001568747470733a2f2f72656c61792e6578616d706c65")
        #expect(RelayTranscript.join(role: .computer, nonce: [], room: "r", origin: "o")[25] == 0x01)
        #expect(
            Hex.encode(
                RelayTranscript.delete(challenge: [UInt8](repeating: 0xbb, count: 32), room: "roomname", origin: origin)
            )
                == "00000013697465726d322d72656c61792d64656c657465000000010100000020"
                + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                + "00000008726f6f6d6e616d650000001568747470733a2f2f72656c61792e6578616d706c65")
        #expect(
            Hex.encode(
                RelayTranscript.attestClientDataHash(challenge: [UInt8](repeating: 0xcc, count: 32), origin: origin))
                == "7ec663a5a7bdc29120b2b0ec92ca549dd75b1bd3ab0cad23614f10fc6d47a795")
    }

    @Test func joinKey() throws {
        let key = try RelayJoinKey(roomSecret: [UInt8](repeating: 0x42, count: 32))
        #expect(Hex.encode(key.signingKey.seed) == "9a87373edeadd21a910300e4c26dcc2ece2a8b2a8bd6e10fe9e6a248f6a0f820")
        #expect(Hex.encode(key.verifier.raw) == "4576b485be26221325429b1bfca04347d35547f8caea8e02706f6ed81cab0bb9")

        let nonce = SecureRandom.bytes(32)
        let signature = try key.signJoin(role: .computer, nonce: nonce, room: "room", origin: "https://o")
        #expect(
            key.verifier.isValidSignature(
                signature, for: RelayTranscript.join(role: .computer, nonce: nonce, room: "room", origin: "https://o")))
        // Bound to role, nonce, room and origin.
        #expect(
            !key.verifier.isValidSignature(
                signature, for: RelayTranscript.join(role: .device, nonce: nonce, room: "room", origin: "https://o")))
        #expect(
            !key.verifier.isValidSignature(
                signature, for: RelayTranscript.join(role: .computer, nonce: nonce, room: "room2", origin: "https://o"))
        )
        let deletion = try key.signDelete(challenge: nonce, room: "room", origin: "https://o")
        #expect(
            key.verifier.isValidSignature(
                deletion, for: RelayTranscript.delete(challenge: nonce, room: "room", origin: "https://o")))
        #expect(throws: CryptoError.self) { try RelayJoinKey(roomSecret: [1, 2, 3]) }
        #expect(RelayJoinKey.makeRoomSecret().count == 32)
    }

    @Test func sas() throws {
        let hash = (100..<132).map { UInt8($0) }
        #expect(try CompanionProfile.herdrRemote.sas(handshakeHash: hash) == "626614")
        #expect(try CompanionProfile.iTerm2.sas(handshakeHash: hash) == "324852")
        // Zero-padded to 6 digits.
        let leadingZero = hex("36ebe205bcdfc499a25e6923f4450fa8d48196ceb4fa0ce077d9d8ec4a36926d")
        #expect(try CompanionProfile.herdrRemote.sas(handshakeHash: leadingZero) == "007462")
    }

    @Test func prologueAndProtocol() {
        #expect(CompanionProfile.herdrRemote.prologue(pid: "abc") == Array("herdr-remote/v1/pid:abc".utf8))
        #expect(CompanionProfile.iTerm2.prologue(pid: "abc") == Array("iterm2-companion/v1/pid:abc".utf8))
        #expect(CompanionProfile.protocolName == "Noise_XK_25519_ChaChaPoly_BLAKE2s")
    }

    /// Both ends of a real handshake derive the same SAS; a handshake with another pid does not
    /// even complete.
    @Test func bothSidesDeriveTheSameSAS() throws {
        let phone = KeyPair.generate()
        let mac = KeyPair.generate()
        let profile = CompanionProfile.herdrRemote
        var initiator = try profile.initiatorHandshake(pid: "p1", localStatic: phone, remoteStatic: mac.publicKey)
        var responder = try profile.responderHandshake(pid: "p1", localStatic: mac)
        try handshake(&initiator, &responder)
        let code = try profile.sas(handshakeHash: initiator.handshakeHash)
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        #expect(try profile.sas(handshakeHash: responder.handshakeHash) == code)
        #expect(responder.remoteStaticPublicKey == phone.publicKey)

        var wrongPid = try profile.initiatorHandshake(pid: "p2", localStatic: phone, remoteStatic: mac.publicKey)
        var responder2 = try profile.responderHandshake(pid: "p1", localStatic: mac)
        #expect(throws: NoiseError(.decryptionFailed, "")) { try responder2.readMessage(wrongPid.writeMessage()) }
    }
}
