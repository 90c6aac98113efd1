import Glibc
import TestSupport
import Testing

@Suite("InteractiveProcess, the tests' way of running a program")
struct InteractiveProcessTests {
    /// A fixture that throws half-way drops its process: the child must not outlive the test.
    @Test("dropping an InteractiveProcess kills and reaps its child, even while the child keeps its output open")
    func aDroppedProcessTakesItsChildAlong() throws {
        var process: InteractiveProcess? = try InteractiveProcess(
            "/bin/sh", ["-c", "echo ready; exec /bin/sleep 600"], environment: [:])
        #expect(process?.waitFor("ready") == true)
        let pid = try #require(process?.process.pid)
        process = nil
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "process \(pid) is still there")
    }
}
