import CLISupport
import Foundation
import HerdrCrypto
import HerdrKit

/// The foreground helper's side of one pairing: the one-time key, its state directory and its line in
/// authorized_keys, from the moment they exist until every trace is gone again.
///
/// Order matters for the sweep of other helpers: the state directory with the owner record exists
/// before the line is added, and the line is removed before the directory. So a line whose owner
/// record says "dead" is always safe to sweep, and a live helper's line never is.
///
/// Thread-safe: the main flow and a signal handler may call in at the same time; every step that
/// changes files runs under one lock, and ``finish()`` is idempotent.
public final class PairingSession: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var authorizedKeys: AuthorizedKeysFile
        /// The base of state directories (``StateLocation/base(environment:)``).
        public var stateBase: String
        /// The absolute path sshd runs as the forced command.
        public var helperPath: String
        /// How long the code is valid.
        public var lifetime: TimeInterval
        /// How long the person has to answer once a device asks, in seconds.
        public var approvalWindow: Int

        public init(
            authorizedKeys: AuthorizedKeysFile, stateBase: String, helperPath: String, lifetime: TimeInterval,
            approvalWindow: Int
        ) {
            self.authorizedKeys = authorizedKeys
            self.stateBase = stateBase
            self.helperPath = helperPath
            self.lifetime = lifetime
            self.approvalWindow = approvalWindow
        }
    }

    private enum Phase {
        case waiting
        case requested(EnrollRequest)
        case closed
        case decided(EnrollOutcome)
        case finished
    }

    public let configuration: Configuration
    public let pairingID: PairingID
    public let oneTimeKey: Ed25519PrivateKey
    public let expiresAt: Date
    /// The line added to authorized_keys.
    public let line: OneTimeKeyLine
    public let state: PairingStateDirectory

    private let lock = NSLock()
    private var phase = Phase.waiting

    private init(
        configuration: Configuration, pairingID: PairingID, oneTimeKey: Ed25519PrivateKey, expiresAt: Date,
        line: OneTimeKeyLine, state: PairingStateDirectory
    ) {
        self.configuration = configuration
        self.pairingID = pairingID
        self.oneTimeKey = oneTimeKey
        self.expiresAt = expiresAt
        self.line = line
        self.state = state
    }

    /// Mints the id and the one-time key, makes the state directory, and appends the one-time line.
    /// On failure nothing is left behind.
    public static func begin(_ configuration: Configuration, now: Date = Date()) throws(HostError) -> PairingSession {
        guard let me = ProcessIdentity.current() else {
            throw HostError(.notFound, "Cannot read this process's start time from /proc")
        }
        let id = PairingID.random()
        let key = Ed25519PrivateKey()
        let publicKey = SSHPublicKey(ed25519: key.publicKey)
        let expiresAt = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + configuration.lifetime).rounded(.down))
        let line = try OneTimeKeyLine(
            pairingID: id, expiresAt: expiresAt, helperPath: configuration.helperPath,
            stateDirectory: configuration.stateBase + "/" + id.text, publicKey: publicKey)
        let record = OwnerRecord(
            pairingID: id, owner: me, expiresAt: expiresAt, approvalWindow: configuration.approvalWindow,
            oneTimeKey: publicKey.openSSHString)
        let state = try PairingStateDirectory.create(base: configuration.stateBase, owner: record)
        do {
            try configuration.authorizedKeys.append([line.text])
        } catch {
            state.remove()
            throw error
        }
        return PairingSession(
            configuration: configuration, pairingID: id, oneTimeKey: key, expiresAt: expiresAt, line: line, state: state
        )
    }

    /// What the foreground sees when it looks at the request slot.
    public enum Poll: Sendable, Equatable {
        /// Nothing yet.
        case waiting
        /// A device asked; answer with ``decide(_:)``.
        case request(EnrollRequest)
        /// The slot holds something no enroll command writes.
        case corrupt(String)
    }

    /// Looks for a request; the first one found is the pairing's request from then on.
    public func poll() -> Poll {
        locked {
            switch phase {
            case .requested(let request): return .request(request)
            case .waiting: break
            default: return .waiting
            }
            switch state.requestSlot() {
            case .empty, .closed: return .waiting
            case .request(let request):
                phase = .requested(request)
                return .request(request)
            case .unreadable(let reason): return .corrupt(reason)
            }
        }
    }

    /// Ends the wait for a request (the code expired): late enrolls will hear `EXPIRED`. Returns false
    /// when a request arrived first; ``poll()`` then returns it.
    public func closeIfUnclaimed() throws(HostError) -> Bool {
        try locked { () throws(HostError) -> Bool in
            guard case .waiting = phase else { return false }
            guard try state.closeForRequests() else { return false }
            phase = .closed
            return true
        }
    }

    /// Answers the request. For `.ok` the device key line is appended first (unless the same key is
    /// already authorized without options), then the verdict written; the enroll command prints it.
    public func decide(_ outcome: EnrollOutcome, now: Date = Date()) throws(HostError) {
        try locked { () throws(HostError) in
            guard case .requested(let request) = phase else { return }
            if outcome == .ok {
                let deviceLine = DeviceKeyLine.text(key: request.deviceKey, deviceName: request.deviceName, date: now)
                let keyData = Data(request.deviceKey.blob).base64EncodedString()
                try configuration.authorizedKeys.append(deviceLine) { existing in
                    guard let entry = AuthorizedKeysEntry(line: existing) else { return false }
                    return entry.options.isEmpty && entry.keyType == "ssh-ed25519" && entry.keyData == keyData
                }
            }
            try state.writeVerdict(outcome)
            phase = .decided(outcome)
        }
    }

    /// Waits (bounded) until the enroll command has read the verdict, so it can print it before the
    /// state directory goes away. Returns whether it did.
    @discardableResult
    public func waitForAcknowledgement(timeout: TimeInterval) -> Bool {
        let deadline = FileIO.monotonicNow() + timeout
        while !state.isAcknowledged {
            if FileIO.monotonicNow() >= deadline { return false }
            FileIO.sleep(seconds: 0.01)
        }
        return true
    }

    /// The end on a signal: a pending request is denied (and the enroll command given a moment to
    /// read that), a pairing without one is closed, and then everything is removed.
    public func interrupt(acknowledgementTimeout: TimeInterval = 2) -> [HostError] {
        let answered: Bool = locked {
            switch phase {
            case .waiting:
                if (try? state.closeForRequests()) == true {
                    phase = .closed
                    return false
                }
                // A request got there first.
                guard (try? state.writeVerdict(.denied)) != nil else { return false }
                phase = .decided(.denied)
                return true
            case .requested:
                guard (try? state.writeVerdict(.denied)) != nil else { return false }
                phase = .decided(.denied)
                return true
            default:
                return false
            }
        }
        if answered { waitForAcknowledgement(timeout: acknowledgementTimeout) }
        return finish()
    }

    /// Removes the one-time line and the state directory. Idempotent; returns what could not be done
    /// (the line stays inert anyway once its expiry-time passes, and the next run sweeps it).
    @discardableResult
    public func finish() -> [HostError] {
        locked {
            if case .finished = phase { return [] }
            var problems: [HostError] = []
            let ownLine = line.text
            let id = pairingID
            do throws(HostError) {
                try configuration.authorizedKeys.removeLines(containing: OneTimeKeyLine.commentPrefix) { candidate in
                    candidate == ownLine || OneTimeKeyLineInfo(line: candidate)?.pairingID == id
                }
            } catch {
                problems.append(error)
            }
            // With the line still there, the directory stays too: its owner record tells the next run's
            // sweep that this helper is gone, so the line goes at once rather than at its expiry.
            if problems.isEmpty && !state.remove() {
                problems.append(.posix(.io, "remove", path: state.path))
            }
            phase = .finished
            return problems
        }
    }

    private func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
