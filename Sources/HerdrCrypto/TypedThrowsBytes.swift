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
