import Dispatch
import Foundation
import Plumbing
import Synchronization
import Testing

@Suite("CombiningQueue: handled by whichever thread pushes, one batch at a time, in order")
struct CombiningQueueTests {
    /// What the handler saw, and whether two batches ever overlapped.
    final class Record: @unchecked Sendable {
        let lock = NSLock()
        var handled: [(sender: Int, index: Int)] = []
        var inside = 0
        var overlapped = false
    }

    @Test(
        "four threads pushing 10,000 elements each: every one handled once, each sender's in order, never two batches at once"
    )
    func concurrentPushers() {
        let record = Record()
        let queue = CombiningQueue<[Int]> { batch in
            record.lock.withLock {
                record.inside += 1
                if record.inside > 1 { record.overlapped = true }
            }
            for element in batch { record.lock.withLock { record.handled.append((element[0], element[1])) } }
            record.lock.withLock { record.inside -= 1 }
        }
        let senders = 4
        let count = 10_000
        let done = DispatchSemaphore(value: 0)
        for sender in 0..<senders {
            Thread {
                for index in 0..<count { queue.push([sender, index]) }
                done.signal()
            }.start()
        }
        for _ in 0..<senders { done.wait() }
        // The last pusher to let go of the lock handled what was left, so nothing waits now.
        let handled = record.lock.withLock { record.handled }
        #expect(handled.count == senders * count)
        #expect(!record.overlapped)
        for sender in 0..<senders {
            #expect(handled.filter { $0.sender == sender }.map(\.index) == Array(0..<count))
        }
    }

    @Test("a push while the owner holds the lock returns at once; the owner handles it before withLock returns")
    func pushWhileHeld() {
        let handled = Mutex<[Int]>([])
        let queue = CombiningQueue<Int> { batch in handled.withLock { $0 += batch } }
        let pushed = DispatchSemaphore(value: 0)
        queue.withLock {
            Thread {
                queue.push(7)
                pushed.signal()
            }.start()
            // The pusher finishes while this thread still holds the lock: it never waited for it.
            #expect(pushed.wait(timeout: .now() + 30) == .success)
            #expect(handled.withLock { $0 }.isEmpty, "not handled while the owner held the lock")
        }
        #expect(handled.withLock { $0 } == [7])
    }

    @Test("an element pushed by the handler itself is handled next, on the same thread, without deadlock")
    func pushFromHandler() {
        let handled = Mutex<[Int]>([])
        let box = Mutex<CombiningQueue<Int>?>(nil)
        let queue = CombiningQueue<Int> { batch in
            for element in batch {
                handled.withLock { $0.append(element) }
                if element < 5 { box.withLock { $0 }?.push(element + 1) }
            }
        }
        box.withLock { $0 = queue }
        queue.push(0)
        #expect(handled.withLock { $0 } == [0, 1, 2, 3, 4, 5])
    }
}
