import Foundation
import HerdrCrypto
import PeerGate
import SSHClient
import Synchronization

/// QR pairing over SSH ("ADR 0002"): the device side of the enroll exchange (interop-facts §3–4).
public enum Pairing {
    /// What enroll is doing, for the person watching.
    public enum Progress: Sendable, Equatable {
        /// Connecting to this name from the code (names are tried in order).
        case connecting(hostname: String)
        /// The request is on the computer, which now asks its person to approve this device.
        case waitingForApproval(computer: String)
    }

    /// Limits of one enroll.
    public struct Options: Sendable {
        /// How long enroll may take in all, from the first connection to the computer's answer. The
        /// phone gives up after 180 s; the computer's own approval window is 120 s.
        public var timeLimit: Duration = .seconds(180)
        /// How long one name may take to accept a TCP connection before the next name is tried.
        public var connectTimeout: Duration = .seconds(10)
        /// How long the key exchange and authentication with one name may take.
        public var handshakeTimeout: Duration = .seconds(30)

        public init() {}
    }

    /// The command string sent with the exec request. The one-time key's forced command replaces it
    /// (sshd passes it on as `SSH_ORIGINAL_COMMAND`, and the helper ignores it).
    public static let enrollCommand = "herdr-pair"
    /// Host key algorithms asked for first: a code only lists Ed25519 and ECDSA keys.
    public static let hostKeyAlgorithms = [
        "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
    ]
    /// The most helper output kept per stream; only the last line decides.
    static let maximumOutput = 64 * 1024

    /// Pairs this device with the computer that showed `payload`, as the transport record says:
    ///
    /// 1. The expiry is checked again (a confirmation screen can sit open).
    /// 2. The pin of every name and port in the code is read before any connection. A pin that is not
    ///    one of the code's fingerprints fails with `conflictingPin`; a pin that is becomes the only
    ///    key accepted for that name.
    /// 3. The names are tried in order with the code's one-time key. The connected address is checked
    ///    with `PeerPolicy.tailnetOnly` before any SSH byte is sent; a name outside the tailnet, like
    ///    one that never answers, moves on to the next. The host key must be one of the accepted
    ///    fingerprints (no prompt), else `hostKeyMismatch`, and nothing is authenticated.
    /// 4. The request runs with no PTY: `ssh-ed25519 <device key>\n<device name>\n`, then EOF; stdout
    ///    and stderr are read separately until the helper exits. The name is sanitized first
    ///    (``sanitizedDeviceName(_:)``).
    /// 5. The answer is ``Verdict/decide(stdout:status:)``. On approval the presented host key is
    ///    pinned add-only (a different pin that appeared meanwhile is `conflictingPin`).
    ///
    /// Returns the profile to save: the code's computer name (printable), username, port, platform
    /// and session, the name that connected, and never a remote command. Cancelling the task closes
    /// the connection within about a second, even while the computer is deciding, and pins nothing.
    ///
    /// - Parameter directory: where the device key and the pins (`known_hosts`) are.
    @MainActor
    public static func enroll(
        payload: PairingPayload, deviceName: String, directory: ConfigDirectory = .standard(),
        options: Options = Options(), progress: @escaping @MainActor (Progress) -> Void = { _ in }
    ) async throws(PairingError) -> HostProfile {
        let run = EnrollRun(
            payload: payload, deviceName: deviceName, directory: directory, options: options, progress: progress)
        return try await run.run()
    }
}

/// One enroll: the names in order, one connection at a time, and the time limit over all of it.
@MainActor
private final class EnrollRun {
    private let payload: PairingPayload
    private let deviceName: String
    private let directory: ConfigDirectory
    private let options: Options
    private let progress: @MainActor (Pairing.Progress) -> Void
    private let pins: HostKeyPins
    /// The code's names, canonical (a parsed code's already are; a payload built in code may not be).
    private let hostnames: [String]

    private var connection: SSHConnection?
    private var timedOut = false

    typealias Options = Pairing.Options

    init(
        payload: PairingPayload, deviceName: String, directory: ConfigDirectory, options: Options,
        progress: @escaping @MainActor (Pairing.Progress) -> Void
    ) {
        self.payload = payload
        self.deviceName = deviceName
        self.directory = directory
        self.options = options
        self.progress = progress
        self.pins = HostKeyPins(directory: directory)
        self.hostnames = payload.hostnames.map(CanonicalHost.hostname)
    }

