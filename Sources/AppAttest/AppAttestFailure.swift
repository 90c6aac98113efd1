/// Why App Attest evidence was refused, in words for the operator's log (and, for assertions,
/// the phone: the original relay answers `assertion rejected: <reason>`).
public struct AppAttestFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
