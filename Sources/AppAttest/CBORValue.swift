/// A decoded CBOR data item (RFC 8949): the definite-length subset App Attest encodes
/// (integers, byte and text strings, arrays, maps, and the simple values).
public indirect enum CBORValue: Sendable, Equatable {
    case unsigned(UInt64)
    /// The negative integer -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Entries in their encoded order; keys are unique.
    case map([CBORMapEntry])
    case boolean(Bool)
    case null
    case undefined

    /// The value under text key `key` in a map; nil for a missing key or a value that is no map.
    public subscript(key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    /// The bytes of a byte string; nil for anything else.
    public var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// The text of a text string; nil for anything else.
    public var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The items of an array; nil for anything else.
    public var array: [CBORValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}

/// One key and value of a CBOR map.
public struct CBORMapEntry: Sendable, Equatable {
    public var key: CBORValue
    public var value: CBORValue

    public init(key: CBORValue, value: CBORValue) {
        self.key = key
        self.value = value
    }
}