    func run() async throws(PairingError) -> HostProfile {
        // Step 1: the code may have expired while a confirmation screen sat open.
        guard !payload.isExpired() else { throw .linkExpired }
        // Step 2: pins decide what each name may present, before any connection.
        let accepted = try acceptedKeys()
        if Task.isCancelled { throw .cancelled }

        let deviceKey: DeviceKeyPair
        let oneTimeKey: Ed25519PrivateKey
        do {
            deviceKey = try DeviceKey.load(in: directory)
        } catch {
            throw .failed(status: nil, output: "The device key is unavailable: \(error)")
        }
        do {
            oneTimeKey = try Ed25519PrivateKey(seed: payload.oneTimeKeySeed)
        } catch {
            throw .failed(status: nil, output: "The pairing code's one-time key is unusable: \(error)")
        }
        let request = Array(
            (deviceKey.publicKey.openSSHString + "\n" + Pairing.sanitizedDeviceName(deviceName) + "\n").utf8)

        let deadline = ContinuousClock.now + options.timeLimit
        let limit = Task { @MainActor [weak self] in
            try? await Task.sleep(until: deadline)
            guard !Task.isCancelled, let self else { return }
            self.timedOut = true
            self.connection?.cancel()
        }
        defer { limit.cancel() }

        // Step 3: the names in order.
        var refused: (hostname: String, address: String)?
        var lastReason = "no name in the pairing code could be reached"
        for hostname in hostnames {
            if Task.isCancelled { throw .cancelled }
            if timedOut { throw .unreachable(timeLimitText) }
            progress(.connecting(hostname: hostname))
            let attempt = await attempt(
                hostname: hostname, accepted: accepted[hostname]!, request: request, oneTimeKey: oneTimeKey,
                deadline: deadline)
            if Task.isCancelled { throw .cancelled }
            switch try conclude(attempt, hostname: hostname) {
            case .paired(let hostKey):
                return try finish(hostname: hostname, hostKey: hostKey)
            case .refused(let address):
                if refused == nil { refused = (hostname, address) }
                lastReason = "\(hostname) is \(address), outside the tailnet"
            case .nextName(let reason):
                lastReason = reason
            }
        }
        if let refused { throw .notOnTailnet(hostname: refused.hostname, address: refused.address) }
        throw .unreachable(lastReason)
    }

    private var timeLimitText: String {
        "no answer within \(Int(options.timeLimit.components.seconds)) s"
    }

    // MARK: Step 2: pins

    /// The fingerprints each name may present: the code's, or only the pinned key when it is one of them.
    private func acceptedKeys() throws(PairingError) -> [String: (fingerprints: Set<String>, algorithm: String?)] {
        var accepted: [String: (fingerprints: Set<String>, algorithm: String?)] = [:]
        for hostname in hostnames {
            let pin: SSHPublicKey?
            do {
                pin = try pins.pinnedKey(hostname: hostname, port: payload.port)
            } catch {
                throw .failed(status: nil, output: "Cannot read pinned host keys: \(error)")
            }
            guard let pin else {
                accepted[hostname] = (Set(payload.hostKeyFingerprints), nil)
                continue
            }
            guard payload.hostKeyFingerprints.contains(pin.fingerprintSHA256) else {
                throw .conflictingPin(hostname: hostname, port: payload.port)
            }
            accepted[hostname] = ([pin.fingerprintSHA256], pin.algorithm)
        }
        return accepted
    }

    // MARK: Step 3 and 4: one name

    /// What one connection came to.
    struct Attempt {
        var termination: SSHTermination?
        var hostKey: SSHHostKeyBlob?
        var sessionStarted = false
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        /// The addresses the tailnet gate refused, in order.
        var refusedAddresses: [String] = []
    }

    private func attempt(
        hostname: String, accepted: (fingerprints: Set<String>, algorithm: String?), request: [UInt8],
        oneTimeKey: Ed25519PrivateKey, deadline: ContinuousClock.Instant
    ) async -> Attempt {
        var result = Attempt()
        let refusals = RefusalLog()
        let remaining = max(deadline - ContinuousClock.now, .milliseconds(1))
        var configuration = SSHConnectionConfiguration(
            host: hostname, port: payload.port, hostKeyPolicy: .acceptFingerprints(accepted.fingerprints),
            preferredHostKeyAlgorithms: accepted.algorithm.map { [$0] + Pairing.hostKeyAlgorithms }
                ?? Pairing.hostKeyAlgorithms,
            credentials: SSHCredentials(username: payload.username, privateKey: oneTimeKey),
            pty: nil, command: Pairing.enrollCommand,
            peerAddressCheck: { address in
                // The one address classifier of the project decides; nothing else is consulted.
                guard let refusal = PeerPolicy.tailnetOnly.decide(address).refusal else { return nil }
                refusals.record(address)
                return refusal.message
            })
        configuration.connectTimeout = min(options.connectTimeout, remaining)
        configuration.handshakeTimeout = min(options.handshakeTimeout, remaining)

        let connection: SSHConnection
        do {
            connection = try SSHConnection(configuration: configuration)
        } catch {
            result.termination = .failed(error)
            return result
        }
        self.connection = connection
        defer { self.connection = nil }
        if timedOut { connection.cancel() }
        connection.start()
        await withTaskCancellationHandler {
            for await event in connection.events {
                switch event {
                case .hostKey(let key):
                    result.hostKey = key
                case .sessionStarted:
                    result.sessionStarted = true
                    connection.send(request)
                    connection.sendEOF()
                    progress(
                        .waitingForApproval(computer: PairingCodeRules.printableText(payload.computerName, limit: 64)))
                case .output(let stdout, let stderr):
                    Self.append(stdout, to: &result.stdout)
                    Self.append(stderr, to: &result.stderr)
                    connection.acknowledgeOutput()
                case .finished(let termination, _):
                    result.termination = termination
                case .connected, .authenticated:
                    break
                }
            }
        } onCancel: {
            connection.cancel()
        }
        result.refusedAddresses = refusals.addresses
        return result
    }

