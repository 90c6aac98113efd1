import Dispatch
import Foundation
import Testing

@testable import HerdrKit

/// `MainQueueEvents.runAndWait` from the main queue itself: a MainActor caller (a keystroke, the
/// agents watch stopped) can drain the connection's output on its own thread, and the output
/// sink waits for the MainActor. The test process runs `dispatchMain()`, so the main queue's
/// blocks run on worker threads where `Thread.isMainThread` is false: a `sync` there would trap.
@Suite struct MainQueueEventsTests {
    @Test func runAndWaitFromTheMainQueueRunsAtOnce() async {
        let ran = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            DispatchQueue.main.async {
                var order: [String] = []
                MainQueueEvents.runAndWait { order.append("body") }
                order.append("after")
                done.resume(returning: order)
            }
        }
        #expect(ran == ["body", "after"])
    }

    @Test func runAndWaitFromAnotherThreadWaitsForTheBody() async {
        let ran = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            Thread {
                #expect(!MainQueueEvents.isOnMainQueue)
                nonisolated(unsafe) var body = false
                MainQueueEvents.runAndWait { body = true }
                done.resume(returning: body)
            }.start()
        }
        #expect(ran)
    }
}
