/// Why a picture gave no code.
public struct PairImageError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, for the exit status.
    public enum Kind: Sendable {
        /// The file is missing or unreadable.
        case unreadable
        /// Not a PNG, damaged, or too large.
        case notAPicture
        /// zbar itself failed.
        case decoder
    }

    /// What kind of failure.
    public let kind: Kind
    /// A sentence for people.
    public let description: String

    /// Creates an error.
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
