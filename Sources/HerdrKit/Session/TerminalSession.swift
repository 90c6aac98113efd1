import CompanionDevice
import Foundation
import HerdrAgents
import NetworkPath
import NoiseRoads
import Observation
import SSHClient

/// A live terminal on a host, on any road: the SSH road with the device key, a PTY and the herdr
/// attach command; or, for a host paired with herdr-host (`profile.relay`), the end-to-end channel
/// over the Noise roads (home network, relay) to herdr-host, which runs the attach command in a
/// PTY there and resumes the session without loss when the link comes back
/// (`TerminalSession+NoiseRoads.swift`). Both share the states, `onOutput`,
/// `send`, `resize`, `disconnect` and the end-state rules.
///
/// SSH trust is two-phase. With no pin for `hostname:port`, the first connection stops right after
/// the key exchange, before any authentication; `confirmHostKey` is asked outside any live
/// handshake; on approval the key is pinned and a second connection must present exactly it.
/// A changed key is refused without a prompt and without authenticating. Every `await` is
/// followed by a generation check, so a `disconnect()` during a prompt or a backoff wins.
@MainActor @Observable
public final class TerminalSession {
    public let profile: HostProfile
    public internal(set) var state: SessionState = .idle
    /// Why the last failure happened, for exit codes; nil unless `state` is `.failed`.
    public internal(set) var failureKind: SessionFailureKind?
    /// The key that was refused because it differs from the pin, for the UI to show.
    public private(set) var rejectedHostKey: HostKeyChallenge?
    /// For a companion host, the road the current (or last) connection took.
    public internal(set) var road: NoiseRoad?
    /// With `options.agent`: the agent it named on the computer's board, once resolved.
    public internal(set) var resolvedAgent: HerdrAgent?

    /// Output (stdout, then stderr) in order, one call per network read burst. The next read
    /// waits until this returns, so a slow consumer stalls the host in its SSH window.
    @ObservationIgnored public var onOutput: (@MainActor ([UInt8]) -> Void)?

    /// Things a person should know that change no state: on the relay road, "the computer had
    /// lost the session; attached afresh".
    @ObservationIgnored public var onNotice: (@MainActor (String) -> Void)?

    /// The remote stdin, writable from any thread; live only while `.connected`.
    public nonisolated let input = TerminalInput()

    @ObservationIgnored let store: HostStore
    @ObservationIgnored public let options: TerminalSessionOptions
    @ObservationIgnored private let confirmHostKey: @MainActor (HostKeyChallenge) async -> Bool
    @ObservationIgnored var generation = 0
    @ObservationIgnored private var connection: SSHConnection? {
        didSet { if connection == nil { input.attach(nil) } }
    }
    /// The Noise roads' connection (home network, relay), while there is one.
    @ObservationIgnored var noiseConnection: DeviceConnection? {
        didSet { if noiseConnection == nil { input.attach(nil) } }
    }
    @ObservationIgnored private var pendingStart: StartSignal<AttemptStart>?
    /// The Noise roads' "has it started?" (true) or ended (false), while `connect` waits.
    @ObservationIgnored var pendingNoiseStart: StartSignal<Bool>?
    @ObservationIgnored var size = (cols: 80, rows: 24)
    /// The last output, for failure messages; shared with the connection thread in direct mode.
    @ObservationIgnored let tail = SharedOutputTail()
    @ObservationIgnored var connectedAt: ContinuousClock.Instant?
    @ObservationIgnored private var deviceKey: DeviceKeyPair?

    public convenience init(
        profile: HostProfile, store: HostStore, confirmHostKey: @escaping @MainActor (HostKeyChallenge) async -> Bool
    ) {
        self.init(profile: profile, store: store, options: TerminalSessionOptions(), confirmHostKey: confirmHostKey)
    }

    public init(
        profile: HostProfile, store: HostStore, options: TerminalSessionOptions,
        confirmHostKey: @escaping @MainActor (HostKeyChallenge) async -> Bool
    ) {
        self.profile = profile
        self.store = store
        self.options = options
        self.confirmHostKey = confirmHostKey
    }

    private var hostname: String { CanonicalHost.hostname(profile.hostname) }
    private var endpoint: String { CanonicalHost.pinKey(hostname: hostname, port: profile.port) }

