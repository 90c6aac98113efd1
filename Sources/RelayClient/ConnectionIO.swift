import Foundation

/// An admitted connection's socket, read and written under one lock by the connection's thread
/// and by senders: `send` writes a frame straight to the socket when nothing waits before it,
/// which saves a thread wake-up per frame (a keystroke's latency), and TLS takes one caller at a
/// time. Frames are written whole and in order: a sender writes only while nothing is buffered
/// or queued before it, and what the socket did not take stays buffered for the thread.
final class ConnectionIO: @unchecked Sendable {
    private let lock = NSLock()
    private var transport: RelayTransport?
    /// Whole frames waiting for the socket, from `writeOffset` on.
    private var writeBuffer: [UInt8] = []
    private var writeOffset = 0
    private var closeSent = false
    /// TLS asked for the other readiness.
    private var readWantsWritable = false
    private var writeWantsReadable = false

    /// What the connection's thread polls for.
    struct Readiness {
        let pendingWrite: Bool
        let readWantsWritable: Bool
        let writeWantsReadable: Bool
        let closeSent: Bool
    }

    /// What a sender's direct write did.
    enum DirectWrite {
        /// Something waits before the frame (or the connection is closing): queue it instead.
        case notTaken
        case written
        /// The socket took part of it; the rest is buffered and the thread must be woken.
        case buffered
    }

    /// From now on the socket is shared (call before admission is reported).
    func attach(_ transport: RelayTransport) {
        lock.withLock { self.transport = transport }
    }

    /// No one touches the socket after this (call before it closes).
    func detach() {
        lock.withLock { transport = nil }
    }

    var readiness: Readiness {
        lock.withLock {
            Readiness(
                pendingWrite: writeOffset < writeBuffer.count, readWantsWritable: readWantsWritable,
                writeWantsReadable: writeWantsReadable, closeSent: closeSent)
        }
    }

    var isCloseSent: Bool { lock.withLock { closeSent } }

    var hasBufferedInput: Bool { lock.withLock { transport?.hasBufferedInput ?? false } }

    /// What poll reported: a TLS call waiting for it may repeat.
    func socketBecame(readable: Bool, writable: Bool) {
        lock.withLock {
            if writable { readWantsWritable = false }
            if readable { writeWantsReadable = false }
        }
    }

    /// Whether reading may be tried now (TLS may be waiting for writability first).
    var mayRead: Bool { lock.withLock { !readWantsWritable } }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportIO {
        lock.withLock {
            guard let transport else { return .closed }
            let result = transport.read(into: buffer)
            if case .wantWrite = result { readWantsWritable = true }
            return result
        }
    }

    /// Buffers a frame for the thread to write; `closing` marks it as our close frame.
    func append(_ frame: [UInt8], closing: Bool = false) {
        lock.withLock {
            appendLocked(frame)
            if closing { closeSent = true }
        }
    }

    /// Buffers a control frame unless our close went out already.
    func appendUnlessClosing(_ frame: [UInt8]) {
        lock.withLock { if !closeSent { appendLocked(frame) } }
    }

    /// Moves queued frames into the buffer (a batch of about `budget` bytes, only once the buffer
    /// drained), and our close frame after them once asked. True when the close was just added.
    func takeQueued(from shared: ConnectionShared, budget: Int, closeFrame: () -> [UInt8]) -> Bool {
        lock.withLock {
            guard !closeSent else { return false }
            let drained = writeOffset == writeBuffer.count
            let (frames, close) = shared.takeOutgoing(budget: drained ? budget : 0)
            for frame in frames { appendLocked(frame) }
            guard close else { return false }
            appendLocked(closeFrame())
            closeSent = true
            return true
        }
    }

    /// Writes as much of the buffer as the socket takes now; the failure if it failed.
    func flush() -> TransportIO? {
        lock.withLock {
            guard let transport else { return nil }
            while writeOffset < writeBuffer.count && !writeWantsReadable {
                let result = writeBuffer.withUnsafeBytes { all in
                    transport.write(UnsafeRawBufferPointer(rebasing: all[writeOffset...]))
                }
                switch result {
                case .bytes(let count): writeOffset += count
                case .wantWrite: return nil
                case .wantRead:
                    writeWantsReadable = true
                    return nil
                case .closed, .failed: return result
                }
            }
            return nil
        }
    }

    /// A sender's frame, written now if nothing waits before it and `allowed` (checked under
    /// this lock, so the queue cannot fill in between) says the connection takes frames.
    func writeDirectly(_ frame: [UInt8], allowed: () -> Bool) -> DirectWrite {
        lock.withLock {
            guard let transport, !closeSent, writeOffset == writeBuffer.count, !writeWantsReadable,
                !readWantsWritable, allowed()
            else { return .notTaken }
            var written = 0
            attempt: while written < frame.count {
                let result = frame.withUnsafeBytes { all in
                    transport.write(UnsafeRawBufferPointer(rebasing: all[written...]))
                }
                switch result {
                case .bytes(let count) where count > 0: written += count
                case .wantRead:
                    writeWantsReadable = true
                    break attempt
                default:
                    // Full, closed or failed: the thread's next flush waits or reports it.
                    break attempt
                }
            }
            guard written < frame.count else { return .written }
            appendLocked(Array(frame[written...]))
            return .buffered
        }
    }

    func shutdownWrite() {
        lock.withLock { transport?.shutdownWrite() }
    }

    private func appendLocked(_ frame: [UInt8]) {
        if writeOffset == writeBuffer.count {
            writeBuffer.removeAll(keepingCapacity: writeBuffer.capacity <= 512 * 1024)
            writeOffset = 0
        } else if writeOffset > 256 * 1024 && writeOffset * 2 > writeBuffer.count {
            writeBuffer.removeFirst(writeOffset)
            writeOffset = 0
        }
        writeBuffer += frame
    }
}
