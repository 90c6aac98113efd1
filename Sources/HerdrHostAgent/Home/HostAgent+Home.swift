import Companion
import Foundation
import HerdrCrypto
import HerdrKit
import HomeRoad
import PeerGate
import PeerGateListener
import RelayClient

/// The home road's door: a gated listener (home-only, cellular refused, before a byte is read),
/// and on each admitted socket the same XK handshake as the relay road, answered only for a
/// paired device's static key. The handshake's first message names no device: the agent tries
/// each paired device's prologue (its pairing id) until one authenticates the message.
extension HostAgent {
    /// One connection through the home door.
    final class HomeLink {
        let id: Int
        let connection: HomeConnection
        let openedAt: Double
        var channel: FramedChannel?
        /// The paired device whose prologue the handshake's first message matched.
        var device: PairedDevice?
        var connected = false
        /// The agent ended it and logged why: its `ended` event says nothing more.
        var endLogged = false

        init(id: Int, connection: HomeConnection, openedAt: Double) {
            self.id = id
            self.connection = connection
            self.openedAt = openedAt
        }
    }

    /// The door's own state in the loop.
    struct HomeDoorState {
        var configuration: HomeDoorConfiguration
        var listener: GatedListener?
        var error: String?
        var addresses: [HomeAddress] = []
        var failedHandshakes = 0
        var lastDevice: AgentStatus.HomeDoorStatus.Arrival?
        var lastRefusedCount = 0
    }

    /// Seconds an admitted home peer has to complete its handshake.
    static let homeHandshakeTimeout = 10.0
    /// Home connections at once; more are closed as they arrive.
    static let maximumHomeLinks = 64

    /// Opens the door when the settings ask for one; a door that cannot listen is logged and
    /// shown in the status, and the relay road goes on without it.
    func openHomeDoor(_ loop: Loop) {
        guard let configuration = homeDoor else { return }
        var door = HomeDoorState(configuration: configuration)
        guard let work = loop.work else { return }
        do {
            let counter = loop.homeIDs
            let listener = try configuration.openListener(port: configuration.port) { connection in
                let id = counter.next()
                work.push(.homeOpened(id, connection))
                connection.deliver { event in work.push(.home(id, event)) }
            }
            door.listener = listener
            door.addresses = configuration.advertised(port: listener.port, interfaces: InterfaceAddresses.current())
            let shown = door.addresses.isEmpty ? "no home-network address yet" : HomeAddress.listText(door.addresses)
            log(
                "home door: listening on \(configuration.listenText) (port \(listener.port)); devices are told \(shown)"
            )
        } catch {
            door.error = "\(error)"
            log("home door: cannot listen on \(configuration.listenText) (\(error)); the relay road goes on without it")
        }
        loop.home = door
        loop.statusDirty = true
    }

    func closeHomeDoor(_ loop: Loop) {
        loop.home?.listener?.close()
        for link in loop.homeLinks.values { link.connection.close() }
    }

    /// Once a second: refusals counted by the accept thread reach the status file, handshakes that
    /// take too long are cut, and a changed address list is noted (`interfaces`: read just before).
    func checkHomeDoor(_ loop: Loop, interfaces: InterfaceAddresses?) {
        guard var door = loop.home, let listener = door.listener else { return }
        let refused = listener.status.refusedCount
        if refused != door.lastRefusedCount {
            door.lastRefusedCount = refused
            loop.statusDirty = true
        }
        let addresses = door.configuration.advertised(port: listener.port, interfaces: interfaces)
        if addresses != door.addresses {
            door.addresses = addresses
            loop.statusDirty = true
            log("home door: devices are now told \(addresses.isEmpty ? "no address" : HomeAddress.listText(addresses))")
        }
        loop.home = door
        let now = MonotonicClock.now
        for link in loop.homeLinks.values where !link.connected && now - link.openedAt > Self.homeHandshakeTimeout {
            link.connection.close()
        }
    }

