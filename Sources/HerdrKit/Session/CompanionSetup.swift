import CompanionDevice
import EndToEndChannel
import Foundation
import Noise
import NoiseRoads
import PeerGate
import RelayClient

/// What every connection to a companion host needs from the saved pairing, and what it keeps
/// there afterwards (the road that worked, the computer's home addresses, the room registered):
/// one place for `connect` and for watching agents.
@MainActor
enum CompanionSetup {
    /// A connection's configuration for the companion host `profile`: its pairing from the
    /// profile and the secret store, this device's static key, the options' time limits and
    /// road; `attach` what it attaches.
    static func configuration(
        for profile: HostProfile, store: HostStore, options: TerminalSessionOptions,
        attach: DeviceConnection.Attach?, cols: Int, rows: Int
    ) throws(TerminalSessionError) -> DeviceConnection.Configuration {
        guard let road = profile.companion else {
            throw TerminalSessionError("\(profile.name) is not a companion host")
        }
        var endpoint: RelayEndpoint?
        if let relay = road.relay {
            do {
                endpoint = try RelayEndpoint(parsing: relay)
            } catch {
                throw TerminalSessionError("The saved relay of \(profile.name) (\(relay)) is not usable: \(error)")
            }
        }
        guard let computerKey = Base64URL.decodeCanonical(road.computerKey), computerKey.count == 32 else {
            throw TerminalSessionError("The saved computer key of \(profile.name) is not usable; pair again")
        }
        let secret: [UInt8]?
        do {
            secret = try SecretStore(directory: store.directory).roomSecret(for: profile.id)
        } catch {
            throw TerminalSessionError("Cannot read the room secret of \(profile.name): \(error)")
        }
        guard let secret else {
            throw TerminalSessionError("No room secret is kept for \(profile.name); pair it again")
        }
        let loaded: KeyPair?
        do {
            loaded = try StaticKeyFile.load(store.directory.companionKeyFile)
        } catch {
            throw TerminalSessionError("Cannot read this device's relay key: \(error)")
        }
        guard let key = loaded else {
            throw TerminalSessionError(
                "This device's relay key (\(store.directory.companionKeyFile.path)) is missing; pair again")
        }
        let name = road.deviceName ?? Pairing.sanitizedDeviceName(ProcessInfo.processInfo.hostName)
        var relay: RelayRoad?
        if let endpoint {
            let pairing = RelayRoad.Pairing(
                relay: endpoint, computerKey: computerKey, pairingID: road.pairingID, roomSecret: secret,
                registered: road.registered)
            var connection = RelayRoad(pairing: pairing, deviceName: name, staticKey: key)
            connection.timeout = options.connectTimeout.seconds
            connection.options.connectTimeout = options.connectTimeout.seconds
            relay = connection
        }
        var greeting = DeviceRoads.Greeting(
            pairingID: road.pairingID, computerKey: computerKey,
            status: .init(name: name, roomSecret: secret, registered: road.registered), staticKey: key)
        greeting.timeout = options.connectTimeout.seconds
        let roads = DeviceRoads(greeting: greeting, relay: relay, home: road.home, choice: options.road)
        return DeviceConnection.Configuration(roads: roads, attach: attach, cols: cols, rows: rows)
    }

    /// A session got through over `road` now: kept for `herdr-remote hosts`.
    static func noteRoadWorked(_ road: NoiseRoad, of profile: HostProfile, in store: HostStore) {
        guard var current = store.hosts.first(where: { $0.id == profile.id }), current.companion != nil else { return }
        if road.isHome {
            current.companion?.homeLastWorked = Date()
        } else {
            current.companion?.relayLastWorked = Date()
        }
        store.upsert(current)
    }

    /// The computer's home door moved (a new lease) or closed: later connections try it there.
    static func keepHomeAddresses(_ addresses: [HomeAddress], of profile: HostProfile, in store: HostStore) {
        guard var current = store.hosts.first(where: { $0.id == profile.id }), let road = current.companion,
            road.home != addresses
        else { return }
        current.companion?.home = addresses
        store.upsert(current)
    }

    /// The relay took the room's verifier: later connections need not register it again.
    static func markRegistered(_ profile: HostProfile, in store: HostStore) {
        guard var current = store.hosts.first(where: { $0.id == profile.id }), current.companion?.registered == false
        else { return }
        current.companion?.registered = true
        store.upsert(current)
    }
}
