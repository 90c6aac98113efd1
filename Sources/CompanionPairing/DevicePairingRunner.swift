import EndToEndChannel
import Foundation
import HomeRoad
import Noise
import PeerGate
import Plumbing
import RelayClient
import RelayProtocol
import SessionProtocol
import Synchronization

/// Where the device shows the code and what happened.
public protocol DevicePairingConsole: AnyObject, Sendable {
    /// Show the 6-digit code for the person to type on the computer.
    func showCode(_ code: String)
    /// Take the code off the screen at once, and say why.
    func blankCode(_ reason: String)
    func say(_ text: String)
}

/// The I/O shell of `DevicePairing`: joins the code's room as the phone through a `RelayLink`
/// (or, for a code without a relay, dials the computer's home addresses), runs the initiator
/// handshake on each connection, calls `/register` on a thread of its own, feeds the state
/// machine and carries out its actions. One loop on the caller's thread.
public final class DevicePairingRunner: Sendable {
    public enum Input: Sendable {
        case room(tag: Int, RelayLink.RoomEvent)
        /// A home connection is up (a code without a relay).
        case homeConnected(tag: Int, HomeConnection)
        case home(tag: Int, FramePipeEvent)
        /// No home address answered.
        case homeUnreachable(tag: Int, String)
        case registration(failure: String?, alreadyRegistered: Bool)
        case cancel
    }

    public let inputs = EventQueue<Input>()
    let code: CompanionCode
    let deviceName: String
    let staticKey: KeyPair
    let linkOptions: RelayLink.Options
    let configuration: DevicePairing.Configuration
    let console: any DevicePairingConsole
    /// Keeps the pairing (room secret, registered) before anything that depends on it is sent.
    let store: @Sendable ([UInt8], Bool) throws -> Void
    /// Where the computer's home door listens, when it says (before its acknowledgement).
    let onHome: @Sendable ([HomeAddress]) -> Void

    /// Seconds between rounds over the home addresses while none answers.
    static let homeRetryDelay = 1.0

    /// Why the relay (or the home addresses) could not be reached, while nothing has answered
    /// yet: what a time limit reached without ever getting through should name.
    private let unreached = Mutex<String?>(nil)

    /// The last reason the computer's road could not be reached, when nothing ever answered.
    public var unreachableReason: String? { unreached.withLock { $0 } }

    public init(
        code: CompanionCode, deviceName: String, staticKey: KeyPair, console: any DevicePairingConsole,
        linkOptions: RelayLink.Options = RelayLink.Options(),
        configuration: DevicePairing.Configuration = DevicePairing.Configuration(),
        onHome: @escaping @Sendable ([HomeAddress]) -> Void = { _ in },
        store: @escaping @Sendable ([UInt8], Bool) throws -> Void
    ) {
        self.code = code
        self.deviceName = deviceName
        self.staticKey = staticKey
        self.console = console
        self.linkOptions = linkOptions
        var configuration = configuration
        // No relay: nothing to register; paired once the computer acknowledged the secret.
        if code.relay == nil { configuration.registers = false }
        self.configuration = configuration
        self.onHome = onHome
        self.store = store
    }

    private final class Loop {
        var machine: DevicePairing
        var link: RelayLink?
        var home: HomeConnection?
        var tag = 0
        var channel: FramedChannel?
        /// The relay link's last event ended an admitted connection (its `waiting` is no failure
        /// to reach the relay).
        var connectionJustEnded = false

        init(_ machine: DevicePairing) { self.machine = machine }
    }

    /// Runs to the end; the outcome, or a failure to keep the pairing (then nothing is paired).
    public func run() -> Result<DevicePairing.Outcome, StoreFailure> {
        let loop = Loop(DevicePairing(deviceName: deviceName, configuration: configuration))
        _ = loop.machine.handle(.start(now: Date()))
        join(loop)
        var actions: [DevicePairing.Action] = []
        var result: Result<DevicePairing.Outcome, StoreFailure>?
        while result == nil {
            result = perform(actions, loop)
            if result != nil { break }
            guard let input = inputs.next(timeout: 0.25) else {
                actions = loop.machine.handle(.tick(now: Date()))
                continue
            }
            actions = handle(input, loop)
        }
        loop.link?.stop()
        loop.link?.waitUntilStopped(timeout: 3)
        loop.home?.close()
        return result ?? .success(.cancelled)
    }

