import CLISupport
import CompanionPairing
import EndToEndChannel
import Foundation
import HerdrKit
import HomeRoad
import Noise
import PeerGate
import PeerGateListener
import Plumbing
import RelayClient
import SessionProtocol
import Synchronization

/// Where `herdr-host pair` talks to the person: it shows codes, asks for the typed one, and says
/// what happened. Its answers come back as `ComputerPairingRunner.Input.line`.
public protocol PairingConsole: AnyObject, Sendable {
    func showCode(_ code: CompanionCode)
    /// Ask for the code the device shows (`attemptsLeft` includes this one).
    func ask(attemptsLeft: Int)
    /// The pending question is void: discard what was typed for it, and say why.
    func voidQuestion(_ text: String)
    func say(_ text: String)
}

extension PairingConsole {
    /// Parked in the code's room (or listening at home), the first time for this code: a device can come now.
    func parked(_ code: CompanionCode) {
        let place =
            code.relay.map { "Parked at \($0.authority)" }
            ?? "Listening on the home network (\(HomeAddress.listText(code.home)))"
        say("\(place); waiting for a device to scan the code... (Ctrl+C cancels)")
    }
}

/// The I/O shell of `ComputerPairing`: parks in the code's room through a `RelayLink` (or, for a
/// code without a relay, listens on the home network through a gate of its own, home peers only),
/// runs the responder handshake on each connection, feeds the state machine and carries out its
/// actions. One loop on the caller's thread; the link, its connection and the person's input
/// arrive through `inputs`. Before its acknowledgement it tells the device where the agent's home
/// door listens (`doorAddresses`).
public final class ComputerPairingRunner: Sendable {
    public enum Input: Sendable {
        case room(tag: Int, RelayLink.RoomEvent)
        /// A home connection came through the pairing's own door (a code without a relay).
        case homeOpened(Int, HomeConnection)
        case home(Int, FramePipeEvent)
        /// A line the person typed.
        case line(String)
        /// Input ended: nothing more can be typed.
        case inputClosed
        /// Stop now (a signal, Ctrl+C).
        case cancel
    }

    public let inputs = EventQueue<Input>()
    let template: ComputerPairing.CodeTemplate
    let staticKey: KeyPair
    let registry: DeviceRegistry
    let console: any PairingConsole
    let linkOptions: RelayLink.Options
    let configuration: ComputerPairing.Configuration
    /// Where a home-only pairing listens (its port is its own: 0 for the kernel's pick).
    let homeDoor: HomeDoorConfiguration?
    let doorAddresses: @Sendable () -> [HomeAddress]

    /// A template without a relay needs `homeDoor`: the code's `home` is then where this pairing
    /// listens.
    public init(
        template: ComputerPairing.CodeTemplate, staticKey: KeyPair, registry: DeviceRegistry,
        console: any PairingConsole, linkOptions: RelayLink.Options = RelayLink.Options(),
        configuration: ComputerPairing.Configuration = ComputerPairing.Configuration(),
        homeDoor: HomeDoorConfiguration? = nil, doorAddresses: @escaping @Sendable () -> [HomeAddress] = { [] }
    ) {
        self.homeDoor = homeDoor
        self.doorAddresses = doorAddresses
        self.template = template
        self.staticKey = staticKey
        self.registry = registry
        self.console = console
        self.linkOptions = linkOptions
        self.configuration = configuration
    }

    /// The state of one run, owned by the loop.
    private final class Loop {
        var machine: ComputerPairing
        var link: RelayLink?
        var tag = 0
        var channel: FramedChannel?
        /// The home connection the channel runs on, if it is one.
        var homeID: Int?
        var listener: GatedListener?
        var sawFrame = false
        var parkedOnce = false
        var storedID: UUID?
        var failure: String?

        init(_ machine: ComputerPairing) { self.machine = machine }
    }

