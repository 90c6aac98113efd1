import HerdrAgents

/// herdr's socket is newline-delimited JSON (specs/herdr-api.md, "The socket"): this cuts the
/// bytes read from it into lines, each without its newline, none longer than `maximumLineBytes`.
/// Incremental and pure: `append(_:)` what arrived, then `next()` until it says nil. A line past
/// the bound is an error that sticks (the connection is closed): its bytes are never all kept.
public struct HerdrLineReader: Sendable {
    /// herdr's longest line that herdr-host reads (`HerdrJSON.maximumLineBytes`).
    public let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    /// Where the next line starts in `buffer`: lines already taken are dropped in bulk, not one by one.
    private var start = 0
    /// Where the search for the next newline resumes: a line arriving a byte at a time is searched
    /// once, not once per byte.
    private var searched = 0
    private var failure: HerdrLineError?

    public init(maximumLineBytes: Int = HerdrJSON.maximumLineBytes) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// Bytes held for lines not yet complete.
    public var pendingCount: Int { buffer.count - start }

    /// Takes bytes read from the socket. After an error they are ignored.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard failure == nil else { return }
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            searched -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole line, nil until one is complete; throws once a line is longer than the bound.
    public mutating func next() throws(HerdrLineError) -> [UInt8]? {
        if let failure { throw failure }
        var index = max(searched, start)
        while index < buffer.count {
            if buffer[index] == 0x0A {
                let line = Array(buffer[start..<index])
                guard line.count <= maximumLineBytes else { return try fail() }
                start = index + 1
                searched = start
                return line
            }
            index += 1
            if index - start > maximumLineBytes { return try fail() }
        }
        searched = index
        return nil
    }

    private mutating func fail() throws(HerdrLineError) -> [UInt8]? {
        let error = HerdrLineError(maximumLineBytes: maximumLineBytes)
        failure = error
        buffer = []
        start = 0
        searched = 0
        throw error
    }
}

/// herdr sent a line longer than herdr-host reads.
public struct HerdrLineError: Error, Hashable, Sendable, CustomStringConvertible {
    public let maximumLineBytes: Int
    public var description: String {
        maximumLineBytes >= 1 << 20
            ? "a line of more than \(maximumLineBytes >> 20) MiB" : "a line of more than \(maximumLineBytes) bytes"
    }
}
