import CompanionDevice
import Foundation
import HerdrAgents
import Noise
import NoiseRoads
import PeerGate
import SSHClient

/// The Noise roads (home network, relay): the session through herdr-host over the end-to-end channel.
extension TerminalSession {
    /// Connects over the Noise roads and returns once the session runs, or has failed or closed.
    func connectOverNoiseRoads(generation: Int) async {
        let configuration: DeviceConnection.Configuration
        do {
            configuration = try noiseConfiguration(generation: generation)
        } catch {
            fail(.local, error.description)
            return
        }
        let connection = DeviceConnection(configuration)
        noiseConnection = connection
        state = .connecting
        let signal = StartSignal<Bool>()
        pendingNoiseStart = signal
        connection.start(
            onEvent: MainQueueEvents.handler { [weak self] event in
                guard let self else { return connection.cancel() }
                guard generation == self.generation else { return }
                self.noiseEvent(event, connection, signal: signal)
            })
        _ = await signal.value
        if pendingNoiseStart === signal { pendingNoiseStart = nil }
    }

    private func noiseEvent(
        _ event: DeviceConnection.Event, _ connection: DeviceConnection,
        signal: StartSignal<Bool>
    ) {
        switch event {
        case .connected(let road):
            self.road = road
            noteRoadWorked(road)
        case .agents(let board):
            options.onAgents?(board, CompanionBoardWatch.roadWord(road))
            guard options.agent != nil, resolvedAgent == nil else { break }
            switch resolveAgent(on: board) {
            case .success(let agent):
                connection.open(.agent(agent.key))
                if options.onAgents == nil { connection.watchAgents(false) }
            case .failure(let failure):
                let kind: DeviceConnection.Failure.Kind =
                    failure.kind == .agentsUnavailable ? .agentsUnavailable : .agentNotFound
                connection.end(.init(kind, failure.message))
            }
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
            noiseConnection = nil
            let started = signal.resumed
            signal.resume(false)
            noiseFinished(termination, started: started)
        }
    }

    private func noiseFinished(_ termination: DeviceConnection.Termination, started: Bool) {
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
                case .agentNotFound: .agentNotFound
                case .agentsUnavailable: .agentsUnavailable
                }
            let message = started ? SessionOutcome.withTail(failure.message, tail.readableLines()) : failure.message
            fail(kind, message)
        }
    }

    /// What the connection needs: the pairing (`CompanionSetup`), the session options; with
    /// `options.agent`, it watches agents and attaches nothing until the board named the agent,
    /// waiting `options.agentBoardTimeout` for it (a herdr-host older than the agents family
    /// never sends one).
    private func noiseConfiguration(generation: Int) throws(TerminalSessionError) -> DeviceConnection.Configuration {
        var attach: DeviceConnection.Attach? = .session(profile.herdrSession)
        if options.agent != nil { attach = resolvedAgent.map { .agent($0.key) } }
        var configuration = try CompanionSetup.configuration(
            for: profile, store: store, options: options, attach: attach, cols: size.cols, rows: size.rows)
        configuration.watchAgents = options.agent != nil && (resolvedAgent == nil || options.onAgents != nil)
        let wait = options.agentBoardTimeout.seconds
        configuration.boardWait = (
            wait,
            .init(
                .agentsUnavailable,
                "\(profile.name) sent no agents board within \(Int(wait)) s: its herdr-host is older than the agents family (update it to open an agent)"
            )
        )
        if let screen = options.screen {
            configuration.screen = true
            configuration.screenSink = screen
        }
        let policy = options.reconnect
        configuration.retryDelay = { attempt in policy.delay(beforeAttempt: attempt)?.seconds }
        let tail = tail
        if let direct = options.directOutput {
            configuration.outputSink = { bytes in
                tail.append(bytes)
                return direct(bytes)
            }
        } else {
            // Shown on the MainActor before the next frame is read, as the SSH road's output is:
            // a slow consumer holds the computer in its window.
            configuration.outputSink = { [weak self] bytes in
                tail.append(bytes)
                MainQueueEvents.runAndWait {
                    guard let self, generation == self.generation else { return }
                    self.onOutput?(bytes)
                }
                return true
            }
        }
        return configuration
    }

    private func noteRoadWorked(_ road: NoiseRoad) { CompanionSetup.noteRoadWorked(road, of: profile, in: store) }

    private func keepHomeAddresses(_ addresses: [HomeAddress]) {
        CompanionSetup.keepHomeAddresses(addresses, of: profile, in: store)
    }

    private func markRegistered() { CompanionSetup.markRegistered(profile, in: store) }
}

/// A relay-road set-up problem, in words.
struct TerminalSessionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
