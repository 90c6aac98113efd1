import EndToEndChannel
import Foundation
import HerdrCrypto
import RelayProtocol
import SessionProtocol

/// The device's side of a pairing through the relay (specs/002 "Pairing confirmation",
/// "Establishing the room"): it joins the room the code names as the phone, runs the handshake
/// as initiator, shows the code derived from it for the person to type on the computer, and
/// blanks it the moment its connection drops. Only after the computer's `accepted` does it mint
/// the room secret, and only after the computer acknowledged that secret does it register the
/// room's verifier with the relay. It has its own time limit; no answer in time is a failure.
///
/// A pure state machine with an injected clock and randomness: the shell feeds it what happened
/// and carries out the returned actions in order.
public struct DevicePairing: Sendable {
    public struct Configuration: Sendable {
        /// Seconds from the start until the pairing is given up.
        public var timeout: TimeInterval = 180
        /// Whether the pairing ends with registering the room at a relay; false on the home road
        /// (paired once the computer acknowledged the secret).
        public var registers = true
        public init() {}
    }

    public enum Event: Sendable {
        case start(now: Date)
        /// Admitted as the phone; the relay's registration token for this connection.
        case admitted(registrationToken: [UInt8])
        /// The handshake completed.
        case established(handshakeHash: [UInt8], now: Date)
        case message(CompanionMessage, now: Date)
        /// The connection (or its channel) ended.
        case connectionEnded(reason: String, now: Date)
        /// The answer of `/register` (nil: success; else why not).
        case registration(failure: String?, alreadyRegistered: Bool)
        case tick(now: Date)
        case cancel
    }

    public enum Outcome: Sendable, Hashable {
        /// Paired: the room secret, and whether the relay took the verifier (if not, the next
        /// connection registers it).
        case paired(roomSecret: [UInt8], established: Bool)
        /// The computer said no (a wrong code typed three times, or cancelled there).
        case rejected
        case timedOut
        case cancelled
        /// The relay already held a verifier for the room: someone registered it first (with a
        /// photographed code). The room is lost; pairing again makes a new one.
        case roomTaken
    }

    public enum Action: Sendable, Hashable {
        /// Show this 6-digit code for the person to type on the computer.
        case showCode(String)
        /// Take the code off the screen at once, and say why.
        case blankCode(String)
        case say(String)
        case send(CompanionMessage)
        /// Keep the pairing (the room secret, whether registered) before what follows is sent.
        case store(roomSecret: [UInt8], registered: Bool)
        /// Call `/register` with this connection's token and the verifier of the room secret.
        case register(registrationToken: [UInt8], roomSecret: [UInt8])
        /// Close this connection and join again, for a fresh handshake.
        case reconnect
        /// The last action.
        case finished(Outcome)
    }

    private enum Phase: Sendable {
        case idle
        /// Joining or handshaking; `token` is the admitted connection's, if any.
        case connecting(token: [UInt8]?)
        /// Showing the code of this handshake.
        case showing(token: [UInt8])
        /// Accepted: the status with the room secret went out; waiting for the computer's ack.
        case awaitingAck(token: [UInt8]?)
        /// `/register` is under way.
        case registering
        case done
    }

    public let configuration: Configuration
    public let profile: CompanionProfile
    public let deviceName: String
    private let random: @Sendable (Int) -> [UInt8]
    private var phase = Phase.idle
    private var deadline = Date.distantFuture
    /// Minted once the computer accepted.
    public private(set) var roomSecret: [UInt8]?

    public init(
        deviceName: String, profile: CompanionProfile = .herdrRemote, configuration: Configuration = Configuration(),
        random: @escaping @Sendable (Int) -> [UInt8] = { SecureRandom.bytes($0) }
    ) {
        self.deviceName = deviceName
        self.profile = profile
        self.configuration = configuration
        self.random = random
    }

