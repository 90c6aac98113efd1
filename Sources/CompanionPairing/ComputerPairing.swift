import EndToEndChannel
import Foundation
import HerdrBase
import HerdrCrypto
import PeerGate
import RelayClient
import SessionProtocol

/// The computer's side of a pairing through the relay, as specs/002 "Pairing confirmation" and
/// "The confirmed-but-not-yet-established window" say: it shows a code, parks in its room, and
/// for each device that completes a handshake asks the person to type the code the device shows.
/// It never shows the code itself. Three wrong answers void the code; so does two minutes with no
/// device; a question is bound to one handshake and voided when that connection ends. Once the
/// code matches, only the pinned device static key may complete a handshake, and no question is
/// asked again.
///
/// A pure state machine with an injected clock: the shell feeds it what happened (`handle`) and
/// carries out the returned actions in order.
public struct ComputerPairing: Sendable {
    public struct Configuration: Sendable {
        /// Seconds a code lives without a device connecting (the design's two minutes).
        public var codeLifetime: TimeInterval = 120
        /// Typed answers per code.
        public var attempts = 3
        /// Seconds the device has, after the code matched, to send its room secret.
        public var confirmationWindow: TimeInterval = 120
        public init() {}
    }

    /// What a code is made from: the computer's static key, the relay, its name and session. Each
    /// new code gets a fresh pairing id from the injected source.
    public struct CodeTemplate: Sendable {
        public var staticPublicKey: [UInt8]
        /// Nil: the code pairs on the home network only.
        public var relay: RelayEndpoint?
        public var computerName: String
        public var session: String?
        /// The home door's addresses, for `home=`.
        public var home: [HomeAddress]

        public init(
            staticPublicKey: [UInt8], relay: RelayEndpoint?, computerName: String, session: String?,
            home: [HomeAddress] = []
        ) {
            self.staticPublicKey = staticPublicKey
            self.relay = relay
            self.computerName = computerName
            self.session = session
            self.home = home
        }
    }

    /// A device the person confirmed, with everything the computer keeps about it.
    public struct ConfirmedDevice: Sendable, Hashable {
        public var code: CompanionCode
        public var deviceStaticKey: [UInt8]
        public var name: String
        public var roomSecret: [UInt8]
        public var registered: Bool

        public init(code: CompanionCode, deviceStaticKey: [UInt8], name: String, roomSecret: [UInt8], registered: Bool)
        {
            self.code = code
            self.deviceStaticKey = deviceStaticKey
            self.name = name
            self.roomSecret = roomSecret
            self.registered = registered
        }
    }

    public enum Event: Sendable {
        /// Begin: make the first code.
        case start(now: Date)
        /// The first frame of a device's handshake arrived on the parked connection.
        case handshakeStarted(now: Date)
        /// A handshake completed.
        case established(handshakeHash: [UInt8], deviceStaticKey: [UInt8], now: Date)
        /// The person typed an answer.
        case typed(String, now: Date)
        /// A control message from the device.
        case message(CompanionMessage, now: Date)
        /// The connection (or its channel) ended: a drop, a displacement, an AEAD failure.
        case connectionEnded(now: Date)
        /// The relay closed the room for good (`pairing cycle cap`, `room deleted`…): a new code.
        case roomClosed(reason: String, now: Date)
        case tick(now: Date)
        case cancel
    }

    public enum Outcome: Sendable, Hashable {
        /// Confirmed and stored; `established` when the device said it registered the room.
        case paired(ConfirmedDevice, established: Bool)
        case cancelled
        /// Confirmed, but the device never sent its room secret: nothing was kept.
        case unfinished
    }

    public enum Action: Sendable, Hashable {
        /// Show this code and park in its room (replacing any earlier code and park).
        case showCode(CompanionCode)
        /// Ask the person for the code the device shows; `attemptsLeft` includes this one.
        case ask(attemptsLeft: Int)
        /// The pending question no longer counts (the device went, the code was voided): stop
        /// reading the answer and say why.
        case voidQuestion(String)
        /// Tell the person.
        case say(String)
        case send(CompanionMessage)
        /// Close this connection and park again in the same room, for a fresh handshake.
        case reconnect
        /// Keep the device before the acknowledgement that follows goes out.
        case store(ConfirmedDevice)
        /// The last action.
        case finished(Outcome)
    }

