import EndToEndChannel
import Foundation
import HerdrCrypto
import HerdrKit
import HomeRoad
import PeerGate
import PeerGateListener
import Plumbing

/// The home road's door: a gated listener (home-only, cellular refused, before a byte is read),
/// and on each admitted socket the same XK handshake as the relay road, answered only for a
/// paired device's static key. The handshake's first message names no device: the agent tries
/// each paired device's prologue (its pairing id) until one authenticates the message.
extension HostAgent {
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
            let listener = try configuration.openListener(port: configuration.port) { connection in
                work.push(.homeOpened(connection))
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
        for channel in loop.channels.records.values where channel.road == .home { channel.link.connection.close() }
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
        for channel in loop.channels.overdueHandshakes(now: MonotonicClock.now) {
            drop(channel, why: "its handshake took too long", loop)
        }
    }

    /// The door admitted `connection`: a channel of the table's, unless `maximumHomeLinks` are open.
    func homeOpened(_ connection: HomeConnection, _ loop: Loop) {
        guard let work = loop.work,
            let id = loop.channels.openHome(link: ChannelLink(home: connection), now: MonotonicClock.now)
        else { return connection.close() }
        connection.deliver { event in work.push(.home(id, event)) }
    }

    func homeEvent(_ event: FramePipeEvent, on id: HostChannelID, _ loop: Loop) {
        switch event {
        case .message(let frame):
            // A channel hung up (closing) hears nothing more.
            guard let link = loop.channels.link(id) else { return }
            if link.framed == nil { return firstHomeFrame(frame, id, link, loop) }
            homeFrame(frame, id, link, loop)
        case .ended(let end):
            guard let ending = loop.channels.ended(id, now: MonotonicClock.now) else { return }
            if ending.wasConnected, let device = ending.link.homeDevice {
                log("\(device.name): disconnected from the home network (\(end))")
            }
            sessionsWait(ending, loop)
        }
    }

    /// The handshake's first message: whichever paired device's prologue authenticates it.
    private func firstHomeFrame(_ frame: [UInt8], _ id: HostChannelID, _ link: ChannelLink, _ loop: Loop) {
        let devices = ((try? registry.devices()) ?? []).filter { $0.ended == nil }
        for device in devices {
            guard
                let handshake = try? CompanionProfile.herdrRemote.responderHandshake(
                    pid: device.pairingID, localStatic: staticKey)
            else { continue }
            var channel = FramedChannel(connection: link.connection, handshake: handshake)
            guard (try? channel.receive(frame)) != nil else { continue }
            link.framed = channel
            link.homeDevice = device
            loop.channels.identify(id, as: device.id)
            return
        }
        failedHomeHandshake(id, link, loop, "its handshake matched no paired device")
    }

    private func homeFrame(_ frame: [UInt8], _ id: HostChannelID, _ link: ChannelLink, _ loop: Loop) {
        let outputs: [FramedChannel.Output]
        do {
            outputs = try link.framed?.receive(frame) ?? []
        } catch {
            if loop.channels[id]?.state == .connected { return drop(id, why: "\(error)", loop) }
            return failedHomeHandshake(id, link, loop, "its handshake failed")
        }
        for output in outputs {
            switch output {
            case .established(let established):
                // The device's record is copied on the handshake's rare paths, not per frame.
                guard let device = link.homeDevice else { return drop(id, why: "no device", loop) }
                guard ConstantTime.equal(established.remoteStaticPublicKey ?? [], device.deviceKeyBytes) else {
                    return failedHomeHandshake(id, link, loop, "it used another device key than \(device.name)'s")
                }
                loop.channels.established(id, now: MonotonicClock.now)
                log("\(device.name): connected over the home network")
                loop.home?.lastDevice = .init(name: device.name, peer: link.homePeer ?? "?", at: Date())
                loop.statusDirty = true
                _ = try? registry.update(device.id) { $0.lastSeen = Date() }
            case .message(let bytes):
                let now = MonotonicClock.now
                guard let device = loop.channels.messageArrived(on: id, now: now) else {
                    return drop(id, why: "a message before the handshake ended", loop)
                }
                if let why = channelMessage(bytes, device: device, channel: id, now: now, loop) {
                    return drop(id, why: why, loop)
                }
            }
        }
    }

    private func failedHomeHandshake(_ id: HostChannelID, _ link: ChannelLink, _ loop: Loop, _ why: String) {
        loop.home?.failedHandshakes += 1
        loop.statusDirty = true
        log("home door: closed a connection from \(link.homePeer ?? "?"): \(why)")
        drop(id, why: why, loop)
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
