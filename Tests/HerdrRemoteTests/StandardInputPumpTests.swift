import Foundation
import Glibc
import Synchronization
import Testing

@testable import herdr_remote

@Suite struct StandardInputPumpTests {
    @Test("after ~. the pump reads nothing more: later keys stay for the shell")
    func stopsReadingAtTildeDot() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let typed = Array("ls\r~.dropped".utf8)
        try #require(write(ends[1], typed, typed.count) == typed.count)

        let sent = Mutex<[UInt8]>([])
        let pump = StandardInputPump(
            descriptor: ends[0], send: { bytes in sent.withLock { $0 += bytes } }, interpretEscapes: true,
            onAction: { _ in }, onEnd: {})
        let returned = DispatchSemaphore(value: 0)
        Thread {
            pump.run()
            returned.signal()
        }.start()
        // A pump that kept reading would block here until the pipe closes at the end.
        #expect(returned.wait(timeout: .now() + 20) == .success)
        #expect(sent.withLock { $0 } == Array("ls\r".utf8))

        let later = Array("later".utf8)
        try #require(write(ends[1], later, later.count) == later.count)
        var buffer = [UInt8](repeating: 0, count: 64)
        let got = read(ends[0], &buffer, buffer.count)
        #expect(
            got == later.count && Array(buffer[0..<max(got, 0)]) == later, "the keys typed later stayed in the pipe")
    }
}