    private enum Phase: Sendable {
        case idle
        /// A code is shown; no device is connected (since `since`).
        case waiting(since: Date)
        /// A device's handshake is under way.
        case handshaking
        /// Asking the person, for the handshake that produced `sas`.
        case asking(sas: String, deviceStaticKey: [UInt8], attemptsLeft: Int)
        /// The code matched; waiting for the pinned device's room secret (since `since`).
        case accepted(deviceStaticKey: [UInt8], since: Date)
        /// Stored and acknowledged; waiting for the device to say it registered.
        case confirmed(ConfirmedDevice)
        case done
    }

    public let configuration: Configuration
    public let template: CodeTemplate
    public let profile: CompanionProfile
    private let random: @Sendable (Int) -> [UInt8]
    private var phase = Phase.idle
    /// The code shown now.
    public private(set) var code: CompanionCode?

    public init(
        template: CodeTemplate, profile: CompanionProfile = .herdrRemote,
        configuration: Configuration = Configuration(),
        random: @escaping @Sendable (Int) -> [UInt8] = { SecureRandom.bytes($0) }
    ) {
        self.template = template
        self.profile = profile
        self.configuration = configuration
        self.random = random
    }

    /// True once `finished` was returned.
    public var isFinished: Bool {
        if case .done = phase { return true }
        return false
    }

