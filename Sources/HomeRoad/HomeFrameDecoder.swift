/// The home road's framing (docs/companion.md, "The home road"): each Noise message on the TCP
/// stream is preceded by its length as 16 big-endian bits. Pure; it holds at most one partial
/// frame, so a peer cannot make it keep more than 65,537 bytes.
public struct HomeFrameDecoder: Sendable {
    /// The largest message a 16-bit length can announce (and the Noise maximum).
    public static let maximumFrame = 65535

    /// Why a stream is not home framing.
    public struct Malformed: Error, Hashable, Sendable, CustomStringConvertible {
        public let description: String
    }

    private var buffer: [UInt8] = []

    public init() {}

    /// The length prefix and `frame`, ready for the socket; nil when `frame` is empty or longer
    /// than `maximumFrame`.
    public static func encode(_ frame: [UInt8]) -> [UInt8]? {
        guard !frame.isEmpty, frame.count <= maximumFrame else { return nil }
        // One allocation: every keystroke and echo passes here.
        var framed: [UInt8] = []
        framed.reserveCapacity(2 + frame.count)
        framed.append(UInt8(frame.count >> 8))
        framed.append(UInt8(frame.count & 0xff))
        framed.append(contentsOf: frame)
        return framed
    }

    /// Bytes held back: the start of a frame not complete yet.
    public var bufferedCount: Int { buffer.count }

    /// The whole frames `bytes` completes, in order. A zero length is malformed: no Noise message
    /// is empty, and a stream that says otherwise is not ours.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(Malformed) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var frames: [[UInt8]] = []
        var offset = 0
        while buffer.count - offset >= 2 {
            let length = Int(buffer[offset]) << 8 | Int(buffer[offset + 1])
            guard length > 0 else {
                buffer = []
                throw Malformed(description: "a frame announced zero bytes")
            }
            guard buffer.count - offset - 2 >= length else { break }
            frames.append(Array(buffer[(offset + 2)..<(offset + 2 + length)]))
            offset += 2 + length
        }
        if offset > 0 { buffer.removeFirst(offset) }
        return frames
    }
}
