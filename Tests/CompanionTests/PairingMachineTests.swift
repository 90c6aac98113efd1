import CompanionPairing
import EndToEndChannel
import Foundation
import HerdrCrypto
import PeerGate
import RelayClient
import SessionProtocol
import Testing

/// `ComputerPairing` and `DevicePairing` with an injected clock and randomness: every rule of the
/// design's confirmation, each as an assertion that fails without it.
@Suite struct ComputerPairingTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let hash = [UInt8](repeating: 7, count: 32)
    static let otherHash = [UInt8](repeating: 8, count: 32)
    static let deviceKey = [UInt8](repeating: 0xD1, count: 32)
    static let otherKey = [UInt8](repeating: 0xD2, count: 32)
    static var sas: String { (try? CompanionProfile.herdrRemote.sas(handshakeHash: hash)) ?? "" }
    static var otherSAS: String { (try? CompanionProfile.herdrRemote.sas(handshakeHash: otherHash)) ?? "" }

    final class Counter: @unchecked Sendable {
        var value: UInt8 = 0
        func next(_ count: Int) -> [UInt8] {
            value &+= 1
            return [UInt8](repeating: value, count: count)
        }
    }

    static func machine() throws -> (ComputerPairing, Counter) {
        let counter = Counter()
        let template = ComputerPairing.CodeTemplate(
            staticPublicKey: [UInt8](repeating: 1, count: 32), relay: try RelayEndpoint(parsing: "https://relay.test"),
            computerName: "studio", session: nil)
        return (ComputerPairing(template: template, random: { counter.next($0) }), counter)
    }

    static func codes(_ actions: [ComputerPairing.Action]) -> [CompanionCode] {
        actions.compactMap { if case .showCode(let code) = $0 { code } else { nil } }
    }

    @Test func aMatchingCodeAcceptsPinsAndStoresBeforeTheAck() throws {
        var (m, _) = try Self.machine()
        let first = Self.codes(m.handle(.start(now: Self.start)))
        #expect(first.count == 1)
        #expect(first[0].expiresAt == Self.start.addingTimeInterval(120))
        #expect(m.handle(.handshakeStarted(now: Self.start)).isEmpty)
        #expect(
            m.handle(.established(handshakeHash: Self.hash, deviceStaticKey: Self.deviceKey, now: Self.start))
                == [.ask(attemptsLeft: 3)])
        // The computer never shows the code: no action carries it.
        let answer = m.handle(.typed(" \(Self.sas.prefix(3)) \(Self.sas.suffix(3)) ", now: Self.start))
        #expect(answer == [.say("The code matches."), .send(.pairing(accepted: true))])
        let secret = [UInt8](repeating: 9, count: 32)
        let stored = m.handle(
            .message(.status(.init(name: "phone", roomSecret: secret, registered: false)), now: Self.start))
        guard case .store(let device) = stored.first else {
            Issue.record("no store first: \(stored)")
            return
        }
        #expect(stored.count == 2 && stored[1] == .send(.statusAcknowledged), "the ack comes after the store")
        #expect(device.deviceStaticKey == Self.deviceKey && device.roomSecret == secret && device.name == "phone")
        #expect(device.code == first[0])
        let done = m.handle(.message(.registered, now: Self.start))
        #expect(
            done.last
                == .finished(
                    .paired(
                        ComputerPairing.ConfirmedDevice(
                            code: first[0], deviceStaticKey: Self.deviceKey, name: "phone", roomSecret: secret,
                            registered: true),
                        established: true)))
        #expect(m.isFinished)
    }

    @Test func threeWrongCodesVoidThePairingAndMakeANewCode() throws {
        var (m, _) = try Self.machine()
        let first = Self.codes(m.handle(.start(now: Self.start)))[0]
        _ = m.handle(.established(handshakeHash: Self.hash, deviceStaticKey: Self.deviceKey, now: Self.start))
        #expect(m.handle(.typed("000000", now: Self.start)).contains(.ask(attemptsLeft: 2)))
        #expect(m.handle(.typed("000001", now: Self.start)).contains(.ask(attemptsLeft: 1)))
        let third = m.handle(.typed("000002", now: Self.start))
        #expect(third.contains(.send(.pairing(accepted: false))))
        #expect(third.contains(.reconnect))
        let next = Self.codes(third)
        #expect(next.count == 1 && next[0].pairingID != first.pairingID && next[0].room != first.room)
        // The right code now is too late: no question is pending.
        #expect(m.handle(.typed(Self.sas, now: Self.start)).isEmpty)
        #expect(!m.isAsking)
    }

    @Test func theQuestionIsBoundToOneHandshake() throws {
        var (m, _) = try Self.machine()
        let code = Self.codes(m.handle(.start(now: Self.start)))[0]
        _ = m.handle(.established(handshakeHash: Self.hash, deviceStaticKey: Self.deviceKey, now: Self.start))
        let ended = m.handle(.connectionEnded(now: Self.start))
        #expect(ended.count == 1)
        guard case .voidQuestion = ended.first else {
            Issue.record("not voided: \(ended)")
            return
        }
        // The old code's answer no longer counts, and the same room is kept (no new code).
        #expect(m.handle(.typed(Self.sas, now: Self.start)).isEmpty)
        #expect(m.code == code)
        // The next handshake gets its own question and its own code; the first one's is wrong.
        #expect(
            m.handle(.established(handshakeHash: Self.otherHash, deviceStaticKey: Self.otherKey, now: Self.start))
                == [.ask(attemptsLeft: 3)])
        #expect(Self.sas != Self.otherSAS)
        #expect(m.handle(.typed(Self.sas, now: Self.start)).contains(.ask(attemptsLeft: 2)))
    }

    @Test func aCodeWithNoDeviceForTwoMinutesIsReplaced() throws {
        var (m, _) = try Self.machine()
        let first = Self.codes(m.handle(.start(now: Self.start)))[0]
        #expect(m.handle(.tick(now: Self.start.addingTimeInterval(119))).isEmpty)
        let next = Self.codes(m.handle(.tick(now: Self.start.addingTimeInterval(120))))
        #expect(next.count == 1 && next[0].room != first.room)
        // A device that connected stops the clock; its drop restarts it.
        _ = m.handle(.handshakeStarted(now: Self.start.addingTimeInterval(130)))
        #expect(m.handle(.tick(now: Self.start.addingTimeInterval(400))).isEmpty)
        _ = m.handle(.connectionEnded(now: Self.start.addingTimeInterval(400)))
        #expect(m.handle(.tick(now: Self.start.addingTimeInterval(519))).isEmpty)
        #expect(Self.codes(m.handle(.tick(now: Self.start.addingTimeInterval(520)))).count == 1)
    }

    @Test func theConfirmedWindowTakesOnlyThePinnedKeyAndNeverAsksAgain() throws {
        var (m, _) = try Self.machine()
        _ = m.handle(.start(now: Self.start))
        _ = m.handle(.established(handshakeHash: Self.hash, deviceStaticKey: Self.deviceKey, now: Self.start))
        _ = m.handle(.typed(Self.sas, now: Self.start))
        _ = m.handle(.connectionEnded(now: Self.start))
        let other = m.handle(
            .established(handshakeHash: Self.otherHash, deviceStaticKey: Self.otherKey, now: Self.start))
        #expect(other.contains(.reconnect))
        #expect(!other.contains(.ask(attemptsLeft: 3)), "no new question")
        #expect(!m.isAsking)
        // The pinned device, reconnecting, is taken without a question (the accept is its first
        // message again, in case it was lost), and its status stored.
        #expect(
            m.handle(.established(handshakeHash: Self.otherHash, deviceStaticKey: Self.deviceKey, now: Self.start))
                == [.send(.pairing(accepted: true))])
        let stored = m.handle(
            .message(
                .status(.init(name: "phone", roomSecret: [UInt8](repeating: 3, count: 32), registered: false)),
                now: Self.start))
        #expect(stored.count == 2)
    }

    @Test func aStatusBeforeTheCodeMatchedIsNotTaken() throws {
        var (m, _) = try Self.machine()
        _ = m.handle(.start(now: Self.start))
        _ = m.handle(.established(handshakeHash: Self.hash, deviceStaticKey: Self.deviceKey, now: Self.start))
        let skipped = m.handle(
            .message(
                .status(.init(name: "x", roomSecret: [UInt8](repeating: 3, count: 32), registered: true)),
                now: Self.start))
        #expect(!skipped.contains { if case .store = $0 { true } else { false } })
        #expect(skipped.contains(.reconnect))
        #expect(!m.isAsking)
    }

    @Test func cancelRejectsAndLeavesNothing() throws {
        var (m, _) = try Self.machine()
        _ = m.handle(.start(now: Self.start))
        _ = m.handle(.established(handshakeHash: Self.hash, deviceStaticKey: Self.deviceKey, now: Self.start))
        let cancelled = m.handle(.cancel)
        #expect(cancelled.contains(.send(.pairing(accepted: false))))
        #expect(cancelled.last == .finished(.cancelled))
        #expect(m.handle(.typed(Self.sas, now: Self.start)).isEmpty)
    }

    @Test func anAcceptedDeviceThatNeverSendsItsSecretLeavesNothing() throws {
        var (m, _) = try Self.machine()
        _ = m.handle(.start(now: Self.start))
        _ = m.handle(.established(handshakeHash: Self.hash, deviceStaticKey: Self.deviceKey, now: Self.start))
        _ = m.handle(.typed(Self.sas, now: Self.start))
        #expect(m.handle(.tick(now: Self.start.addingTimeInterval(119))).isEmpty)
        #expect(m.handle(.tick(now: Self.start.addingTimeInterval(120))).last == .finished(.unfinished))
    }

    @Test func aRoomTheRelayClosedGetsANewCode() throws {
        var (m, _) = try Self.machine()
        let first = Self.codes(m.handle(.start(now: Self.start)))[0]
        _ = m.handle(.established(handshakeHash: Self.hash, deviceStaticKey: Self.deviceKey, now: Self.start))
        let closed = m.handle(.roomClosed(reason: "pairing cycle cap", now: Self.start))
        guard case .voidQuestion = closed.first else {
            Issue.record("question not voided: \(closed)")
            return
        }
        let next = Self.codes(closed)
        #expect(next.count == 1 && next[0].room != first.room)
    }
}

