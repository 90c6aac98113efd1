/// A key, key file or known_hosts entry that could not be used.
public struct SSHKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, independent of the wording.
    public enum Kind: String, Sendable {
        /// The data ended before a field it announces.
        case truncated
        /// The data is not in the expected format.
        case malformed
        /// Well-formed, but of a kind not supported here (for example an RSA private key).
        case unsupported
        /// A private key protected by a passphrase.
        case encrypted
        /// Parts that must agree do not (public half against private half, check integers).
        case inconsistent
        /// Larger than the limit for its kind.
        case tooLarge
    }

    /// What went wrong.
    public let kind: Kind
    /// A sentence for people.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
