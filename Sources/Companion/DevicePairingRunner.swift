import Foundation
import Noise
import RelayClient
import RelayProtocol

/// Where the device shows the code and what happened.
public protocol DevicePairingConsole: AnyObject, Sendable {
    /// Show the 6-digit code for the person to type on the computer.
    func showCode(_ code: String)
    /// Take the code off the screen at once, and say why.
    func blankCode(_ reason: String)
    func say(_ text: String)
}

/// The I/O shell of `DevicePairing`: joins the code's room as the phone through a `RelayLink`,
/// runs the initiator handshake on each admitted connection, calls `/register` on a thread of its
/// own, feeds the state machine and carries out its actions. One loop on the caller's thread.
public final class DevicePairingRunner: Sendable {
    public enum Input: Sendable {
        case room(tag: Int, RoomPump.Event)
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

    public init(
        code: CompanionCode, deviceName: String, staticKey: KeyPair, console: any DevicePairingConsole,
        linkOptions: RelayLink.Options = RelayLink.Options(),
        configuration: DevicePairing.Configuration = DevicePairing.Configuration(),
        store: @escaping @Sendable ([UInt8], Bool) throws -> Void
    ) {
        self.code = code
        self.deviceName = deviceName
        self.staticKey = staticKey
        self.console = console
        self.linkOptions = linkOptions
        self.configuration = configuration
        self.store = store
    }

    private final class Loop {
        var machine: DevicePairing
        var pump: RoomPump?
        var tag = 0
        var channel: FramedChannel?

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
        loop.pump?.stop()
        loop.pump?.link.waitUntilStopped(timeout: 3)
        return result ?? .success(.cancelled)
    }

    /// Why the pairing could not be kept.
    public struct StoreFailure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    private func join(_ loop: Loop) {
        loop.pump?.stop()
        loop.channel = nil
        loop.tag += 1
        let link = RelayLink(
            endpoint: code.relay, room: code.room, role: .phone, credential: .none, options: linkOptions)
        let inputs = self.inputs
        loop.pump = RoomPump(link: link, tag: loop.tag) { tag, event in inputs.push(.room(tag: tag, event)) }
    }

    private func handle(_ input: Input, _ loop: Loop) -> [DevicePairing.Action] {
        let now = Date()
        switch input {
        case .cancel: return loop.machine.handle(.cancel)
        case .registration(let failure, let already):
            return loop.machine.handle(.registration(failure: failure, alreadyRegistered: already))
        case .room(let tag, let event):
            guard tag == loop.tag else { return [] }
            switch event {
            case .admitted(let connection):
                guard
                    let handshake = try? CompanionProfile.herdrRemote.initiatorHandshake(
                        pid: code.pidText, localStatic: staticKey, remoteStatic: code.staticPublicKey)
                else { return [] }
                var channel = FramedChannel(connection: connection, handshake: handshake)
                let actions = loop.machine.handle(.admitted(registrationToken: connection.registrationToken ?? []))
                do {
                    _ = try channel.start()
                    loop.channel = channel
                } catch {
                    connection.close()
                }
                return actions
            case .frame(let frame):
                guard loop.channel != nil else { return [] }
                var actions: [DevicePairing.Action] = []
                do {
                    // In place (`loop.channel?.`): a copy would share the cipher states.
                    for output in try loop.channel?.receive(frame) ?? [] {
                        switch output {
                        case .established(let established):
                            actions += loop.machine.handle(
                                .established(handshakeHash: established.handshakeHash, now: now))
                        case .message(let bytes):
                            guard CompanionMessage.isControl(bytes) else { continue }
                            actions += loop.machine.handle(
                                .message(try CompanionMessage(parsing: bytes), now: now))
                        }
                    }
                } catch {
                    return actions + drop(loop, reason: "\(error)", now: now)
                }
                return actions
            case .connectionEnded(let end):
                guard loop.channel != nil else {
                    return loop.machine.handle(.connectionEnded(reason: end.description, now: now))
                }
                loop.channel = nil
                return loop.machine.handle(.connectionEnded(reason: Self.reason(end), now: now))
            case .waiting(_, let reason):
                if reason.contains(AdmissionError.macOffline.rawValue) {
                    console.say(
                        "The computer is not in the pairing room yet; retrying (is herdr-host pair showing this code?)..."
                    )
                }
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

    static func reason(_ end: RelayConnectionEnd) -> String {
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
                let endpoint = code.relay
                let room = code.room
                let inputs = self.inputs
                let thread = Thread {
                    do {
                        let key = try RelayJoinKey(roomSecret: secret)
                        try RelayHTTPClient(endpoint: endpoint).register(
                            room: room, registrationToken: token, verifier: key.verifier)
                        inputs.push(.registration(failure: nil, alreadyRegistered: false))
                    } catch let error as RelayClientError {
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
            case .finished(let outcome):
                loop.channel?.connection.close()
                return .success(outcome)
            }
        }
        return nil
    }
}