    /// Runs the pairing to its end. `finished` carries the outcome; a store failure ends it as
    /// `unfinished` with the reason said on the console.
    public func run() -> ComputerPairing.Outcome {
        var template = self.template
        var listener: GatedListener?
        if template.relay == nil {
            do {
                (listener, template.home) = try openHomeDoor()
            } catch {
                console.say("Cannot listen on the home network: \(error). Nothing was paired.")
                return .unfinished
            }
        }
        let loop = Loop(ComputerPairing(template: template, configuration: configuration))
        loop.listener = listener
        defer { listener?.close() }
        var outcome = ComputerPairing.Outcome.unfinished
        var actions = loop.machine.handle(.start(now: Date()))
        while true {
            if let ended = perform(actions, loop) {
                outcome = ended
                break
            }
            actions = []
            guard let input = inputs.next(timeout: 0.25) else {
                actions = loop.machine.handle(.tick(now: Date()))
                continue
            }
            actions = handle(input, loop)
        }
        loop.link?.stop()
        if let id = loop.storedID {
            _ = try? registry.update(id) { $0.finishingProcess = nil }
        }
        return outcome
    }

    /// The pairing's own home door (a code without a relay): home peers only, its own port.
    private func openHomeDoor() throws -> (GatedListener, [HomeAddress]) {
        guard let door = homeDoor else {
            throw HomeDoorConfiguration.Invalid("the home door is off (herdr-host config home-listen)")
        }
        let inputs = self.inputs
        let counter = ConnectionCounter()
        let listener = try door.openListener(port: 0) { connection in
            let id = counter.next()
            inputs.push(.homeOpened(id, connection))
            connection.deliver { event in inputs.push(.home(id, event)) }
        }
        let addresses = door.advertised(port: listener.port, interfaces: InterfaceAddresses.current())
        guard !addresses.isEmpty else {
            listener.close()
            throw HomeDoorConfiguration.Invalid("this computer has no home-network address to offer")
        }
        return (listener, addresses)
    }

    private func handle(_ input: Input, _ loop: Loop) -> [ComputerPairing.Action] {
        let now = Date()
        switch input {
        case .homeOpened(let id, let connection):
            // One device at a time, and only while a code is shown.
            guard loop.channel == nil, let pid = loop.machine.code?.pidText,
                let handshake = try? CompanionProfile.herdrRemote.responderHandshake(pid: pid, localStatic: staticKey)
            else {
                connection.close()
                return []
            }
            loop.channel = FramedChannel(connection: connection, handshake: handshake)
            loop.homeID = id
            loop.sawFrame = false
            return []
        case .home(let id, let event):
            guard id == loop.homeID else { return [] }
            switch event {
            case .message(let frame): return received(frame, loop, now: now)
            case .ended:
                loop.homeID = nil
                guard loop.channel != nil else { return [] }
                loop.channel = nil
                return loop.machine.handle(.connectionEnded(now: now))
            }
        case .cancel: return loop.machine.handle(.cancel)
        case .inputClosed:
            guard !loop.machine.isFinished else { return [] }
            console.say("Input closed: the code cannot be typed.")
            return loop.machine.handle(.cancel)
        case .line(let text): return loop.machine.isAsking ? loop.machine.handle(.typed(text, now: now)) : []
        case .room(let tag, let event):
            guard tag == loop.tag else { return [] }
            switch event {
            case .admitted(let connection):
                guard
                    let handshake = try? CompanionProfile.herdrRemote.responderHandshake(
                        pid: loop.machine.code?.pidText ?? "", localStatic: staticKey)
                else { return [] }
                loop.channel = FramedChannel(connection: connection, handshake: handshake)
                loop.sawFrame = false
                if !loop.parkedOnce, let code = loop.machine.code {
                    loop.parkedOnce = true
                    console.parked(code)
                }
                return []
            case .frame(let frame): return received(frame, loop, now: now)
            case .connectionEnded:
                guard loop.channel != nil else { return [] }
                loop.channel = nil
                return loop.machine.handle(.connectionEnded(now: now))
            case .waiting(let delay, let reason):
                if !loop.parkedOnce {
                    console.say("Cannot park at the relay yet (\(reason)); retrying in \(Int(delay.rounded(.up))) s.")
                }
                return []
            case .stopped(let reason):
                switch reason {
                case .stopped: return []
                default:
                    loop.channel = nil
                    return loop.machine.handle(.roomClosed(reason: reason.description, now: now))
                }
            }
        }
    }