    func homeEvent(_ input: Input, _ loop: Loop) {
        switch input {
        case .homeOpened(let id, let connection):
            guard loop.homeLinks.count < Self.maximumHomeLinks else { return connection.close() }
            loop.homeLinks[id] = HomeLink(id: id, connection: connection, openedAt: MonotonicClock.now)
        case .home(let id, .message(let frame)):
            guard let link = loop.homeLinks[id] else { return }
            if link.channel == nil { return firstHomeFrame(frame, link, loop) }
            homeFrame(frame, link, loop)
        case .home(let id, .ended(let end)):
            guard let link = loop.homeLinks.removeValue(forKey: id) else { return }
            guard let device = link.device, link.connected else { return }
            if !link.endLogged { log("\(device.name): disconnected from the home network (\(end))") }
            routeEnded(id, device: device.id, loop)
        default:
            break
        }
    }

    /// The handshake's first message: whichever paired device's prologue authenticates it.
    private func firstHomeFrame(_ frame: [UInt8], _ link: HomeLink, _ loop: Loop) {
        let devices = ((try? registry.devices()) ?? []).filter { $0.ended == nil }
        for device in devices {
            guard
                let handshake = try? CompanionProfile.herdrRemote.responderHandshake(
                    pid: device.pairingID, localStatic: staticKey)
            else { continue }
            var channel = FramedChannel(connection: link.connection, handshake: handshake)
            guard (try? channel.receive(frame)) != nil else { continue }
            link.channel = channel
            link.device = device
            return
        }
        failedHomeHandshake(link, loop, "its handshake matched no paired device")
    }

    private func homeFrame(_ frame: [UInt8], _ link: HomeLink, _ loop: Loop) {
        // The device's id only: its record is copied on the handshake's rare paths, not per frame.
        guard let deviceID = link.device?.id else { return link.connection.close() }
        let outputs: [FramedChannel.Output]
        do {
            outputs = try link.channel?.receive(frame) ?? []
        } catch {
            if link.connected { return drop(link.id, why: "\(error)", loop) }
            return failedHomeHandshake(link, loop, "its handshake failed")
        }
        for output in outputs {
            switch output {
            case .established(let established):
                guard let device = link.device else { return link.connection.close() }
                guard ConstantTime.equal(established.remoteStaticPublicKey ?? [], device.deviceKeyBytes) else {
                    return failedHomeHandshake(link, loop, "it used another device key than \(device.name)'s")
                }
                link.connected = true
                channelEstablished(link.id, loop)
                log("\(device.name): connected over the home network")
                loop.home?.lastDevice = .init(name: device.name, peer: link.connection.peer, at: Date())
                loop.statusDirty = true
                _ = try? registry.update(device.id) { $0.lastSeen = Date() }
            case .message(let bytes):
                guard link.connected else { return link.connection.close() }
                if let why = channelMessage(bytes, device: deviceID, channel: link.id, loop) {
                    return drop(link.id, why: why, loop)
                }
            }
        }
    }

    /// Closes `link` for `why`, the one log line of its end when a device was connected on it;
    /// the route is the caller's.
    func end(_ link: HomeLink, why: String, _ loop: Loop) {
        if link.connected, !link.endLogged, let device = link.device {
            log("\(device.name): disconnected from the home network (\(why))")
        }
        link.endLogged = true
        link.connection.close()
    }

    private func failedHomeHandshake(_ link: HomeLink, _ loop: Loop, _ why: String) {
        loop.home?.failedHandshakes += 1
        loop.statusDirty = true
        log("home door: closed a connection from \(link.connection.peer): \(why)")
        link.connection.close()
    }

    /// What the status file says about the door.
    func homeDoorStatus(_ loop: Loop) -> AgentStatus.HomeDoorStatus? {
        guard let door = loop.home else { return nil }
        let gate = door.listener?.status
        let listen =
            door.listener.map {
                "\(door.configuration.listenText.dropLast(String(door.configuration.port).count))\($0.port)"
            }
            ?? door.configuration.listenText
        return AgentStatus.HomeDoorStatus(
            listen: listen, error: door.error, addresses: door.addresses.map(\.description),
            refusedCount: gate?.refusedCount ?? 0, lastRefused: gate?.lastRefusedPeer,
            failedHandshakes: door.failedHandshakes, lastDevice: door.lastDevice)
    }
}
