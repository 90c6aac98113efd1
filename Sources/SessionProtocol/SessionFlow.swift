/// Frames a side may send through a relay room: a token bucket, so the two sides together stay
/// under the relay's 500 messages per second per room however the output comes (docs/companion.md,
/// "Frame budget"). A bucket of rate r and burst b lets at most r + b frames through in any second,
/// so the computer's 456 + 2 and the device's 32 + 2 make 492, and the handshake and status
/// frames of a fresh connection fit in the 8 left. The computer's share is what bulk output
/// needs (456 full frames are 29.9 MB/s, 0.91 of the cap's 500 × 64 KiB); the device's lets a
/// person type at 30 keys a second with every key in a frame of its own. Pure, with the time
/// passed in.
public struct FrameBudget: Sendable {
    public let rate: Double
    public let burst: Double
    private var tokens: Double
    private var last: Double?
    private var isUnlimited = false

    /// The computer's share: output.
    public static let computer = FrameBudget(rate: 456, burst: 2)
    /// The device's share: input and credits.
    public static let device = FrameBudget(rate: 32, burst: 2)
    /// No relay on the path (the home road): every frame may go at once.
    public static let unlimited: FrameBudget = {
        var budget = FrameBudget(rate: 1, burst: 1)
        budget.isUnlimited = true
        return budget
    }()

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        self.tokens = burst
    }

    private mutating func refill(_ now: Double) {
        if let last { tokens = min(burst, tokens + (now - last) * rate) }
        last = now
    }

    /// Takes a frame's token at `now` (seconds, any monotonic origin) if there is one.
    public mutating func take(now: Double) -> Bool {
        if isUnlimited { return true }
        refill(now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Seconds from `now` until a token is there (0 when one is).
    public mutating func wait(now: Double) -> Double {
        if isUnlimited { return 0 }
        refill(now)
        return tokens >= 1 ? 0 : (1 - tokens) / rate
    }
}

/// One session's output on the computer's side: every byte the PTY produced and the device has
/// not yet said is on its screen, numbered by its offset since the session began; what may be sent
/// now (the device's window); and where to start again after a drop. Pure.
public struct HostOutputFlow: Sendable {
    /// The most output kept for the device, sent or not: the PTY is read only while this is not full,
    /// so a stalled device stops the writer.
    public let capacity: Int
    /// Bytes kept, from `start`, in chunks: memory that follows what is kept (see `ChunkedBytes`).
    private var kept = ChunkedBytes()
    /// The offset of the first kept byte (everything before is on the device's screen).
    public private(set) var start: UInt64 = 0
    /// The offset after the last byte the PTY produced.
    public var produced: UInt64 { start + UInt64(kept.count) }
    /// The offset after the last byte sent on the current connection.
    public private(set) var sent: UInt64 = 0
    /// Bytes the device lets the computer send beyond what it consumed.
    public private(set) var window = 0
    public private(set) var isAttached = false

    public init(capacity: Int) { self.capacity = capacity }

    /// Output kept (sent or not), in bytes.
    public var keptCount: Int { kept.count }
    /// The memory the kept output holds, in all and in its largest allocation (for tests and
    /// benchmarks: it follows `keptCount`, and no allocation is one glibc would mmap).
    public var keptStorage: (total: Int, largest: Int) { kept.storage }
    /// Room for more PTY output.
    public var space: Int { max(0, capacity - keptCount) }

    /// PTY output.
    public mutating func append(_ data: [UInt8]) {
        kept.append(data)
    }

    /// A device attached (opened, or resumed from `received`): sending starts there. False when
    /// `received` is not within what is kept (the output before it is gone, or it is in the future).
    public mutating func attach(received: UInt64, window: Int) -> Bool {
        guard received >= start, received <= produced else { return false }
        forget(upTo: received)
        sent = received
        self.window = window
        isAttached = true
        return true
    }

    /// The device asks for another window (already within what the computer keeps): what is in
    /// flight beyond a smaller one stays; sending waits until credits bring it back inside.
    public mutating func setWindow(_ window: Int) {
        self.window = window
    }

    /// The device went: what was sent and not consumed is sent again on the next attach.
    public mutating func detach() {
        isAttached = false
        sent = start
    }

    /// The device consumed everything before `consumed`. False for an offset it was never sent.
    public mutating func credit(_ consumed: UInt64) -> Bool {
        guard consumed <= sent else { return false }
        if consumed > start { forget(upTo: consumed) }
        return true
    }

    /// The next chunk to send now, at most `maximum` bytes: its offset and bytes; nil when
    /// nothing is due or the window is full.
    public mutating func next(maximum: Int) -> (offset: UInt64, data: [UInt8])? {
        guard isAttached, sent < produced else { return nil }
        let allowed = Int(clamping: Int64(start) + Int64(window) - Int64(sent))
        let count = min(maximum, allowed, Int(produced - sent))
        guard count > 0 else { return nil }
        let chunk = kept.bytes(from: Int(sent - start), count: count)
        let offset = sent
        sent += UInt64(count)
        return (offset, chunk)
    }

    /// Whether output waits that the window lets go now.
    public var hasSendable: Bool {
        isAttached && sent < produced && Int64(sent) < Int64(start) + Int64(window)
    }

    private mutating func forget(upTo offset: UInt64) {
        kept.removeFirst(Int(offset - start))
        start = offset
    }
}

/// One session's output on the device's side: what arrived (by offset), what reached the screen,
/// and when to tell the computer (a credit every quarter window). A gap is a broken channel; a
/// byte that arrives twice (after a resume) is dropped. Pure.
public struct DeviceOutputFlow: Sendable {
    /// The window credits are counted against: the device's, or the computer's when smaller.
    public var window: Int
    /// The offset after the last byte received.
    public private(set) var received: UInt64
    /// The offset after the last byte on the screen, and the last one told to the computer.
    public private(set) var consumed: UInt64
    public private(set) var credited: UInt64

    public init(window: Int, from offset: UInt64 = 0) {
        self.window = window
        received = offset
        consumed = offset
        credited = offset
    }

    /// Output at `offset`: the bytes new to the device (nothing when all were had before), or nil
    /// for a gap (bytes missing before `offset`: the channel is broken).
    public mutating func receive(offset: UInt64, data: [UInt8]) -> [UInt8]? {
        guard offset <= received else { return nil }
        let end = offset + UInt64(data.count)
        guard end > received else { return [] }
        let fresh = Array(data[Int(received - offset)...])
        received = end
        return fresh
    }

    /// `count` bytes reached the screen; the credit to send now, if one is due.
    public mutating func consumed(_ count: Int) -> UInt64? {
        consumed += UInt64(count)
        guard consumed - credited >= UInt64(window / 4) else { return nil }
        credited = consumed
        return consumed
    }
}