    /// Whether a question is pending (the shell reads an answer only then).
    public var isAsking: Bool {
        if case .asking = phase { return true }
        return false
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.done, _): return []
        case (.idle, .start(let now)): return newCode(now: now, saying: nil)
        case (.idle, _): return []
        case (_, .cancel):
            var actions: [Action] = []
            if isAsking { actions.append(.voidQuestion("Cancelled.")) }
            if case .confirmed(let device) = phase {
                phase = .done
                return [.finished(.paired(device, established: device.registered))]
            }
            actions += [.send(.pairing(accepted: false)), .finished(.cancelled)]
            phase = .done
            return actions
        case (.waiting, .handshakeStarted), (.asking, .handshakeStarted):
            if case .waiting = phase { phase = .handshaking }
            return []
        case (_, .handshakeStarted): return []
        case (_, .established(let hash, let deviceKey, let now)):
            return established(hash: hash, deviceKey: deviceKey, now: now)
        case (.asking(let sas, let deviceKey, let attemptsLeft), .typed(let text, let now)):
            return answered(text, sas: sas, deviceKey: deviceKey, attemptsLeft: attemptsLeft, now: now)
        case (_, .typed): return []
        case (_, .message(let message, let now)): return received(message, now: now)
        case (_, .connectionEnded(let now)): return connectionEnded(now: now)
        case (_, .roomClosed(let reason, let now)):
            if case .confirmed(let device) = phase {
                phase = .done
                return [.finished(.paired(device, established: device.registered))]
            }
            var actions: [Action] = isAsking ? [.voidQuestion("The relay closed the pairing room (\(reason)).")] : []
            actions += newCode(now: now, saying: "The relay closed the pairing room (\(reason)); here is a new code.")
            return actions
        case (.waiting(let since), .tick(let now)):
            guard now.timeIntervalSince(since) >= configuration.codeLifetime else { return [] }
            return newCode(now: now, saying: "The code was not used for two minutes; here is a new one.")
        case (.accepted(_, let since), .tick(let now)):
            guard now.timeIntervalSince(since) >= configuration.confirmationWindow else { return [] }
            phase = .done
            return [
                .say("The device did not finish pairing in time; nothing was kept. Pair again to retry."),
                .finished(.unfinished),
            ]
        case (_, .tick), (_, .start): return []
        }
    }

    // MARK: - Steps

    private mutating func newCode(now: Date, saying: String?) -> [Action] {
        let fresh = CompanionCode(
            staticPublicKey: template.staticPublicKey, pairingID: CompanionCode.newPairingID(random: random),
            relay: template.relay, computerName: template.computerName, session: template.session,
            expiresAt: now.addingTimeInterval(configuration.codeLifetime), home: template.home)
        code = fresh
        phase = .waiting(since: now)
        return (saying.map { [Action.say($0)] } ?? []) + [.showCode(fresh)]
    }

    private mutating func established(hash: [UInt8], deviceKey: [UInt8], now: Date) -> [Action] {
        switch phase {
        case .waiting, .handshaking:
            guard let sas = try? profile.sas(handshakeHash: hash) else { return [.reconnect] }
            phase = .asking(sas: sas, deviceStaticKey: deviceKey, attemptsLeft: configuration.attempts)
            return [.ask(attemptsLeft: configuration.attempts)]
        case .accepted(let pinned, _):
            // The confirmed window: only the device the person confirmed, and never a new question.
            guard ConstantTime.equal(pinned, deviceKey) else {
                return [.say("Refused a handshake from a device other than the one confirmed."), .reconnect]
            }
            // The device may not have got the accept (its connection dropped, or the frame was
            // lost on the way): it is the first message of this connection again.
            return [.send(.pairing(accepted: true))]
        case .confirmed(let device):
            guard ConstantTime.equal(device.deviceStaticKey, deviceKey) else {
                return [.say("Refused a handshake from a device other than the one confirmed."), .reconnect]
            }
            return []
        case .asking, .idle, .done:
            return []
        }
    }

    private mutating func answered(
        _ text: String, sas: String, deviceKey: [UInt8], attemptsLeft: Int, now: Date
    ) -> [Action] {
        let typed = String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
        if ConstantTime.equal(Array(typed.utf8), Array(sas.utf8)) {
            phase = .accepted(deviceStaticKey: deviceKey, since: now)
            return [.say("The code matches."), .send(.pairing(accepted: true))]
        }
        let left = attemptsLeft - 1
        if left > 0 {
            phase = .asking(sas: sas, deviceStaticKey: deviceKey, attemptsLeft: left)
            return [.say("That is not the code the device shows."), .ask(attemptsLeft: left)]
        }
        var actions: [Action] = [
            .say("Three wrong codes: this pairing is void, and the code the device scanned is dead."),
            .send(.pairing(accepted: false)), .reconnect,
        ]
        actions += newCode(now: now, saying: "A new code:")
        return actions
    }

    private mutating func received(_ message: CompanionMessage, now: Date) -> [Action] {
        switch (phase, message) {
        case (.accepted(let deviceKey, _), .status(let status)):
            guard let code else { return [] }
            let device = ConfirmedDevice(
                code: code, deviceStaticKey: deviceKey, name: status.name, roomSecret: status.roomSecret,
                registered: status.registered)
            phase = .confirmed(device)
            var actions: [Action] = [.store(device), .send(.statusAcknowledged)]
            if status.registered {
                phase = .done
                actions.append(.finished(.paired(device, established: true)))
            }
            return actions
        case (.confirmed(var device), .status(let status)):
            // Resent on a reconnect: the latest secret and name win, stored before the ack.
            device.roomSecret = status.roomSecret
            device.name = status.name
            device.registered = device.registered || status.registered
            phase = .confirmed(device)
            var actions: [Action] = [.store(device), .send(.statusAcknowledged)]
            if device.registered {
                phase = .done
                actions.append(.finished(.paired(device, established: true)))
            }
            return actions
        case (.confirmed(var device), .registered):
            device.registered = true
            phase = .done
            return [.store(device), .finished(.paired(device, established: true))]
        default:
            // A status before the code matched, or anything unknown: a device may not skip the
            // question. Nothing is kept; the connection goes. Liveness pings are not turns.
            switch message {
            case .unknown, .ping, .pong, .inputReceived, .window: return []
            default: break
            }
            if case .asking = phase {
                return connectionEnded(now: now) + [.reconnect]
            }
            return []
        }
    }

    private mutating func connectionEnded(now: Date) -> [Action] {
        switch phase {
        case .asking:
            phase = .waiting(since: now)
            return [
                .voidQuestion(
                    "The device disconnected; that code no longer counts. When it reconnects it shows a new one.")
            ]
        case .handshaking:
            phase = .waiting(since: now)
            return []
        case .accepted:
            return []
        case .confirmed(let device):
            phase = .done
            return [.finished(.paired(device, established: device.registered))]
        case .waiting, .idle, .done:
            return []
        }
    }
}
