/// One direction of a link: loss, burst loss, the rate limit's queue and the delay, in that
/// order. Pure: the time comes in with each packet and randomness from the caller's generator.
struct LinkDirection {
    private(set) var impairments = LinkImpairments()
    private var rateLimit: TokenBucketQueue?
    private var inBadState = false
    /// When the last packet is delivered; later packets are not delivered before it (no reordering).
    private var lastDelivery: Int64 = .min
    var statistics = DirectionStatistics()

    enum Verdict: Equatable {
        case deliver(at: Int64)
        case drop(DropReason)
    }

    mutating func configure(_ new: LinkImpairments) {
        impairments = new
        if let rate = new.rate {
            if rateLimit == nil {
                rateLimit = TokenBucketQueue(
                    bitsPerSecond: rate, bucketBytes: new.bucketBytes, queueLimit: new.effectiveQueueBytes)
            } else {
                rateLimit!.reconfigure(
                    bitsPerSecond: rate, bucketBytes: new.bucketBytes, queueLimit: new.effectiveQueueBytes)
            }
        } else {
            rateLimit = nil
        }
        if new.burst == nil { inBadState = false }
    }

    /// Bytes waiting in the rate limit's queue (as of the last packet).
    var queuedBytes: Int { rateLimit?.queuedBytes ?? 0 }

    /// What happens to a packet of `size` bytes entering at `now`; counted in `statistics`.
    mutating func admit(size: Int, at now: Int64, random: inout some RandomNumberGenerator) -> Verdict {
        let verdict = decide(size: size, at: now, random: &random)
        switch verdict {
        case .deliver:
            statistics.passedPackets += 1
            statistics.passedBytes += UInt64(size)
        case .drop(let reason): statistics.drop(reason)
        }
        return verdict
    }

    private mutating func decide(size: Int, at now: Int64, random: inout some RandomNumberGenerator) -> Verdict {
        if impairments.loss > 0, Double.random(in: 0..<1, using: &random) < impairments.loss { return .drop(.loss) }
        if let burst = impairments.burst {
            let move = Double.random(in: 0..<1, using: &random)
            if inBadState { inBadState = move >= burst.leaveBad } else { inBadState = move < burst.enterBad }
            let loss = inBadState ? burst.lossInBad : burst.lossInGood
            if loss > 0, Double.random(in: 0..<1, using: &random) < loss { return .drop(.burst) }
        }
        var departure = now
        if rateLimit != nil {
            guard let leaves = rateLimit!.departure(size: size, at: now) else { return .drop(.queue) }
            departure = leaves
        }
        var delay = impairments.delay.nanoseconds
        let jitter = impairments.jitter.nanoseconds
        if jitter > 0 { delay = max(0, delay + Int64.random(in: -jitter...jitter, using: &random)) }
        var delivery = departure + delay
        if !impairments.reorder { delivery = max(delivery, lastDelivery) }
        lastDelivery = max(lastDelivery, delivery)
        return .deliver(at: delivery)
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000).overflow
            ? .max : product + attoseconds / 1_000_000_000
    }
}