@Suite struct DevicePairingTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let hash = [UInt8](repeating: 7, count: 32)
    static let token = [UInt8](repeating: 0x70, count: 24)
    static let secret = [UInt8](repeating: 0x5E, count: 32)

    static func machine() -> DevicePairing {
        var m = DevicePairing(deviceName: "phone", random: { [UInt8](repeating: 0x5E, count: $0) })
        _ = m.handle(.start(now: start))
        return m
    }

    static func established(_ m: inout DevicePairing) -> [DevicePairing.Action] {
        _ = m.handle(.admitted(registrationToken: token))
        return m.handle(.established(handshakeHash: hash, now: start))
    }

    @Test func theDeviceShowsTheCodeAndRegistersOnlyAfterTheAck() throws {
        var m = Self.machine()
        let code = try CompanionProfile.herdrRemote.sas(handshakeHash: Self.hash)
        #expect(Self.established(&m) == [.showCode(code)])
        let accepted = m.handle(.message(.pairing(accepted: true), now: Self.start))
        #expect(
            accepted == [
                .blankCode("The computer accepted the code."), .store(roomSecret: Self.secret, registered: false),
                .send(.status(.init(name: "phone", roomSecret: Self.secret, registered: false))),
            ], "the secret is kept before it is sent")
        #expect(!accepted.contains { if case .register = $0 { true } else { false } }, "no /register before the ack")
        #expect(
            m.handle(.message(.statusAcknowledged, now: Self.start))
                == [.register(registrationToken: Self.token, roomSecret: Self.secret)])
        let done = m.handle(.registration(failure: nil, alreadyRegistered: false))
        #expect(
            done == [
                .send(.registered), .store(roomSecret: Self.secret, registered: true),
                .finished(.paired(roomSecret: Self.secret, established: true)),
            ])
    }

    @Test func onTheHomeNetworkTheAckEndsThePairingWithNothingToRegister() throws {
        var configuration = DevicePairing.Configuration()
        configuration.registers = false
        var m = DevicePairing(
            deviceName: "phone", configuration: configuration, random: { [UInt8](repeating: 0x5E, count: $0) })
        _ = m.handle(.start(now: Self.start))
        _ = m.handle(.admitted(registrationToken: []))
        _ = m.handle(.established(handshakeHash: Self.hash, now: Self.start))
        _ = m.handle(.message(.pairing(accepted: true), now: Self.start))
        #expect(
            m.handle(.message(.statusAcknowledged, now: Self.start))
                == [.finished(.paired(roomSecret: Self.secret, established: false))])
        #expect(m.isFinished)
    }

    @Test func theCodeIsBlankedTheMomentTheConnectionDrops() {
        var m = Self.machine()
        _ = Self.established(&m)
        let dropped = m.handle(.connectionEnded(reason: "peer gone", now: Self.start))
        guard case .blankCode = dropped.first else {
            Issue.record("not blanked: \(dropped)")
            return
        }
        #expect(dropped.contains(.reconnect))
        // The next handshake shows its own code.
        let other = [UInt8](repeating: 9, count: 32)
        _ = m.handle(.admitted(registrationToken: Self.token))
        #expect(
            m.handle(.established(handshakeHash: other, now: Self.start)) == [
                .showCode(try! CompanionProfile.herdrRemote.sas(handshakeHash: other))
            ])
    }

    @Test func aReconnectAfterTheAcceptShowsNoCodeAndResendsTheStatus() {
        var m = Self.machine()
        _ = Self.established(&m)
        _ = m.handle(.message(.pairing(accepted: true), now: Self.start))
        #expect(m.handle(.connectionEnded(reason: "peer gone", now: Self.start)).isEmpty)
        let again = Self.established(&m)
        #expect(again == [.send(.status(.init(name: "phone", roomSecret: Self.secret, registered: false)))])
    }

    @Test func rejectionTimeoutAndATakenRoomEndIt() {
        var rejected = Self.machine()
        _ = Self.established(&rejected)
        #expect(rejected.handle(.message(.pairing(accepted: false), now: Self.start)).last == .finished(.rejected))

        var late = Self.machine()
        _ = Self.established(&late)
        #expect(late.handle(.tick(now: Self.start.addingTimeInterval(179))).isEmpty)
        let timedOut = late.handle(.tick(now: Self.start.addingTimeInterval(180)))
        guard case .blankCode = timedOut.first else {
            Issue.record("the code stays on screen after the time limit: \(timedOut)")
            return
        }
        #expect(timedOut.last == .finished(.timedOut))

        var taken = Self.machine()
        _ = Self.established(&taken)
        _ = taken.handle(.message(.pairing(accepted: true), now: Self.start))
        _ = taken.handle(.message(.statusAcknowledged, now: Self.start))
        #expect(
            taken.handle(.registration(failure: "403 already registered", alreadyRegistered: true)).last
                == .finished(.roomTaken))

        var unregistered = Self.machine()
        _ = Self.established(&unregistered)
        _ = unregistered.handle(.message(.pairing(accepted: true), now: Self.start))
        _ = unregistered.handle(.message(.statusAcknowledged, now: Self.start))
        #expect(
            unregistered.handle(.registration(failure: "relay unreachable", alreadyRegistered: false)).last
                == .finished(.paired(roomSecret: Self.secret, established: false)))
    }

    @Test func aCodeOfTheWrongTurnIsIgnored() {
        var m = Self.machine()
        // Before any handshake, an accept means nothing.
        #expect(m.handle(.message(.pairing(accepted: true), now: Self.start)).isEmpty)
        _ = Self.established(&m)
        #expect(m.handle(.message(.statusAcknowledged, now: Self.start)).isEmpty, "no ack before the accept")
    }
}

