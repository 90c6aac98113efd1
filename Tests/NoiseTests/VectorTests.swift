import Foundation
import HerdrCrypto
import Noise
import Testing

/// Every vector in ../shared/vectors/noise-xk-vectors.json (cacophony), message by message: each
/// handshake message as written by one side and read by the other, the handshake hash, then the
/// transport messages. Handshake and transport messages alternate, the initiator first.
@Suite struct VectorTests {
    struct File: Decodable {
        let vectors: [Vector]
    }

    struct Vector: Decodable {
        struct Message: Decodable {
            let payload: String
            let ciphertext: String
        }

        let protocolName: String
        let initPrologue: String
        let initStatic: String
        let initEphemeral: String
        let initRemoteStatic: String
        let respPrologue: String
        let respStatic: String
        let respEphemeral: String
        let handshakeHash: String
        let messages: [Message]
    }

    static func load() throws -> [Vector] {
        let data = try Data(contentsOf: TestFiles.shared("vectors/noise-xk-vectors.json"))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(File.self, from: data).vectors
    }

    /// The copy in `Vectors/` (used when no `shared/` is above the checkout) is the shared file.
    @Test func ownCopyMatchesTheSharedFile() throws {
        let copy = TestFiles.testDirectory.appendingPathComponent("Vectors/noise-xk-vectors.json")
        let ours = try Data(contentsOf: copy)
        #expect(!ours.isEmpty)
        if let shared = TestFiles.sharedAbove("vectors/noise-xk-vectors.json") {
            #expect(try Data(contentsOf: shared) == ours)
        }
    }

    @Test func fileHoldsTheFourXKVectors() throws {
        let names = try Self.load().map(\.protocolName)
        #expect(
            Set(names) == [
                "Noise_XK_25519_ChaChaPoly_BLAKE2s", "Noise_XK_25519_ChaChaPoly_SHA256",
                "Noise_XK_25519_ChaChaPoly_BLAKE2b",
                "Noise_XK_25519_ChaChaPoly_SHA512",
            ])
    }

    @Test func blake2s() throws { try run(HashBLAKE2s.self) }
    @Test func sha256() throws { try run(HashSHA256.self) }
    @Test func blake2b() throws { try run(HashBLAKE2b.self) }
    @Test func sha512() throws { try run(HashSHA512.self) }

    func run<H: NoiseHash>(_ hash: H.Type) throws {
        typealias State = HandshakeState<CipherChaChaPoly, H>
        let name = State.protocolName(for: .xk)
        let vector = try #require(try Self.load().first { $0.protocolName == name }, "no vector for \(name)")

        var initiator = try State(
            pattern: .xk, initiator: true, prologue: hex(vector.initPrologue),
            s: KeyPair(privateKey: hex(vector.initStatic)),
            rs: hex(vector.initRemoteStatic),
            insecureFixedEphemeralForTestsOnly: KeyPair(privateKey: hex(vector.initEphemeral)))
        var responder = try State(
            pattern: .xk, initiator: false, prologue: hex(vector.respPrologue),
            s: KeyPair(privateKey: hex(vector.respStatic)),
            insecureFixedEphemeralForTestsOnly: KeyPair(privateKey: hex(vector.respEphemeral)))
        #expect(initiator.protocolName == vector.protocolName)

        let handshakeCount = HandshakePattern.xk.messagePatterns.count
        for (index, message) in vector.messages.prefix(handshakeCount).enumerated() {
            let fromInitiator = index % 2 == 0
            let written =
                fromInitiator
                ? try initiator.writeMessage(hex(message.payload)) : try responder.writeMessage(hex(message.payload))
            #expect(Hex.encode(written) == message.ciphertext, "\(name) handshake message \(index)")
            let read = fromInitiator ? try responder.readMessage(written) : try initiator.readMessage(written)
            #expect(read == hex(message.payload), "\(name) handshake message \(index) payload")
        }
        #expect(initiator.isHandshakeComplete && responder.isHandshakeComplete)
        #expect(Hex.encode(initiator.getHandshakeHash()) == vector.handshakeHash)
        #expect(Hex.encode(responder.getHandshakeHash()) == vector.handshakeHash)
        #expect(try responder.remoteStaticPublicKey == KeyPair(privateKey: hex(vector.initStatic)).publicKey)

        var (initiatorSend, initiatorReceive) = try initiator.transportCipherStates()
        var (responderSend, responderReceive) = try responder.transportCipherStates()
        for (index, message) in vector.messages.enumerated().dropFirst(handshakeCount) {
            let fromInitiator = index % 2 == 0
            let ciphertext =
                fromInitiator
                ? try initiatorSend.encryptWithAd([], hex(message.payload))
                : try responderSend.encryptWithAd([], hex(message.payload))
            #expect(Hex.encode(ciphertext) == message.ciphertext, "\(name) transport message \(index)")
            let plaintext =
                fromInitiator
                ? try responderReceive.decryptWithAd([], ciphertext)
                : try initiatorReceive.decryptWithAd([], ciphertext)
            #expect(plaintext == hex(message.payload), "\(name) transport message \(index) payload")
        }
    }
}
