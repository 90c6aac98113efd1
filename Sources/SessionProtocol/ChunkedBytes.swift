/// Bytes kept in order, held as chunks of at most `chunkSize`: the memory grows and shrinks with
/// what is kept, a chunk at a time, and no allocation is large enough for glibc to mmap it.
///
/// Why chunks: one contiguous buffer of megabytes (what a growing `[UInt8]` becomes) is mmapped by
/// glibc the first time and, once freed, raises its mmap threshold to that size (up to 32 MiB)
/// and its trim threshold to twice that. Every later buffer of that size then comes from the
/// malloc arena of whichever thread grew it, and the megabytes freed at the top of an arena stay
/// resident below the trim threshold, where not even malloc_trim reaches them. After 20 sessions
/// of 16.9 MB herdr-host's arenas held 79 MB, 0.8 MB of it in use (issue 36).
struct ChunkedBytes: Sendable {
    /// The largest chunk: half of glibc's default mmap threshold, so that a chunk's doubling
    /// growth (`append` into the last chunk) stays under it too.
    static let chunkSize = 64 * 1024

    private var chunks: [[UInt8]] = []
    /// Bytes already removed from the front of `chunks[0]`.
    private var headOffset = 0
    /// Bytes kept.
    private(set) var count = 0

    /// Appends `data`: into the last chunk while it fits there (a terminal's small writes share
    /// one), else as chunks of its own (a PTY's read is kept as it came, without a copy).
    mutating func append(_ data: [UInt8]) {
        guard !data.isEmpty else { return }
        guard data.count <= Self.chunkSize else {
            for from in stride(from: 0, to: data.count, by: Self.chunkSize) {
                append(Array(data[from..<min(from + Self.chunkSize, data.count)]))
            }
            return
        }
        count += data.count
        guard let last = chunks.indices.last, chunks[last].count + data.count <= Self.chunkSize else {
            chunks.append(data)
            return
        }
        let needed = chunks[last].count + data.count
        if chunks[last].capacity < needed {
            // Doubling as an array does, but never past a chunk.
            chunks[last].reserveCapacity(min(Self.chunkSize, max(needed, 2 * chunks[last].capacity)))
        }
        chunks[last] += data
    }

    /// Drops the first `n` bytes (at most `count`); chunks left empty are freed.
    mutating func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count, "removing \(n) of \(count) bytes")
        count -= n
        var left = n
        var emptied = 0
        while left > 0 {
            let available = chunks[emptied].count - headOffset
            if left >= available {
                left -= available
                emptied += 1
                headOffset = 0
            } else {
                headOffset += left
                left = 0
            }
        }
        chunks.removeFirst(emptied)
    }

    /// `length` bytes from `offset` (counted from the first byte kept); both within `count`.
    func bytes(from offset: Int, count length: Int) -> [UInt8] {
        precondition(offset >= 0 && length >= 0 && offset + length <= count, "bytes \(offset)+\(length) of \(count)")
        var result: [UInt8] = []
        result.reserveCapacity(length)
        var skip = offset + headOffset
        for chunk in chunks where result.count < length {
            guard skip < chunk.count else {
                skip -= chunk.count
                continue
            }
            let take = min(chunk.count - skip, length - result.count)
            result += chunk[skip..<(skip + take)]
            skip = 0
        }
        return result
    }

    /// The memory the chunks hold: in all, and the largest one.
    var storage: (total: Int, largest: Int) {
        chunks.reduce((0, 0)) { ($0.0 + $1.capacity, max($0.1, $1.capacity)) }
    }
}
