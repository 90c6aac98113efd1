// The standard library's `Array.withUnsafeBytes` still rethrows untyped errors; these carry a
// typed error through, so crypto calls can stay `throws(CryptoError)` / `throws(NoiseError)`.
// Inlinable: unspecialized, each call looked up `Result`'s generic metadata and boxed its
// closures, tens of microseconds per keystroke when cold.
extension Array where Element == UInt8 {
    @inlinable
    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result = withUnsafeBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }

    @inlinable
    package mutating func withMutableBytes<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let result = withUnsafeMutableBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }
        return try result.get()
    }
}

extension Array where Element == UInt8 {
    /// Room for `count` bytes, there to be overwritten (zero until then), with capacity for at
    /// least `capacity`. Allocated through the specialized path: `Array(repeating:count:)` and
    /// `Array(unsafeUninitializedCapacity:)` call the standard library's generic allocator,
    /// which looks the storage's metadata up at runtime for every array, costly when cold (each
    /// frame sealed or opened is one).
    package static func overwritable(count: Int, capacity: Int = 0) -> [UInt8] {
        guard count <= zeros.count else { return [UInt8](repeating: 0, count: count) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Swift.max(count, capacity))
        bytes.append(contentsOf: zeros[..<count])
        return bytes
    }

    private static let zeros = [UInt8](repeating: 0, count: 65536)
}
