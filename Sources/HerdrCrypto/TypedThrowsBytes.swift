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
    /// Room for `count` bytes that the caller overwrites at once (zero for small arrays,
    /// unspecified for large ones), with capacity for at least `capacity`. Small ones are
    /// allocated through the specialized path: `Array(unsafeUninitializedCapacity:)` calls the
    /// standard library's generic allocator, which looks the storage's metadata up at runtime,
    /// costly when cold (every keystroke's frame is one). For large ones that lookup is small
    /// beside the work on the bytes, and zeroing them would not be.
    package static func overwritable(count: Int, capacity: Int = 0) -> [UInt8] {
        guard count > zeros.count else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Swift.max(count, capacity))
            bytes.append(contentsOf: zeros[..<count])
            return bytes
        }
        return [UInt8](unsafeUninitializedCapacity: Swift.max(count, capacity)) { _, initialized in
            initialized = count
        }
    }

    private static let zeros = [UInt8](repeating: 0, count: 4096)
}
