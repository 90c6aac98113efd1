import CLISupport
import Foundation
import Glibc
import Testing

@Suite struct FileDescriptorWriterTests {
    /// Reads `fd` to end of file on a thread of its own, after an optional delay.
    private func collect(_ fd: Int32, after delay: useconds_t = 0) -> () -> [UInt8] {
        let box = LockedBox<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        Thread {
            if delay > 0 { usleep(delay) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                bytes += buffer[..<count]
            }
            box.set(bytes)
            done.signal()
        }.start()
        return {
            _ = done.wait(timeout: .now() + 20)
            return box.get()
        }
    }

    private static let payload: [UInt8] = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }

    @Test func writesEverythingThroughAPipeMuchSmallerThanThePayload() throws {
        let pipe = try makePipe()
        defer { close(pipe.read) }
        let received = collect(pipe.read)
        try FileDescriptorWriter.writeAll(fd: pipe.write, bytes: Self.payload)
        close(pipe.write)
        #expect(received() == Self.payload)
    }

    @Test func waitsOnAFullNonBlockingPipeInsteadOfFailingWithEAGAIN() throws {
        let pipe = try makePipe(nonBlockingWrite: true)
        defer { close(pipe.read) }
        let received = collect(pipe.read, after: 200_000)  // the pipe fills long before the reader starts
        try FileDescriptorWriter.writeAll(fd: pipe.write, bytes: Self.payload)
        close(pipe.write)
        #expect(received() == Self.payload)
    }

    @Test func writesStrings() throws {
        let pipe = try makePipe()
        defer { close(pipe.read) }
        try FileDescriptorWriter.writeAll(fd: pipe.write, string: "héllo\n")
        close(pipe.write)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(pipe.read, &buffer, buffer.count)
        #expect(Array(buffer[..<max(count, 0)]) == Array("héllo\n".utf8))
    }

    @Test func aClosedDescriptorThrowsEBADF() throws {
        let pipe = try makePipe()
        close(pipe.read)
        close(pipe.write)
        #expect(throws: SystemError("write", code: EBADF)) {
            try FileDescriptorWriter.writeAll(fd: pipe.write, bytes: [1, 2, 3])
        }
        // Nothing to write is not an error, even on a bad descriptor.
        try FileDescriptorWriter.writeAll(fd: pipe.write, bytes: [])
    }

    @Test func systemErrorDescribesTheCall() {
        #expect(SystemError("write", code: EBADF).description == "write: Bad file descriptor (errno 9)")
    }
}
