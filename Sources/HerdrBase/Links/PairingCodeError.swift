/// Why a pairing code (`herdr://pair` or `herdr://companion`) was refused, naming the field (`h`,
/// `rs`, …) when one field is at fault.
public struct PairingCodeError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case tooLong, notAPairingCode, malformed, missingField, duplicateField, unsupportedVersion, invalidField,
            expired
    }

    public let kind: Kind
    /// The query key at fault, if one is.
    public let field: String?
    public let message: String

    public init(_ kind: Kind, field: String?, _ message: String) {
        self.kind = kind
        self.field = field
        self.message = message
    }

    public var description: String { message }
}