    private static func append(_ bytes: [UInt8], to buffer: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        buffer += bytes
        if buffer.count > Pairing.maximumOutput { buffer.removeFirst(buffer.count - Pairing.maximumOutput) }
    }

    // MARK: Step 5

    enum Conclusion {
        case paired(SSHHostKeyBlob)
        /// The tailnet gate refused this address; try the next name.
        case refused(address: String)
        case nextName(reason: String)
    }

    /// Whether this name paired, failed for good, or the next name should be tried.
    private func conclude(_ attempt: Attempt, hostname: String) throws(PairingError) -> Conclusion {
        let output = Self.readableOutput(stdout: attempt.stdout, stderr: attempt.stderr)
        switch attempt.termination {
        case nil, .cancelled?:
            if timedOut {
                if attempt.sessionStarted {
                    throw .failed(status: nil, output: "The computer gave \(timeLimitText).")
                }
                throw .unreachable(timeLimitText)
            }
            throw .cancelled
        case .exited(let status, let signal)?:
            switch Pairing.Verdict.decide(stdout: attempt.stdout, status: status) {
            case .approved:
                guard let hostKey = attempt.hostKey else { throw .failed(status: status, output: output) }
                return .paired(hostKey)
            case .denied: throw .denied(output: output)
            case .expired: throw .expired(output: output)
            case .used: throw .used(output: output)
            case .invalid, .failed:
                let killed = signal.map { "The pairing helper was killed by signal \($0)." }
                throw .failed(
                    status: status,
                    output: [killed, output].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n"))
            }
        case .hostKeyRejected(let presented)?:
            let fingerprint = presented.fingerprintSHA256
            // In the code but not the pinned key: the pin narrowed what this name may present.
            if payload.hostKeyFingerprints.contains(fingerprint) {
                throw .conflictingPin(hostname: hostname, port: payload.port)
            }
            throw .hostKeyMismatch(hostname: hostname, fingerprint: fingerprint)
        case .probed?:
            throw .failed(status: nil, output: "The connection to \(hostname) stopped after the key exchange")
        case .failed(let failure)?:
            switch failure.kind {
            case .peerRefused:
                return .refused(address: attempt.refusedAddresses.first ?? hostname)
            case .authentication:
                throw .pairingKeyRejected
            case .unreachable, .handshake, .timeout, .connectionLost:
                // Once the request is on its way the computer may be deciding: never ask another name.
                if attempt.sessionStarted {
                    throw .failed(
                        status: nil, output: [failure.message, output].filter { !$0.isEmpty }.joined(separator: "\n"))
                }
                return .nextName(reason: failure.message)
            case .channel, .internalError:
                throw .failed(status: nil, output: failure.message)
            }
        }
    }

    /// Pins the presented key add-only and builds the profile.
    private func finish(hostname: String, hostKey: SSHHostKeyBlob) throws(PairingError) -> HostProfile {
        let key: SSHPublicKey
        do {
            key = try SSHPublicKey(blob: hostKey.blob)
        } catch {
            throw .hostKeyMismatch(hostname: hostname, fingerprint: hostKey.fingerprintSHA256)
        }
        let pinned: Bool
        do {
            pinned = try pins.pin(key, hostname: hostname, port: payload.port)
        } catch {
            throw .failed(
                status: 0, output: "The computer approved this device, but its host key could not be pinned: \(error)")
        }
        // Add-only: a different pin that appeared while the computer decided stands.
        guard pinned else { throw .conflictingPin(hostname: hostname, port: payload.port) }
        let name = PairingCodeRules.printableText(payload.computerName, limit: PairingPayload.maximumNameLength)
        return HostProfile(
            name: name.isEmpty ? hostname : name, hostname: hostname, port: payload.port, username: payload.username,
            platform: payload.platform, herdrSession: payload.session, remoteCommand: nil)
    }

    /// The helper's last readable lines, stdout then stderr, for error messages.
    static func readableOutput(stdout: [UInt8], stderr: [UInt8]) -> String {
        var lines: [String] = []
        for stream in [stdout, stderr] {
            var tail = OutputTail()
            tail.append(stream)
            lines += tail.readableLines(limit: 3)
        }
        return lines.joined(separator: "\n")
    }
}

/// The addresses the tailnet gate refused, written on the connection's thread and read after it ends.
private final class RefusalLog: Sendable {
    private let list = Mutex<[String]>([])

    func record(_ address: String) { list.withLock { $0.append(address) } }
    var addresses: [String] { list.withLock { $0 } }
}
