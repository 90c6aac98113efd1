/// A rate limit as a token bucket behind a FIFO queue of bounded bytes. It computes when each
/// packet leaves (no timers of its own): arrivals must come in time order.
struct TokenBucketQueue {
    private(set) var bitsPerSecond: UInt64
    private(set) var bucketBytes: Int
    private(set) var queueLimit: Int
    /// Tokens (bytes) at `lastDeparture`, at most `bucketBytes`.
    private var tokens: Double
    private var lastDeparture: Int64 = .min
    /// Departure times and sizes of the packets still queued (their departure is in the future).
    private var waiting: [(departure: Int64, size: Int)] = []
    private var waitingHead = 0
    private(set) var queuedBytes = 0

    init(bitsPerSecond: UInt64, bucketBytes: Int, queueLimit: Int) {
        self.bitsPerSecond = bitsPerSecond
        self.bucketBytes = bucketBytes
        self.queueLimit = queueLimit
        tokens = Double(bucketBytes)
    }

    /// New limits; the packets already queued keep their departure times.
    mutating func reconfigure(bitsPerSecond: UInt64, bucketBytes: Int, queueLimit: Int) {
        self.bitsPerSecond = bitsPerSecond
        self.bucketBytes = bucketBytes
        self.queueLimit = queueLimit
        tokens = min(tokens, Double(bucketBytes))
    }

    /// When a packet of `size` bytes arriving at `now` leaves, or nil when the queue is full.
    mutating func departure(size: Int, at now: Int64) -> Int64? {
        forgetDeparted(before: now)
        // Only what waits counts against the queue: a packet that leaves at once never queued.
        guard queuedBytes + size <= queueLimit else { return nil }
        let start = max(now, lastDeparture)
        var available = Double(bucketBytes)
        if lastDeparture != .min {
            available = min(available, tokens + Double(start - lastDeparture) * Double(bitsPerSecond) / 8e9)
        }
        var leaves = start
        if available >= Double(size) {
            available -= Double(size)
        } else {
            // Bytes × 8e9 / rate: exact in floating point when the wait is a whole number of nanoseconds.
            leaves = start + Int64(((Double(size) - available) * 8e9 / Double(bitsPerSecond)).rounded(.up))
            available = 0
        }
        tokens = available
        lastDeparture = leaves
        if leaves > now {
            waiting.append((leaves, size))
            queuedBytes += size
        }
        return leaves
    }

    private mutating func forgetDeparted(before now: Int64) {
        while waitingHead < waiting.count, waiting[waitingHead].departure <= now {
            queuedBytes -= waiting[waitingHead].size
            waitingHead += 1
        }
        if waitingHead > 64 && waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
    }
}
