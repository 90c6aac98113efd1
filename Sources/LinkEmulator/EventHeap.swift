/// A min-heap of timed events; events due at the same time come out in the order they went in.
struct EventHeap<Payload> {
    private var items: [(time: Int64, sequence: UInt64, payload: Payload)] = []
    private var nextSequence: UInt64 = 0

    var count: Int { items.count }
    var earliest: Int64? { items.first?.time }

    mutating func push(_ payload: Payload, at time: Int64) {
        items.append((time, nextSequence, payload))
        nextSequence += 1
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest event if it is due at `now`.
    mutating func popDue(at now: Int64) -> (time: Int64, payload: Payload)? {
        guard let first = items.first, first.time <= now else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < items.count && precedes(left, smallest) { smallest = left }
                if right < items.count && precedes(right, smallest) { smallest = right }
                guard smallest != parent else { break }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.time, first.payload)
    }

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        items[a].time < items[b].time || (items[a].time == items[b].time && items[a].sequence < items[b].sequence)
    }
}
