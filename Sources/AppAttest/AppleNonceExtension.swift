/// The nonce Apple puts in an App Attest credential certificate, in the extension
/// 1.2.840.113635.100.8.2 whose value is DER `SEQUENCE { [1] EXPLICIT OCTET STRING (32 bytes) }`.
public enum AppleNonceExtension {
    /// The extension's object identifier.
    public static let oid = "1.2.840.113635.100.8.2"
    /// The extension value is 38 bytes; anything much longer is no nonce.
    public static let maximumSize = 256

    /// The 32-byte nonce in the extension's value (the bytes inside its OCTET STRING wrapper);
    /// throws unless the value is exactly that structure in DER.
    public static func nonce(fromExtensionValue value: [UInt8]) throws(AppAttestFailure) -> [UInt8] {
        guard value.count <= maximumSize else {
            throw AppAttestFailure("the nonce extension is \(value.count) bytes, more than \(maximumSize)")
        }
        var reader = DERReader(value)
        var sequence = try reader.element(tag: 0x30, "the nonce extension's SEQUENCE")
        try reader.expectEnd("the nonce extension")
        var explicit = try sequence.element(tag: 0xA1, "the nonce extension's [1]")
        try sequence.expectEnd("the nonce extension's SEQUENCE")
        let octets = try explicit.element(tag: 0x04, "the nonce's OCTET STRING")
        try explicit.expectEnd("the nonce extension's [1]")
        guard octets.remaining.count == 32 else {
            throw AppAttestFailure("the nonce is \(octets.remaining.count) bytes, not 32")
        }
        return octets.remaining
    }
}

/// Reads DER tag-length-value elements with definite, minimal lengths (X.690 §10.1).
struct DERReader {
    private(set) var remaining: [UInt8]

    init(_ bytes: [UInt8]) { remaining = bytes }

    /// The next element, which must have `tag`; returns a reader over its contents.
    mutating func element(tag: UInt8, _ what: String) throws(AppAttestFailure) -> DERReader {
        guard let first = remaining.first else { throw AppAttestFailure("\(what) is missing") }
        guard first == tag else {
            throw AppAttestFailure("\(what) has tag 0x\(String(first, radix: 16)), not 0x\(String(tag, radix: 16))")
        }
        guard remaining.count >= 2 else { throw AppAttestFailure("\(what) has no length") }
        var length = Int(remaining[1])
        var header = 2
        if length >= 0x80 {
            let octets = length & 0x7F
            // 0x80 is BER's indefinite length; DER never uses more than the octets needed.
            guard octets >= 1, octets <= 2, remaining.count >= 2 + octets else {
                throw AppAttestFailure("\(what) has a length DER does not allow")
            }
            length = remaining[2..<(2 + octets)].reduce(0) { $0 << 8 | Int($1) }
            guard length >= 0x80, remaining[2] != 0 else {
                throw AppAttestFailure("\(what) has a length longer than DER allows")
            }
            header += octets
        }
        guard remaining.count - header >= length else {
            throw AppAttestFailure("\(what) claims \(length) bytes, \(remaining.count - header) are left")
        }
        let contents = Array(remaining[header..<(header + length)])
        remaining.removeFirst(header + length)
        return DERReader(contents)
    }

    func expectEnd(_ what: String) throws(AppAttestFailure) {
        guard remaining.isEmpty else { throw AppAttestFailure("\(remaining.count) bytes after \(what)") }
    }
}
