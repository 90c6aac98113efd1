/// A FIFO producer threads fill and consumers drain, by blocking (`next(timeout:)`) or by
/// awaiting (`next()`), in any mix. `finish()` ends it: consumers get what is queued, then nil.
/// `weight` and `onTake` let the producer apply flow control (stop reading while too much waits).
public final class EventQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var finished = false
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Element?, Never>)] = []
        var nextWaiter: UInt64 = 0
        var weight = 0
    }

    private let condition = Condition()
    nonisolated(unsafe) private var state = State()
    private let weightOf: @Sendable (Element) -> Int
    private let onTake: @Sendable (_ remainingWeight: Int) -> Void

    public init(
        weight: @escaping @Sendable (Element) -> Int = { _ in 0 },
        onTake: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.weightOf = weight
        self.onTake = onTake
    }

    /// Whether nothing waits.
    public var isEmpty: Bool { condition.withLock { state.head == state.items.count } }

    /// The summed weight of what waits.
    public var weight: Int { condition.withLock { state.weight } }

    /// Queues `element` (or hands it to a waiting task). Ignored once finished.
    public func push(_ element: Element) {
        let waiter: CheckedContinuation<Element?, Never>? = condition.withLock {
            guard !state.finished else { return nil }
            if !state.waiters.isEmpty { return state.waiters.removeFirst().continuation }
            state.items.append(element)
            state.weight += weightOf(element)
            condition.broadcast()
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// No more elements after what is queued.
    public func finish() {
        let waiters = condition.withLock {
            state.finished = true
            condition.broadcast()
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The next element, waiting at most `timeout` seconds (nil: forever); nil once finished and
    /// drained, or on timeout.
    public func next(timeout: Double?) -> Element? {
        let deadline = timeout.map { Deadline(seconds: $0) } ?? .never
        let (element, weight): (Element?, Int) = condition.withLock {
            while true {
                if let element = popLocked() { return (element, state.weight) }
                if state.finished || deadline.hasPassed { return (nil, state.weight) }
                condition.wait(until: deadline)
            }
        }
        if element != nil { onTake(weight) }
        return element
    }

    /// The next element, nil once finished and drained (or when the task is cancelled).
    public func next() async -> Element? {
        let id: UInt64 = condition.withLock {
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let element: Element? = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let immediate: (Element?, Bool) = condition.withLock {
                    if let element = popLocked() { return (element, true) }
                    if state.finished || Task.isCancelled { return (nil, true) }
                    state.waiters.append((id, continuation))
                    return (nil, false)
                }
                if immediate.1 { continuation.resume(returning: immediate.0) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Element?, Never>? = condition.withLock {
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: nil)
        }
        if element != nil { onTake(weight) }
        return element
    }

    private func popLocked() -> Element? {
        guard state.head < state.items.count else { return nil }
        let element = state.items[state.head]
        state.head += 1
        state.weight -= weightOf(element)
        if state.head == state.items.count {
            state.items.removeAll(keepingCapacity: state.items.count < 1024)
            state.head = 0
        } else if state.head >= 1024 && state.head * 2 >= state.items.count {
            state.items.removeFirst(state.head)
            state.head = 0
        }
        return element
    }
}
