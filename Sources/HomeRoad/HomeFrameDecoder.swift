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
        guard let prefix = prefix(for: frame.count) else { return nil }
        var framed: [UInt8] = []
        framed.reserveCapacity(2 + frame.count)
        framed.append(prefix.high)
        framed.append(prefix.low)
        framed.append(contentsOf: frame)
        return framed
    }

    /// The two bytes announcing a frame of `count` bytes; nil when no frame has that length.
    public static func prefix(for count: Int) -> (high: UInt8, low: UInt8)? {
        guard count > 0, count <= maximumFrame else { return nil }
        return (UInt8(count >> 8), UInt8(count & 0xff))
    }

    /// Bytes held back: the start of a frame not complete yet.
    public var bufferedCount: Int { buffer.count }

    /// The whole frames `bytes` completes, in order. A zero length is malformed: no Noise message
    /// is empty, and a stream that says otherwise is not ours.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(Malformed) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        let outcome = Array(bytes).withUnsafeBytes { raw in
            Result { () throws(Malformed) in try append(raw) { frames.append($0) } }
        }
        try outcome.get()
        return frames
    }

    /// Hands each whole frame `bytes` completes to `frame`, in order. Frames that arrive whole
    /// are copied once, straight from `bytes`; only a frame split across reads waits in the
    /// buffer. After a zero length (malformed) nothing more is handed out and the buffer is empty.
    public mutating func append(_ bytes: UnsafeRawBufferPointer, each frame: ([UInt8]) -> Void) throws(Malformed) {
        guard buffer.isEmpty else {
            buffer.append(contentsOf: bytes)
            let consumed = buffer.withUnsafeBytes { held in
                Result { () throws(Malformed) in try Self.frames(in: held, each: frame) }
            }
            switch consumed {
            case .success(let count): buffer.removeFirst(count)
            case .failure(let error):
                buffer = []
                throw error
            }
            return
        }
        let consumed = try Self.frames(in: bytes, each: frame)
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
    }

    /// Hands out the whole frames at the start of `bytes`; how many bytes they took.
    private static func frames(in bytes: UnsafeRawBufferPointer, each frame: ([UInt8]) -> Void) throws(Malformed)
        -> Int
    {
        var offset = 0
        while bytes.count - offset >= 2 {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            guard length > 0 else { throw Malformed(description: "a frame announced zero bytes") }
            guard bytes.count - offset - 2 >= length else { break }
            frame(Array(UnsafeRawBufferPointer(rebasing: bytes[(offset + 2)..<(offset + 2 + length)])))
            offset += 2 + length
        }
        return offset
    }
}