@Suite struct CompanionMessageTests {
    @Test func encodingRoundTrips() throws {
        let messages: [CompanionMessage] = [
            .pairing(accepted: true), .pairing(accepted: false),
            .status(.init(name: "Jo's \"phone\" ☎", roomSecret: [UInt8](repeating: 1, count: 32), registered: true)),
            .statusAcknowledged, .registered, .home([]),
            .home([try HomeAddress(parsing: "[fd00::7]:4610"), try HomeAddress(parsing: "169.254.3.1:4610")]),
        ]
        for message in messages {
            #expect(ChannelMessage.Kind(firstByteOf: message.bytes) == .control)
            #expect(try ChannelMessage(parsing: message.bytes) == .control(message))
            #expect(try CompanionMessage(parsing: message.bytes) == message, "\(message)")
        }
        #expect(
            String(decoding: CompanionMessage.pairing(accepted: true).bytes, as: UTF8.self)
                == "{\"pairing\":\"accepted\"}")
        #expect(try CompanionMessage(parsing: Array("{\"future\":[1]}".utf8)) == .unknown("future"))
    }

    @Test(arguments: [
        "", "[]", "null", "{}", "{\"pairing\":\"maybe\"}", "{\"pairing\":true}", "{\"ack\":\"other\"}",
        "{\"registered\":false}", "{\"pairing\":\"accepted\",\"ack\":\"status\"}",
        "{\"status\":{\"v\":2,\"name\":\"p\",\"roomSecret\":\"AQ==\",\"registered\":false}}",
        "{\"status\":{\"v\":1,\"name\":\"p\",\"roomSecret\":\"AQ==\",\"registered\":false}}",
        "{\"status\":{\"v\":1,\"name\":\"\",\"roomSecret\":\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\",\"registered\":false}}",
        "{\"status\":{\"v\":1,\"name\":\"a\\u0007b\",\"roomSecret\":\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\",\"registered\":false}}",
        "{\"status\":{\"v\":1,\"name\":\"p\",\"roomSecret\":\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\",\"registered\":\"no\"}}",
        "{\"home\":\"169.254.3.1:1\"}", "{\"home\":[\"127.0.0.1:1\"]}", "{\"home\":[\"100.64.0.1:1\"]}",
        "{\"home\":[\"169.254.3.1:1\",\"169.254.3.1:1\"]}", "{\"home\":[1]}",
        "{\"home\":[\"169.254.3.1:1\",\"169.254.3.2:1\",\"169.254.3.3:1\",\"169.254.3.4:1\",\"169.254.3.5:1\",\"169.254.3.6:1\",\"169.254.3.7:1\",\"169.254.3.8:1\",\"169.254.3.9:1\"]}",
    ])
    func malformedControlMessagesAreRefused(text: String) {
        #expect(throws: CompanionMessageError.self) { try CompanionMessage(parsing: Array(text.utf8)) }
    }

    @Test func theSizeLimit() throws {
        let name = String(repeating: "n", count: 64)
        let fits = "{\"future\":\"" + String(repeating: "x", count: 4096 - 13) + "\"}"
        #expect(fits.utf8.count == 4096)
        #expect(try CompanionMessage(parsing: Array(fits.utf8)) == .unknown("future"))
        #expect(throws: CompanionMessageError.self) { try CompanionMessage(parsing: Array(fits.utf8) + [0x20]) }
        let longName = CompanionMessage.status(
            .init(name: name + "n", roomSecret: [UInt8](repeating: 1, count: 32), registered: false))
        #expect(throws: CompanionMessageError.self) { try CompanionMessage(parsing: longName.bytes) }
    }
}
