/// What both pairing codes share: a `herdr://<host>?k=v&…` link, at most `maximumLength` UTF-8
/// bytes, values RFC 3986 percent-escaped (`,` and `:` left literal). The scheme and host compare
/// case-insensitively; no user, password, port, path or fragment; unknown keys are ignored (a
/// later version may add some, and a `cmd` never matters); a known key twice is an error.
public enum HerdrLink {
    /// The link for `host` with `fields`, in order.
    public static func url(host: String, fields: [(String, String)]) -> String {
        "herdr://\(host)?" + query(fields)
    }

    /// `fields` as a link's query, in order, values escaped.
    public static func query(_ fields: [(String, String)]) -> String {
        fields.map { "\($0)=\(escape($1))" }.joined(separator: "&")
    }

    /// The host of a `herdr://` link (lowercased), or nil when `text` is not one.
    public static func host(of text: String) -> String? {
        let lowered = text.prefix(64).lowercased()
        guard lowered.hasPrefix("herdr://") else { return nil }
        let rest = lowered.dropFirst("herdr://".count)
        return String(rest.prefix { $0 != "?" && $0 != "/" && $0 != "#" })
    }

    /// The decoded known fields of `text`, a `herdr://<host>?…` link.
    public static func fields(of text: String, host: String, knownKeys: Set<String>, maximumLength: Int)
        throws(PairingCodeError) -> [String: String]
    {
        guard text.utf8.count <= maximumLength else {
            throw PairingCodeError(.tooLong, field: nil, "The pairing code is longer than \(maximumLength) bytes")
        }
        // RFC 3986 has no raw spaces or control characters; a value that needs one is %-escaped.
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw PairingCodeError(
                .malformed, field: nil,
                "The pairing code contains a space or control character (values must be %-escaped)")
        }
        let start = "herdr://\(host)?"
        let bytes = Array(text.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            String(decoding: bytes[..<colon], as: UTF8.self).lowercased() == "herdr"
        else {
            throw PairingCodeError(
                .notAPairingCode, field: nil, "This is not a herdr pairing code (it must start with \(start))")
        }
        var rest = bytes[(colon + 1)...]
        guard rest.starts(with: Array("//".utf8)) else {
            throw PairingCodeError(
                .notAPairingCode, field: nil, "This is not a herdr pairing code (it must start with \(start))")
        }
        rest = rest.dropFirst(2)
        if rest.contains(UInt8(ascii: "#")) {
            throw PairingCodeError(.malformed, field: nil, "The pairing code must not have a fragment (#)")
        }
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "/") } ?? rest.endIndex
        let authority = String(decoding: rest[rest.startIndex..<authorityEnd], as: UTF8.self)
        guard authority.lowercased() == host else {
            let reason =
                authority.contains("@") || authority.contains(":")
                ? "The pairing code must not carry a user, password or port"
                : "This is not a herdr pairing code (its host must be \(host))"
            throw PairingCodeError(.malformed, field: nil, reason)
        }
        guard authorityEnd < rest.endIndex, rest[authorityEnd] == UInt8(ascii: "?") else {
            throw PairingCodeError(.malformed, field: nil, "The pairing code must have no path and a query (\(start)…)")
        }
        var fields: [String: String] = [:]
        let query = rest[(authorityEnd + 1)...]
        for part in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = part.firstIndex(of: UInt8(ascii: "="))
            let rawKey = equals.map { part[part.startIndex..<$0] } ?? part[...]
            let rawValue = equals.map { part[($0 + 1)...] } ?? []
            let key = try percentDecode(rawKey)
            let value = try percentDecode(rawValue)
            guard knownKeys.contains(key) else { continue }  // unknown keys (like `cmd`) never matter
            guard fields[key] == nil else {
                throw PairingCodeError(.duplicateField, field: key, "The pairing code has the field \(key) twice")
            }
            fields[key] = value
        }
        return fields
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ","),
                UInt8(ascii: ":"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    private static func percentDecode<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(PairingCodeError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw PairingCodeError(.malformed, field: nil, "The pairing code has a broken %-escape")
            }
            out.append(high << 4 | low)
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw PairingCodeError(.malformed, field: nil, "The pairing code is not valid UTF-8")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
