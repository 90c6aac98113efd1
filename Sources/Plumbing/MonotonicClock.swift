import Glibc

/// Monotonic seconds (CLOCK_MONOTONIC), for deadlines and round-trip times.
public enum MonotonicClock {
    public static var now: Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// A point in monotonic time by which something must have happened.
public struct Deadline: Sendable {
    public let time: Double

    /// `seconds` from now (at least now).
    public init(seconds: Double) { time = MonotonicClock.now + max(0, seconds) }
    /// At monotonic time `time`.
    public init(at time: Double) { self.time = time }

    /// A deadline that never passes.
    public static let never = Deadline(at: .infinity)

    /// Seconds left (negative once passed).
    public var remaining: Double { time - MonotonicClock.now }
    /// Whether it has come.
    public var hasPassed: Bool { MonotonicClock.now >= time }

    /// Milliseconds left for poll(2): at least 0, at most `cap`; -1 never happens (callers loop).
    public func pollMilliseconds(cap: Int32 = 1000) -> Int32 {
        let left = remaining
        if left <= 0 { return 0 }
        if !left.isFinite { return cap }
        return Int32(min(Double(cap), (left * 1000).rounded(.up)))
    }

    /// The earlier of two deadlines.
    public func earlier(_ other: Deadline) -> Deadline { time <= other.time ? self : other }
}

/// A mutex and its condition variable (timed waits on the monotonic clock), for state that
/// threads block on. Swift's `Mutex` has no condition, and Foundation's `NSCondition` waits on
/// the wall clock.
public final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// A fresh mutex and condition on the monotonic clock.
    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits (the lock held by the caller, inside `withLock`) until signalled or `deadline`.
    public func wait(until deadline: Deadline) {
        guard deadline.time.isFinite else {
            pthread_cond_wait(condition, mutex)
            return
        }
        var spec = timespec()
        let whole = deadline.time.rounded(.down)
        spec.tv_sec = Int(whole)
        spec.tv_nsec = Int((deadline.time - whole) * 1e9)
        _ = pthread_cond_timedwait(condition, mutex, &spec)
    }

    /// Wakes every waiter (the lock held by the caller).
    public func broadcast() { pthread_cond_broadcast(condition) }
}
