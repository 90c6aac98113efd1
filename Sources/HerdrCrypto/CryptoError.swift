import COpenSSL

/// A failure inside the crypto layer, carrying OpenSSL's own reason where there is one.
public struct CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case invalidKey
        case invalidInput
        case authenticationFailed
        case library
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// An error for a failed OpenSSL call, with the queued OpenSSL reasons appended.
    static func openSSL(_ call: String) -> CryptoError {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let detail = reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")
        return CryptoError(.library, "\(call) failed\(detail)")
    }

    public var description: String { message }
}