    private func received(_ frame: [UInt8], _ loop: Loop, now: Date) -> [ComputerPairing.Action] {
        guard loop.channel != nil else { return [] }
        var actions: [ComputerPairing.Action] = []
        if !loop.sawFrame {
            loop.sawFrame = true
            actions += loop.machine.handle(.handshakeStarted(now: now))
        }
        do {
            // In place (`loop.channel?.`): a copy would share the cipher states.
            let outputs = try loop.channel?.receive(frame) ?? []
            for output in outputs {
                switch output {
                case .established(let established):
                    actions += loop.machine.handle(
                        .established(
                            handshakeHash: established.handshakeHash,
                            deviceStaticKey: established.remoteStaticPublicKey ?? [], now: now))
                case .message(let bytes):
                    let message: ChannelMessage
                    do {
                        message = try ChannelMessage(parsing: bytes)
                    } catch {
                        return actions + drop(loop, now: now, why: "The device sent \(error)")
                    }
                    guard case .control(let control) = message else {
                        return actions + drop(loop, now: now, why: "The device sent a session message while pairing")
                    }
                    actions += loop.machine.handle(.message(control, now: now))
                }
            }
        } catch {
            return actions + drop(loop, now: now)
        }
        return actions
    }

    /// The channel failed (`why`: the device broke its rule): the connection goes, and the link
    /// parks again.
    private func drop(_ loop: Loop, now: Date, why: String? = nil) -> [ComputerPairing.Action] {
        if loop.channel != nil {
            console.say(
                why.map { "\($0); connecting afresh." }
                    ?? "The end-to-end channel failed (a frame was lost, altered or replayed on the way, or the device changed); connecting afresh."
            )
        }
        loop.channel?.connection.close()
        loop.channel = nil
        return loop.machine.handle(.connectionEnded(now: now))
    }

    /// Carries out `actions`; the outcome once one is `finished`.
    private func perform(_ actions: [ComputerPairing.Action], _ loop: Loop) -> ComputerPairing.Outcome? {
        var pending = actions
        while !pending.isEmpty {
            let action = pending.removeFirst()
            switch action {
            case .showCode(let code):
                loop.link?.stop()
                loop.channel?.connection.close()
                loop.channel = nil
                loop.homeID = nil
                loop.parkedOnce = false
                loop.tag += 1
                console.showCode(code)
                guard let relay = code.relay else {
                    loop.parkedOnce = true
                    console.parked(code)
                    continue
                }
                let link = RelayLink(
                    endpoint: relay, room: code.room, role: .computer, credential: .none, options: linkOptions)
                let (inputs, tag) = (self.inputs, loop.tag)
                loop.link = link
                link.deliver { event in inputs.push(.room(tag: tag, event)) }
            case .ask(let left): console.ask(attemptsLeft: left)
            case .voidQuestion(let text): console.voidQuestion(text)
            case .say(let text): console.say(text)
            case .send(let message):
                guard loop.channel != nil else { continue }
                do {
                    // Where to find the agent later, before the ack ends the device's pairing.
                    if message == .statusAcknowledged {
                        try loop.channel?.send(CompanionMessage.home(doorAddresses()).bytes)
                    }
                    try loop.channel?.send(message.bytes)
                } catch {
                    pending = drop(loop, now: Date()) + pending
                }
            case .reconnect:
                loop.channel?.connection.close()
                loop.channel = nil
            case .store(let device):
                do {
                    try store(device, loop)
                } catch {
                    console.say("Cannot keep the device: \(error). Nothing was paired.")
                    // Tell the device no, and end: no acknowledgement may follow an unsaved secret.
                    _ = perform(loop.machine.handle(.cancel), loop)
                    return .unfinished
                }
            case .finished(let outcome): return outcome
            }
        }
        return nil
    }

    private func store(_ device: ComputerPairing.ConfirmedDevice, _ loop: Loop) throws(StorageError) {
        let id = loop.storedID ?? UUID()
        var record = PairedDevice(
            id: id, name: device.name, deviceKey: device.deviceStaticKey, pairingID: device.code.pidText,
            room: device.code.room, relay: device.code.relay?.origin, established: device.registered,
            pairedAt: Date(), lastSeen: Date())
        if let existing = try registry.devices().first(where: { $0.id == id }) {
            record.pairedAt = existing.pairedAt
            record.established = existing.established || device.registered
        }
        if let me = ProcessIdentity.current() {
            record.finishingProcess = PairedDevice.HeldBy(pid: me.pid, startTime: me.startTime, bootID: me.bootID)
        }
        try registry.save(record, roomSecret: device.roomSecret)
        loop.storedID = id
    }
}

/// Ids for the pairing door's connections, taken on its accept thread.
private final class ConnectionCounter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}