    /// Why the pairing could not be kept.
    public struct StoreFailure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    private func join(_ loop: Loop) {
        loop.link?.stop()
        loop.home?.close()
        loop.home = nil
        loop.channel = nil
        loop.tag += 1
        let inputs = self.inputs
        guard let relay = code.relay else { return dialHome(tag: loop.tag, after: 0) }
        let link = RelayLink(endpoint: relay, room: code.room, role: .device, credential: .none, options: linkOptions)
        loop.link = link
        let tag = loop.tag
        link.deliver { event in inputs.push(.room(tag: tag, event)) }
    }

    /// Tries the code's home addresses in turn on a thread of its own, after `delay` seconds.
    private func dialHome(tag: Int, after delay: Double) {
        let (addresses, inputs) = (code.home, inputs)
        let thread = Thread {
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            var reasons: [String] = []
            for address in addresses {
                do throws(ConnectionError) {
                    let connection = try HomeConnection.connect(to: address, timeout: 3)
                    inputs.push(.homeConnected(tag: tag, connection))
                    connection.deliver { event in inputs.push(.home(tag: tag, event)) }
                    return
                } catch {
                    reasons.append(error.message)
                }
            }
            inputs.push(.homeUnreachable(tag: tag, reasons.joined(separator: "; ")))
        }
        thread.name = "home dial"
        thread.start()
    }

    private func handle(_ input: Input, _ loop: Loop) -> [DevicePairing.Action] {
        let now = Date()
        switch input {
        case .cancel: return loop.machine.handle(.cancel)
        case .registration(let failure, let already):
            return loop.machine.handle(.registration(failure: failure, alreadyRegistered: already))
        case .homeConnected(let tag, let connection):
            guard tag == loop.tag, loop.home == nil else {
                connection.close()
                return []
            }
            unreached.withLock { $0 = nil }
            loop.home = connection
            return admitted(connection, token: [], loop)
        case .home(let tag, let event):
            guard tag == loop.tag else { return [] }
            switch event {
            case .message(let frame): return received(frame, loop, now: now)
            case .ended(let end):
                loop.home = nil
                let actions = ended(end, loop, now: now)
                // The machine asks for a reconnect when a shown code became void; otherwise dial again.
                if !actions.contains(.reconnect), !loop.machine.isFinished {
                    dialHome(tag: loop.tag, after: Self.homeRetryDelay)
                }
                return actions
            }
        case .homeUnreachable(let tag, let reason):
            guard tag == loop.tag, !loop.machine.isFinished else { return [] }
            unreached.withLock { $0 = "no home address answered: \(reason)" }
            console.say("The computer does not answer on the home network (\(reason)); retrying...")
            dialHome(tag: tag, after: Self.homeRetryDelay)
            return []
        case .room(let tag, let event):
            guard tag == loop.tag else { return [] }
            switch event {
            case .admitted(let connection):
                unreached.withLock { $0 = nil }
                return admitted(connection, token: connection.registrationToken ?? [], loop)
            case .frame(let frame):
                return received(frame, loop, now: now)
            case .connectionEnded(let end):
                loop.connectionJustEnded = true
                return ended(end, loop, now: now)
            case .waiting(let delay, let reason):
                if reason.contains(AdmissionError.macOffline.rawValue) {
                    console.say(
                        "The computer is not in the pairing room yet; retrying (is herdr-host pair showing this code?)..."
                    )
                } else if !loop.connectionJustEnded {
                    // The attempt did not get through to the relay: say why, and when the next goes.
                    unreached.withLock { $0 = reason }
                    let host = code.relay?.host ?? "the relay"
                    console.say("Cannot reach \(host) (\(reason)); retrying in \(Self.seconds(delay))...")
                }
                loop.connectionJustEnded = false
                return []
            case .stopped(let reason):
                if case .refused(let why) = reason, why.contains(AdmissionError.ticketRequired.rawValue) {
                    console.say(
                        "This relay requires App Attest before a device may pair (its ATTEST_REQUIRED is not false), "
                            + "which herdr-remote cannot do. Pair through a relay that runs with ATTEST_REQUIRED=false."
                    )
                } else if case .displaced = reason {
                    console.say(
                        "Another device joined this pairing's room and took this device's place: someone else may be "
                            + "pairing with this code. If that is not you, cancel on the computer.")
                } else {
                    console.say("The relay ended the pairing: \(reason).")
                }
                return loop.machine.handle(.cancel)
            }
        }
    }

