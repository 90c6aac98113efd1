/// A host key that needs a person's decision (first use), or that was refused (changed).
public struct HostKeyChallenge: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case firstUse
        case changed(previousFingerprint: String)
    }

    /// Canonical hostname (trimmed, lowercased, no trailing dot).
    public let hostname: String
    public let port: Int
    /// `SHA256:…` of the key the host presented, as `ssh-keygen -l -E sha256` prints it.
    public let fingerprintSHA256: String
    /// The key algorithm, e.g. `ssh-ed25519`.
    public let algorithm: String
    public let kind: Kind

    public init(hostname: String, port: Int, fingerprintSHA256: String, algorithm: String, kind: Kind) {
        self.hostname = hostname
        self.port = port
        self.fingerprintSHA256 = fingerprintSHA256
        self.algorithm = algorithm
        self.kind = kind
    }

    /// `host:port` as pins are keyed.
    public var endpoint: String { CanonicalHost.pinKey(hostname: hostname, port: port) }
}
