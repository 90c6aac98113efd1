import CompanionDevice
import SSHClient
import Synchronization

/// Where a session's keystrokes go on either road; both connections are thread-safe.
protocol TerminalInputTarget: AnyObject, Sendable {
    func send(_ bytes: [UInt8])
    func sendEOF()
}

extension SSHConnection: TerminalInputTarget {}
extension DeviceConnection: TerminalInputTarget {}

/// Writes to a session's remote stdin from any thread, without a hop through the MainActor.
///
/// A program that reads its own stdin on a thread of its own sends keystrokes straight to the
/// connection this way, saving one thread handoff per keystroke. Bytes sent while the session
/// is not connected are dropped, exactly as `TerminalSession.send` does.
public final class TerminalInput: Sendable {
    private let target = Mutex<(any TerminalInputTarget)?>(nil)

    init() {}

    /// Queues bytes for the remote command's stdin.
    public func send(_ bytes: [UInt8]) {
        target.withLock { $0 }?.send(bytes)
    }

    /// Closes the remote command's stdin after queued bytes.
    public func sendEOF() {
        target.withLock { $0 }?.sendEOF()
    }

    func attach(_ connection: (any TerminalInputTarget)?) {
        target.withLock { $0 = connection }
    }
}