    /// A connection is up (relay or home): the handshake starts on it.
    private func admitted(_ pipe: any FramePipe, token: [UInt8], _ loop: Loop) -> [DevicePairing.Action] {
        guard
            let handshake = try? CompanionProfile.herdrRemote.initiatorHandshake(
                pid: code.pidText, localStatic: staticKey, remoteStatic: code.staticPublicKey)
        else { return [] }
        var channel = FramedChannel(connection: pipe, handshake: handshake)
        let actions = loop.machine.handle(.admitted(registrationToken: token))
        do {
            _ = try channel.start()
            loop.channel = channel
        } catch {
            pipe.close()
        }
        return actions
    }

    private func received(_ frame: [UInt8], _ loop: Loop, now: Date) -> [DevicePairing.Action] {
        guard loop.channel != nil else { return [] }
        var actions: [DevicePairing.Action] = []
        do {
            // In place (`loop.channel?.`): a copy would share the cipher states.
            for output in try loop.channel?.receive(frame) ?? [] {
                switch output {
                case .established(let established):
                    actions += loop.machine.handle(.established(handshakeHash: established.handshakeHash, now: now))
                case .message(let bytes):
                    let message: CompanionMessage
                    switch try ChannelMessage(parsing: bytes) {
                    case .control(let control): message = control
                    case .session, .agents: throw ChannelMessageError("a session message while pairing")
                    }
                    if case .home(let addresses) = message { onHome(addresses) }
                    actions += loop.machine.handle(.message(message, now: now))
                }
            }
        } catch let error as ChannelMessageError {
            return actions + drop(loop, reason: "the computer sent \(error)", now: now)
        } catch {
            return actions + drop(loop, reason: "\(error)", now: now)
        }
        return actions
    }

    private func ended(_ end: FramePipeEnd, _ loop: Loop, now: Date) -> [DevicePairing.Action] {
        guard loop.channel != nil else {
            return loop.machine.handle(.connectionEnded(reason: end.description, now: now))
        }
        loop.channel = nil
        return loop.machine.handle(.connectionEnded(reason: Self.reason(end), now: now))
    }

    /// "1 s", "30 s": a retry delay, rounded up.
    static func seconds(_ delay: Double) -> String { "\(max(1, Int(delay.rounded(.up)))) s" }

    static func reason(_ end: FramePipeEnd) -> String {
        switch end {
        case .closedByRelay(let close): close.reason
        case .closedLocally: "closed"
        case .failed(let error): error.message
        }
    }

    private func drop(_ loop: Loop, reason: String, now: Date) -> [DevicePairing.Action] {
        loop.channel?.connection.close()
        loop.channel = nil
        return loop.machine.handle(.connectionEnded(reason: reason, now: now))
    }

    private func perform(_ actions: [DevicePairing.Action], _ loop: Loop) -> Result<
        DevicePairing.Outcome, StoreFailure
    >? {
        for action in actions {
            switch action {
            case .showCode(let code): console.showCode(code)
            case .blankCode(let reason): console.blankCode(reason)
            case .say(let text): console.say(text)
            case .send(let message):
                guard loop.channel != nil else { continue }
                do {
                    try loop.channel?.send(message.bytes)
                } catch {
                    loop.channel?.connection.close()
                    loop.channel = nil
                }
            case .store(let secret, let registered):
                do {
                    try store(secret, registered)
                } catch {
                    loop.channel?.connection.close()
                    return .failure(StoreFailure(description: "\(error)"))
                }
            case .register(let token, let secret):
                guard let endpoint = code.relay else { continue }
                let inputs = self.inputs
                let key: RelayJoinKey
                do {
                    key = try RelayJoinKey(roomSecret: secret)
                } catch {
                    inputs.push(.registration(failure: "\(error)", alreadyRegistered: false))
                    continue
                }
                // From here on the relay may hold the verifier, and then refuses an unsigned join:
                // the link's next attempt (after a broken channel) signs. A room still pairing
                // admits a signed join too.
                loop.link?.setCredential(.joinKey(key))
                let room = code.room
                let thread = Thread {
                    do {
                        try RelayHTTPClient(endpoint: endpoint).register(
                            room: room, registrationToken: token, verifier: key.verifier)
                        inputs.push(.registration(failure: nil, alreadyRegistered: false))
                    } catch let error as ConnectionError {
                        inputs.push(
                            .registration(
                                failure: error.message, alreadyRegistered: error.serverError == "already registered"))
                    } catch {
                        inputs.push(.registration(failure: "\(error)", alreadyRegistered: false))
                    }
                }
                thread.name = "register"
                thread.start()
            case .reconnect:
                loop.channel?.connection.close()
                loop.channel = nil
                if code.relay == nil { join(loop) }  // a fresh home connection for a fresh handshake
            case .finished(let outcome):
                loop.channel?.connection.close()
                return .success(outcome)
            }
        }
        return nil
    }
}
