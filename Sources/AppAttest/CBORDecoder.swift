/// Decodes one CBOR data item from bytes a phone sent, within limits: the whole input is one
/// item, lengths are definite, and size, nesting and item count are bounded, so no input can
/// make the decoder allocate more than the input or recurse deeply.
public struct CBORDecoder: Sendable {
    /// The longest input read.
    public var maximumSize = 64 * 1024
    /// Arrays and maps nested at most this deep.
    public var maximumDepth = 16
    /// Data items (every array item, map key and value counts) at most.
    public var maximumItems = 4096

    public init() {}

    /// The one item `bytes` encode; throws for trailing bytes, indefinite lengths, tags, floats,
    /// text that is not UTF-8, duplicate map keys and anything past the limits.
    public func decode(_ bytes: [UInt8]) throws(CBORError) -> CBORValue {
        guard bytes.count <= maximumSize else {
            throw CBORError("\(bytes.count) bytes is more than the \(maximumSize) read")
        }
        var reader = Reader(bytes: bytes, decoder: self)
        let value = try reader.item(depth: 0)
        guard reader.offset == bytes.count else {
            throw CBORError("\(bytes.count - reader.offset) bytes after the item at offset \(reader.offset)")
        }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        let decoder: CBORDecoder
        var offset = 0
        var items = 0

        init(bytes: [UInt8], decoder: CBORDecoder) {
            self.bytes = bytes
            self.decoder = decoder
        }

        mutating func item(depth: Int) throws(CBORError) -> CBORValue {
            items += 1
            guard items <= decoder.maximumItems else {
                throw CBORError("more than \(decoder.maximumItems) items")
            }
            let start = offset
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1F
            if major == 7 {
                switch info {
                case 20: return .boolean(false)
                case 21: return .boolean(true)
                case 22: return .null
                case 23: return .undefined
                case 25, 26, 27: throw CBORError("a floating-point value at offset \(start) (App Attest uses none)")
                case 31: throw CBORError("a break outside an indefinite-length item at offset \(start)")
                default: throw CBORError("simple value \(info) at offset \(start) is not used")
                }
            }
            let argument = try self.argument(info, at: start)
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(try take(argument, at: start))
            case 3:
                let raw = try take(argument, at: start)
                guard let text = String(validating: raw, as: UTF8.self) else {
                    throw CBORError("a text string at offset \(start) is not UTF-8")
                }
                return .text(text)
            case 4:
                let count = try self.count(argument, depth: depth, at: start)
                var values: [CBORValue] = []
                values.reserveCapacity(count)
                for _ in 0..<count { values.append(try item(depth: depth + 1)) }
                return .array(values)
            case 5:
                let count = try self.count(argument, depth: depth, at: start)
                var entries: [CBORMapEntry] = []
                entries.reserveCapacity(count)
                for _ in 0..<count {
                    let keyOffset = offset
                    let key = try item(depth: depth + 1)
                    guard !entries.contains(where: { $0.key == key }) else {
                        throw CBORError("a duplicate map key at offset \(keyOffset)")
                    }
                    entries.append(CBORMapEntry(key: key, value: try item(depth: depth + 1)))
                }
                return .map(entries)
            default:
                throw CBORError("a tag at offset \(start) (App Attest uses none)")
            }
        }

        private mutating func byte() throws(CBORError) -> UInt8 {
            guard offset < bytes.count else { throw CBORError("the input ends at offset \(offset) inside an item") }
            defer { offset += 1 }
            return bytes[offset]
        }

        /// The head's argument: the value itself below 24, else the next 1, 2, 4 or 8 bytes.
        private mutating func argument(_ info: UInt8, at start: Int) throws(CBORError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                var value: UInt64 = 0
                for _ in 0..<(1 << (info - 24)) { value = value << 8 | UInt64(try byte()) }
                return value
            case 31: throw CBORError("an indefinite length at offset \(start) (App Attest uses none)")
            default: throw CBORError("reserved additional information \(info) at offset \(start)")
            }
        }

        /// The next `length` bytes; the length is checked against what is left before anything is allocated.
        private mutating func take(_ length: UInt64, at start: Int) throws(CBORError) -> [UInt8] {
            guard length <= UInt64(bytes.count - offset) else {
                throw CBORError("a string at offset \(start) claims \(length) bytes, \(bytes.count - offset) are left")
            }
            let end = offset + Int(length)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }

        /// An array's or map's entry count, each at least one byte of what is left.
        private func count(_ argument: UInt64, depth: Int, at start: Int) throws(CBORError) -> Int {
            guard depth < decoder.maximumDepth else {
                throw CBORError("nested deeper than \(decoder.maximumDepth) at offset \(start)")
            }
            guard argument <= UInt64(bytes.count - offset) else {
                throw CBORError(
                    "an item at offset \(start) claims \(argument) entries, \(bytes.count - offset) bytes are left")
            }
            return Int(argument)
        }
    }
}

/// Why bytes are not a CBOR item the decoder accepts.
public struct CBORError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
