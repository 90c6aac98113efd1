import Companion
import Foundation
import HomeRoad
import Noise
import RelayClient
import SSHClient

/// The Noise roads (home network, relay): the session through herdr-host over the end-to-end channel.
extension TerminalSession {
    /// Connects through the relay and returns once the session runs, or has failed or closed.
    func connectThroughRelay(generation: Int) async {
        let configuration: CompanionTerminalConnection.Configuration
        do {
            configuration = try relayConfiguration()
        } catch {
            fail(.local, error.description)
            return
        }
        let connection = CompanionTerminalConnection(configuration)
        relayConnection = connection
        state = .connecting
        let signal = StartSignal<Bool>()
        pendingRelayStart = signal
        connection.start(
            onEvent: MainQueueEvents.handler { [weak self] event in
                guard let self else { return connection.cancel() }
                guard generation == self.generation else { return }
                self.relayEvent(event, connection, signal: signal, generation: generation)
            })
        _ = await signal.value
        if pendingRelayStart === signal { pendingRelayStart = nil }
    }

    private func relayEvent(
        _ event: CompanionTerminalConnection.Event, _ connection: CompanionTerminalConnection,
        signal: StartSignal<Bool>, generation: Int
    ) {
        switch event {
        case .connected(let road):
            self.road = road
            noteRoadWorked(road)
        case .homeAddresses(let addresses):
            keepHomeAddresses(addresses)
        case .moved(let road, let reason):
            self.road = road
            noteRoadWorked(road)
            switch reason {
            case .homeIsBack:
                onNotice?("The home network is back: the session moved to it (\(road)), nothing lost.")
            case .networkChanged(let change):
                onNotice?(
                    "The network changed (\(change)): the session moved to a new connection via \(road), resumed where it was."
                )
            case .pathWentQuiet(let seconds):
                let quiet = String(format: "%.1f", seconds)
                onNotice?(
                    "The link went quiet for \(quiet) s: the session moved to a new connection via \(road), resumed where it was."
                )
            }
        case .started:
            connectedAt = .now
            state = .connected
            input.attach(connection)
            signal.resume(true)
        case .output(let bytes):
            tail.append(bytes)
            onOutput?(bytes)
            connection.acknowledgeOutput(bytes.count)
        case .reconnecting(let attempt, let reason):
            state = .reconnecting(attempt: attempt, reason: reason)
        case .resumed:
            state = .connected
        case .attachedAfresh(let reason):
            state = .connected
            onNotice?("The computer no longer had the session (\(reason)); attached afresh.")
        case .registered:
            markRegistered()
        case .finished(let termination):
            relayConnection = nil
            let started = signal.resumed
            signal.resume(false)
            relayFinished(termination, started: started, generation: generation)
        }
    }

    private func relayFinished(_ termination: CompanionTerminalConnection.Termination, started: Bool, generation: Int) {
        switch termination {
        case .cancelled:
            state = .closed
        case .exited(let status, let signal):
            let connectedFor = connectedAt.map { ContinuousClock.now - $0 } ?? .zero
            switch SessionOutcome.decide(
                .exited(status: status.map(Int.init), signal: signal), connectedFor: connectedFor,
                quickExitWindow: options.quickExitWindow, tail: tail.readableLines(), mayReconnect: false)
            {
            case .closed: state = .closed
            case .failed(let kind, let message): fail(kind, message)
            case .reconnect(let reason): fail(.connectionLost, reason)
            }
        case .failed(let failure):
            let kind: SessionFailureKind =
                switch failure.kind {
                case .pairingGone: .pairingGone
                case .unreachable: .unreachable
                case .relayRefused: .relayRefused
                case .connectionLost: .connectionLost
                case .sessionRefused: .remoteCommand
                case .protocolViolation: .handshake
                case .local: .local
                }
            let message = started ? SessionOutcome.withTail(failure.message, tail.readableLines()) : failure.message
            fail(kind, message)
        }
    }

    /// What the connection needs: the pairing from the profile and the secret store, this
    /// device's static key, the session options.
    private func relayConfiguration() throws(TerminalSessionError) -> CompanionTerminalConnection.Configuration {
        guard let road = profile.relay else { throw TerminalSessionError("\(profile.name) is not a companion host") }
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
        var relay: DeviceRelayConnection?
        if let endpoint {
            let pairing = DeviceRelayConnection.Pairing(
                relay: endpoint, computerKey: computerKey, pairingID: road.pairingID, roomSecret: secret,
                registered: road.registered)
            var connection = DeviceRelayConnection(pairing: pairing, deviceName: name, staticKey: key)
            connection.timeout = options.connectTimeout.seconds
            connection.options.connectTimeout = options.connectTimeout.seconds
            relay = connection
        }
        var greeting = DeviceRoads.Greeting(
            pairingID: road.pairingID, computerKey: computerKey,
            status: .init(name: name, roomSecret: secret, registered: road.registered), staticKey: key)
        greeting.timeout = options.connectTimeout.seconds
        let roads = DeviceRoads(greeting: greeting, relay: relay, home: road.home, choice: options.road)
        var configuration = CompanionTerminalConnection.Configuration(
            roads: roads, session: profile.herdrSession, cols: size.cols, rows: size.rows)
        let policy = options.reconnect
        configuration.retryDelay = { attempt in policy.delay(beforeAttempt: attempt)?.seconds }
        if let direct = options.directOutput {
            let tail = tail
            configuration.outputSink = { bytes in
                tail.append(bytes)
                return direct(bytes)
            }
        }
        return configuration
    }

    /// A session got through over `road` now: kept for `herdr-remote hosts`.
    private func noteRoadWorked(_ road: CompanionRoad) {
        guard var current = store.hosts.first(where: { $0.id == profile.id }), current.relay != nil else { return }
        if road.isHome { current.relay?.homeLastWorked = Date() } else { current.relay?.relayLastWorked = Date() }
        store.upsert(current)
    }

    /// The computer's home door moved (a new lease) or closed: later connections try it there.
    private func keepHomeAddresses(_ addresses: [HomeAddress]) {
        guard var current = store.hosts.first(where: { $0.id == profile.id }), let road = current.relay,
            road.home != addresses
        else { return }
        current.relay?.home = addresses
        store.upsert(current)
    }

    /// The relay took the room's verifier: later connections need not register it again.
    private func markRegistered() {
        guard var current = store.hosts.first(where: { $0.id == profile.id }), current.relay?.registered == false
        else { return }
        current.relay?.registered = true
        store.upsert(current)
    }
}

/// A relay-road set-up problem, in words.
struct TerminalSessionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
