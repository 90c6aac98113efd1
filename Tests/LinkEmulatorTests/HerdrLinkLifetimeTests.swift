import Foundation
import Glibc
import TestSupport
import Testing

/// herdr-link never outlives what started it: it ends on SIGTERM, and when the thread that
/// spawned it ends (PR_SET_PDEATHSIG) even while its input stays open.
@Suite(.serialized) struct HerdrLinkLifetimeTests {
    /// Starts herdr-link with one TUN in `namespace`, spawned from a thread that waits until
    /// `endParent` is signalled, then ends; its stdin's write end and stdout's read end.
    static func start(in namespace: TestNetworkNamespace, endParent: DispatchSemaphore) throws -> (
        ChildProcess, Int32, Int32
    ) {
        let stdin = try PipePair()
        let stdout = try PipePair()
        let arguments = ["--link", "name=probe,netns=\(namespace.name),interface=probe0,route=fd12:3456:789a::/64"]
        let (input, output) = (stdin.read, stdout.write)
        final class Spawned: @unchecked Sendable { var result: Result<ChildProcess, any Error>? }
        let spawned = Spawned()
        let done = DispatchSemaphore(value: 0)
        Thread {
            spawned.result = Result {
                try ChildProcess(LinkEmulatorProcess.executable, arguments, stdin: input, stdout: output)
            }
            done.signal()
            endParent.wait()
        }.start()
        done.wait()
        close(stdin.read)
        close(stdout.write)
        return (try spawned.result!.get(), stdin.write, stdout.read)
    }

    static func readLine(_ fd: Int32) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&ready, 1, 20_000) > 0, read(fd, &byte, 1) == 1, byte != 10 { line.append(byte) }
        return String(decoding: line, as: UTF8.self)
    }

    @Test func itEndsWhenTheThreadThatStartedItEnds() throws {
        let namespace = try TestNetworkNamespace()
        defer { namespace.remove() }
        let endParent = DispatchSemaphore(value: 0)
        let (child, input, output) = try Self.start(in: namespace, endParent: endParent)
        defer {
            close(input)
            close(output)
        }
        // Ready means the parent-death signal is set (a thread that ended before that would go unnoticed).
        let ready = Self.readLine(output)
        #expect(ready.hasPrefix("ok ready"), "\(ready)")
        endParent.signal()
        let status = child.wait(timeout: 20)
        if status == nil {
            child.signal(SIGKILL)
            child.wait()
        }
        #expect(status == 0, "its input is still open: only the parent-death signal can end it")
    }

    @Test func itEndsOnSIGTERMAndItsDeviceGoesWithIt() throws {
        let namespace = try TestNetworkNamespace()
        defer { namespace.remove() }
        let endParent = DispatchSemaphore(value: 0)
        let (child, input, output) = try Self.start(in: namespace, endParent: endParent)
        defer {
            endParent.signal()
            close(input)
            close(output)
        }
        let ready = Self.readLine(output)
        #expect(ready.hasPrefix("ok ready"), "\(ready)")
        let ip = try ProcessRunner.which("ip")
        #expect(try ProcessRunner.run(ip, ["-n", namespace.name, "link", "show", "probe0"]).status == 0)
        child.signal(SIGTERM)
        let status = child.wait(timeout: 20)
        if status == nil {
            child.signal(SIGKILL)
            child.wait()
        }
        #expect(status == 0)
        #expect(try ProcessRunner.run(ip, ["-n", namespace.name, "link", "show", "probe0"]).status != 0)
    }

    @Test func itRefusesABadCommandLineBeforeOpeningAnything() throws {
        let result = try ProcessRunner.run(LinkEmulatorProcess.executable, ["--link", "name=a"], timeout: 20)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--link needs name=, netns= and interface="), "\(result.stderr)")
        let missing = try ProcessRunner.run(
            LinkEmulatorProcess.executable, ["--link", "name=a,netns=herdr-no-such-namespace,interface=x0"],
            timeout: 20)
        #expect(missing.status == 71)
        #expect(missing.stderr.contains("/run/netns/herdr-no-such-namespace"), "\(missing.stderr)")
        let help = try ProcessRunner.run(LinkEmulatorProcess.executable, ["--help"], timeout: 20)
        #expect(help.status == 0 && help.stdout.contains("link NAME [uplink|downlink] KEY=VALUE..."))
    }
}