    public var isFinished: Bool {
        if case .done = phase { return true }
        return false
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.done, _): return []
        case (.idle, .start(let now)):
            deadline = now.addingTimeInterval(configuration.timeout)
            phase = .connecting(token: nil)
            return []
        case (.idle, _): return []
        case (_, .cancel):
            return finish(.cancelled, blank: "Cancelled; nothing was paired.")
        case (_, .tick(let now)):
            guard now >= deadline, !isRegistering else { return [] }
            return finish(.timedOut, blank: "The computer did not confirm the code in time; nothing was paired.")
        case (.connecting, .admitted(let token)), (.awaitingAck, .admitted(let token)):
            if case .awaitingAck = phase {
                phase = .awaitingAck(token: token)
            } else {
                phase = .connecting(token: token)
            }
            return []
        case (_, .admitted): return []
        case (.connecting(let token?), .established(let hash, _)):
            guard let code = try? profile.sas(handshakeHash: hash) else { return [.reconnect] }
            phase = .showing(token: token)
            return [.showCode(code)]
        case (.awaitingAck(.some), .established):
            // A reconnect after the computer accepted: no code; the status goes out again.
            guard let roomSecret else { return [] }
            return [.send(.status(.init(name: deviceName, roomSecret: roomSecret, registered: false)))]
        case (_, .established): return []
        case (.showing(let token), .message(.pairing(let accepted), _)):
            guard accepted else {
                return finish(.rejected, blank: "The computer rejected the pairing; nothing was paired.")
            }
            let secret = random(RelayJoinKey.roomSecretSize)
            roomSecret = secret
            phase = .awaitingAck(token: token)
            return [
                .blankCode("The computer accepted the code."), .store(roomSecret: secret, registered: false),
                .send(.status(.init(name: deviceName, roomSecret: secret, registered: false))),
            ]
        case (.awaitingAck, .message(.statusAcknowledged, _)) where !configuration.registers:
            guard let roomSecret else { return [] }
            phase = .done
            return [.finished(.paired(roomSecret: roomSecret, established: false))]
        case (.awaitingAck(let token?), .message(.statusAcknowledged, _)):
            guard let roomSecret else { return [] }
            phase = .registering
            return [.register(registrationToken: token, roomSecret: roomSecret)]
        case (.awaitingAck, .message(.pairing(accepted: false), _)):
            return finish(.rejected, blank: nil)
        case (_, .message): return []
        case (.registering, .registration(let failure, let alreadyRegistered)):
            guard let roomSecret else { return [] }
            phase = .done
            if alreadyRegistered {
                return [
                    .say(
                        "The relay already holds a verifier for this pairing's room: someone registered it first. Nothing was kept; pair again with a new code."
                    ),
                    .finished(.roomTaken),
                ]
            }
            if failure == nil {
                return [
                    .send(.registered), .store(roomSecret: roomSecret, registered: true),
                    .finished(.paired(roomSecret: roomSecret, established: true)),
                ]
            }
            return [
                .say(
                    "Paired, but the relay did not take the room yet (\(failure ?? "")); it is registered at the next connection."
                ),
                .finished(.paired(roomSecret: roomSecret, established: false)),
            ]
        case (_, .registration): return []
        case (.showing, .connectionEnded(let reason, _)):
            phase = .connecting(token: nil)
            return [
                .blankCode("The connection dropped (\(reason)); that code is void. Reconnecting for a new one..."),
                .reconnect,
            ]
        case (.connecting, .connectionEnded):
            phase = .connecting(token: nil)
            return []
        case (.awaitingAck, .connectionEnded):
            phase = .awaitingAck(token: nil)
            return []
        case (.registering, .connectionEnded), (_, .connectionEnded), (_, .start):
            return []
        }
    }

    private var isRegistering: Bool {
        if case .registering = phase { return true }
        return false
    }

    private mutating func finish(_ outcome: Outcome, blank: String?) -> [Action] {
        let showing: Bool
        if case .showing = phase { showing = true } else { showing = false }
        phase = .done
        var actions: [Action] = []
        if showing, let blank { actions.append(.blankCode(blank)) } else if let blank { actions.append(.say(blank)) }
        actions.append(.finished(outcome))
        return actions
    }
}
