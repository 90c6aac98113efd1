import Foundation
import Glibc
import TestSupport

/// Polls `condition` every 50 ms until it holds, at most `timeout` seconds.
func waitFor(timeout: Double, _ what: String, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if try condition() { return }
        usleep(50_000)
    } while Date() < deadline
    throw FixtureError("not within \(timeout) s: \(what)")
}