    /// The command the session runs: herdr's agent attach for a resolved agent, else a non-blank
    /// `remoteCommand` verbatim, else herdr's attach.
    public var command: String {
        if let agent = resolvedAgent {
            return HerdrCommand.agentAttach(platform: profile.platform, session: agent.session, pane: agent.pane)
        }
        if let custom = profile.remoteCommand, !custom.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return custom
        }
        return HerdrCommand.attach(platform: profile.platform, session: profile.herdrSession)
    }

    // MARK: Public operations

    /// Connects, asking `confirmHostKey` on first use, and returns once the session is
    /// `.connected`, or has `.failed`/`.closed`. Output keeps flowing to `onOutput` afterwards.
    public func connect(cols: Int, rows: Int) async {
        switch state {
        case .connecting, .connected, .reconnecting: return
        case .idle, .failed, .closed: break
        }
        generation += 1
        let generation = generation
        failureKind = nil
        rejectedHostKey = nil
        tail.reset()
        size = (max(cols, 1), max(rows, 1))

        if profile.companion != nil
            || profile.remoteCommand?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ?? true,
            let name = profile.herdrSession, !HerdrSessionName.isValid(name)
        {
            fail(.invalidSessionName, "Invalid herdr session name: \(HerdrCommand.posixQuoted(name))")
            return
        }
        if profile.companion != nil { return await connectOverNoiseRoads(generation: generation) }
        do {
            deviceKey = try DeviceKey.load(in: store.directory)
        } catch {
            fail(.local, "The device key is unavailable: \(error)")
            return
        }
        state = .connecting
        guard let pin = await trustedHostKey(generation: generation) else { return }
        guard await resolveAgentOverSSH(pin: pin, generation: generation) else { return }
        switch await startAttempt(generation: generation, pin: pin) {
        case .started:
            return
        case .ended(let termination):
            guard generation == self.generation else { return }
            failBeforeStart(termination, pin: pin)
        }
    }

    /// Writes to the remote command's stdin. Ignored unless connected.
    public func send(_ bytes: [UInt8]) {
        guard state == .connected else { return }
        connection?.send(bytes)
        noiseConnection?.send(bytes)
    }

    /// Closes the remote command's stdin (after queued input), as `ssh` does when its stdin ends.
    public func sendEOF() {
        guard state == .connected else { return }
        connection?.sendEOF()
        noiseConnection?.sendEOF()
    }

    /// Sends an SSH window-change; the size is also used for the next (re)connect.
    public func resize(cols: Int, rows: Int) {
        size = (max(cols, 1), max(rows, 1))
        connection?.resize(cols: size.cols, rows: size.rows)
        noiseConnection?.resize(cols: size.cols, rows: size.rows)
    }

    /// Ends the session: `.closed`, whatever it was doing (even waiting on a host-key prompt).
    public func disconnect() {
        generation += 1
        input.attach(nil)
        connection?.cancel()
        connection = nil
        noiseConnection?.cancel()
        noiseConnection = nil
        pendingStart?.resume(.ended(.cancelled))
        pendingStart = nil
        pendingNoiseStart?.resume(false)
        pendingNoiseStart = nil
        failureKind = nil
        state = .closed
    }

    // MARK: Trust

    /// The pinned key to require, after a first-use probe and prompt if there was no pin.
    /// nil means the session already ended (failed, or closed by a disconnect).
    private func trustedHostKey(generation: Int) async -> SSHPublicKey? {
        let pins = HostKeyPins(directory: store.directory)
        do {
            if let pin = try pins.pinnedKey(hostname: hostname, port: profile.port) { return pin }
        } catch {
            fail(.local, "Cannot read pinned host keys: \(error)")
            return nil
        }
        let probe: SSHTermination
        do {
            let connection = try SSHConnection(configuration: configuration(policy: .probe, preferred: []))
            probe = await Self.runToEnd(
                connection, whileCurrent: { [weak self] in self?.generation == generation },
                register: { [weak self] in self?.connection = $0 })
        } catch {
            fail(.local, error.description)
            return nil
        }
        guard generation == self.generation else { return nil }
        connection = nil
        guard case .probed(let presented) = probe else {
            failBeforeStart(probe, pin: nil)
            return nil
        }
        guard let key = try? SSHPublicKey(blob: presented.blob) else {
            fail(.handshake, "\(endpoint) presented a host key that cannot be parsed")
            return nil
        }
        let challenge = HostKeyChallenge(
            hostname: hostname, port: profile.port, fingerprintSHA256: key.fingerprintSHA256, algorithm: key.algorithm,
            kind: .firstUse)
        let approved = await confirmHostKey(challenge)
        guard generation == self.generation else { return nil }
        guard approved else {
            fail(
                .hostKeyNotTrusted,
                "Host key for \(endpoint) (\(key.fingerprintSHA256)) was not trusted; nothing was sent")
            return nil
        }
        do {
            // Add-only: if another session pinned first, its key stands and ours must match it.
            _ = try pins.pin(key, hostname: hostname, port: profile.port)
            return try pins.pinnedKey(hostname: hostname, port: profile.port) ?? key
        } catch {
            fail(.local, "Cannot pin the host key for \(endpoint): \(error)")
            return nil
        }
    }

    // MARK: Attempts

    /// Starts a connection that requires `pin`, and waits until the command runs or it ends.
    /// A pump task keeps delivering output afterwards and handles the end of the session.
    private func startAttempt(generation: Int, pin: SSHPublicKey) async -> AttemptStart {
        let connection: SSHConnection
        do {
            connection = try SSHConnection(
                configuration: configuration(policy: .accept([pin.blob]), preferred: [pin.algorithm]))
        } catch {
            return .ended(.failed(error))
        }
        self.connection = connection
        let signal = StartSignal<AttemptStart>()
        pendingStart = signal
        var started = false
        connection.start(
            onEvent: MainQueueEvents.handler { [weak self] event in
                guard let self else { return connection.cancel() }
                switch event {
                case .sessionStarted:
                    guard generation == self.generation else { break }
                    started = true
                    self.connectedAt = .now
                    self.state = .connected
                    self.input.attach(connection)
                    signal.resume(.started)
                case .output(let stdout, let stderr):
                    guard generation == self.generation else { break }
                    let chunk = stderr.isEmpty ? stdout : stdout + stderr
                    self.tail.append(chunk)
                    self.onOutput?(chunk)
                    connection.acknowledgeOutput()
                case .finished(let termination, let runTime):
                    if !started {
                        signal.resume(.ended(termination))
                    } else if generation == self.generation {
                        self.sessionEnded(termination, runTime: runTime, generation: generation)
                    }
                default:
                    break
                }
            })
        return await signal.value
    }

    /// An established session ended: close, fail, or reattach.
    func sessionEnded(_ termination: SSHTermination, runTime: Duration?, generation: Int) {
        connection = nil
        let connectedFor = runTime ?? connectedAt.map { ContinuousClock.now - $0 } ?? .zero
        let outcome = SessionOutcome.decide(
            termination, connectedFor: connectedFor, quickExitWindow: options.quickExitWindow,
            tail: tail.readableLines(),
            mayReconnect: options.reconnect.maximumAttempts > 0)
        switch outcome {
        case .closed:
            state = .closed
        case .failed(let kind, let message):
            fail(kind, message)
        case .reconnect(let reason):
            // A connection that had been up a while is reattached at once, as on the other roads
            // (`RetryAfterDrop`); one that drops as soon as it is up backs off from the start.
            let atOnce = connectedFor >= .seconds(RetryAfterDrop.steadyRoad)
            Task { await reattach(generation: generation, reason: reason, atOnce: atOnce) }
        }
    }

    /// Sleeps `delay`, or less when the kernel tells of an address or route change (a network
    /// that came back, another that came up): the next attempt then goes at once, as on the
    /// other roads.
    private static func wait(_ delay: Duration) async {
        let sleeper = Task { try? await Task.sleep(for: delay) }
        let monitor = try? RouteMonitor { sleeper.cancel() }
        await sleeper.value
        monitor?.stop()
    }

    /// Reattaches to the same session with backoff, as long as failures look transient;
    /// `atOnce`: the first attempt goes without the backoff's wait.
    private func reattach(generation: Int, reason: String, atOnce: Bool) async {
        var attempt = 1
        var lastReason = reason
        while let delay = options.reconnect.delay(beforeAttempt: attempt) {
            state = .reconnecting(attempt: attempt, reason: lastReason)
            if !(atOnce && attempt == 1) { await Self.wait(delay) }
            guard generation == self.generation else { return }
            let pin: SSHPublicKey?
            do {
                pin = try HostKeyPins(directory: store.directory).pinnedKey(hostname: hostname, port: profile.port)
            } catch {
                fail(.local, "Cannot read pinned host keys: \(error)")
                return
            }
            guard let pin else {
                fail(
                    .connectionLost,
                    "\(reason)\nThe host key pin for \(endpoint) was forgotten; connect again to confirm the key")
                return
            }
            switch await startAttempt(generation: generation, pin: pin) {
            case .started:
                return
            case .ended(let termination):
                guard generation == self.generation else { return }
                if case .failed(let failure) = termination, SessionOutcome.isTransient(failure) {
                    lastReason = failure.message
                    attempt += 1
                    continue
                }
                failBeforeStart(termination, pin: pin)
                return
            }
        }
        fail(.connectionLost, "\(reason)\nGave up reattaching after \(attempt - 1) attempts; last: \(lastReason)")
    }

    // MARK: Failures

    /// Maps a connection that ended before its command started to `.failed` (or `.closed` when cancelled).
    private func failBeforeStart(_ termination: SSHTermination, pin: SSHPublicKey?) {
        connection = nil
        switch termination {
        case .cancelled:
            state = .closed
        case .hostKeyRejected(let presented):
            let presentedKey = try? SSHPublicKey(blob: presented.blob)
            let now = presentedKey?.fingerprintSHA256 ?? "an unparseable key"
            let was = pin?.fingerprintSHA256 ?? "unknown"
            rejectedHostKey = HostKeyChallenge(
                hostname: hostname, port: profile.port, fingerprintSHA256: now, algorithm: presented.algorithm,
                kind: .changed(previousFingerprint: was))
            fail(
                .hostKeyChanged,
                "Host key for \(endpoint) changed: was \(was), now \(now). No authentication was attempted; forget the pinned key only if you know why it changed"
            )
        case .failed(let failure):
            fail(SessionOutcome.kind(of: failure), failure.message)
        case .probed, .exited:
            fail(.connectionLost, "The connection to \(endpoint) ended before the session started")
        }
    }

    func fail(_ kind: SessionFailureKind, _ message: String) {
        failureKind = kind
        state = .failed(message)
    }

    // MARK: Plumbing

    /// How to log in to the host, from the profile, the stores and the options.
    var login: SSHLogin {
        SSHLogin(
            profile: profile, deviceKey: deviceKey?.privateKey, password: store.password(for: profile.id),
            options: options)
    }

    private func configuration(policy: HostKeyPolicy, preferred: [String]) -> SSHConnectionConfiguration {
        var configuration = login.configuration(
            policy: policy, preferred: preferred, pty: PTYRequest(cols: size.cols, rows: size.rows), command: command)
        configuration.receiveWindow = options.receiveWindow
        configuration.maximumChunk = options.maximumChunk
        if let direct = options.directOutput {
            let tail = tail
            configuration.outputSink = { stdout, stderr in
                let chunk = stderr.isEmpty ? stdout : stdout + stderr
                tail.append(chunk)
                return direct(chunk)
            }
        }
        return configuration
    }

    /// Runs a connection that never reaches a command (the probe) to its end.
    private static func runToEnd(
        _ connection: SSHConnection, whileCurrent: @MainActor () -> Bool, register: @MainActor (SSHConnection) -> Void
    ) async -> SSHTermination {
        register(connection)
        connection.start()
        var termination = SSHTermination.cancelled
        for await event in connection.events {
            if case .finished(let end, _) = event { termination = end }
            if !whileCurrent() { connection.cancel() }
        }
        return termination
    }
}

/// How a connection attempt came out: the command runs, or the connection ended first.
private enum AttemptStart {
    case started
    case ended(SSHTermination)
}

/// A one-shot answer to "did the attempt start?"; later answers are ignored (the first wins).
@MainActor
final class StartSignal<Answer: Sendable> {
    private var result: Answer?
    private var waiter: CheckedContinuation<Answer, Never>?

    /// Whether an answer came.
    var resumed: Bool { result != nil }

    func resume(_ answer: Answer) {
        guard result == nil else { return }
        result = answer
        waiter?.resume(returning: answer)
        waiter = nil
    }

    var value: Answer {
        get async {
            if let result { return result }
            return await withCheckedContinuation { waiter = $0 }
        }
    }
}
