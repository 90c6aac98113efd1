/// What one direction of a link does to the packets crossing it. The default is a perfect
/// link: no delay, no loss, no rate limit.
public struct LinkImpairments: Equatable, Sendable {
    /// One-way delay added to every packet.
    public var delay: Duration = .zero
    /// Each packet's delay is `delay` plus a uniform sample in [-jitter, +jitter] (never below
    /// zero). Packets stay in order unless `reorder` is on: a later packet is never delivered
    /// before an earlier one, as on a real FIFO link.
    public var jitter: Duration = .zero
    /// Whether jitter may reorder packets.
    public var reorder = false
    /// Independent loss: the probability (0…1) that any packet is dropped.
    public var loss = 0.0
    /// Burst loss (Gilbert–Elliott), on top of the independent loss; nil for none.
    public var burst: GilbertElliott?
    /// The bandwidth limit in bits per second (IP packets, headers included); nil for none.
    public var rate: UInt64?
    /// The token bucket's depth: bytes that may pass at once after a pause.
    public var bucketBytes = LinkImpairments.defaultBucketBytes
    /// The queue before the rate limit; a packet that would make it longer is dropped (tail
    /// drop). nil: the bytes the rate carries in 200 ms, at least 16 KiB.
    public var queueBytes: Int?

    public static let defaultBucketBytes = 1500
    public static let maximumDelay: Duration = .seconds(60)
    public static let rateRange: ClosedRange<UInt64> = 1000...100_000_000_000
    public static let queueRange = 1500...(64 << 20)
    public static let bucketRange = 0...(16 << 20)

    public init() {}

    /// The queue limit in force: `queueBytes`, or its default for the rate.
    public var effectiveQueueBytes: Int {
        if let queueBytes { return queueBytes }
        guard let rate else { return Self.queueRange.upperBound }
        let fifthOfASecond = rate / 8 / 5
        return Int(min(UInt64(Self.queueRange.upperBound), max(16 << 10, fifthOfASecond)))
    }
}

/// The Gilbert–Elliott model of burst loss: a link is in a good or a bad state; before each
/// packet it moves from good to bad with probability `enterBad` and from bad to good with
/// `leaveBad`, then drops the packet with the loss of the state it is in.
public struct GilbertElliott: Equatable, Sendable {
    public var enterBad: Double
    public var leaveBad: Double
    public var lossInBad: Double
    public var lossInGood: Double

    public init(enterBad: Double, leaveBad: Double, lossInBad: Double = 1, lossInGood: Double = 0) {
        self.enterBad = enterBad
        self.leaveBad = leaveBad
        self.lossInBad = lossInBad
        self.lossInGood = lossInGood
    }
}
