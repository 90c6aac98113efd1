import Foundation

/// One SSH connection that runs a command, on a thread of its own.
///
/// libssh2 runs non-blocking on that thread with `poll`, so nothing here ever blocks Swift's
/// cooperative pool. Everything the connection learns arrives in order on `events` (or to the
/// handler `start(onEvent:)` was given); output
/// waits for `acknowledgeOutput()` before the next read, which is what gives backpressure:
/// unread output stays in the server's SSH window, not in this process.
public final class SSHConnection: Sendable {
    public let events: AsyncStream<SSHEvent>
    private let continuation: AsyncStream<SSHEvent>.Continuation
    private let control: ConnectionControl
    private let configuration: SSHConnectionConfiguration

    public init(configuration: SSHConnectionConfiguration) throws(SSHFailure) {
        self.configuration = configuration
        self.control = ConnectionControl(wake: try WakeSignal())
        (events, continuation) = AsyncStream.makeStream(of: SSHEvent.self)
    }

    /// Starts the connection thread. Call once. With `onEvent`, the events go to it on the
    /// connection's thread, in order, instead of to `events` (which then only ends): a caller
    /// with a queue of its own skips the stream's task hop.
    public func start(onEvent: (@Sendable (SSHEvent) -> Void)? = nil) {
        let configuration = configuration
        let control = control
        let continuation = continuation
        let deliver: @Sendable (SSHEvent) -> Void = onEvent ?? { continuation.yield($0) }
        let thread = Thread {
            let worker = SSHConnectionWorker(configuration: configuration, control: control, emit: deliver)
            let termination = worker.run()
            deliver(.finished(termination, commandRunTime: worker.commandRunTime))
            continuation.finish()
        }
        thread.name = "ssh \(configuration.host):\(configuration.port)"
        thread.start()
    }

    /// Queues bytes for the remote command's stdin.
    public func send(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        control.post(.send(bytes))
    }

    /// Closes the remote command's stdin once queued bytes are written.
    public func sendEOF() { control.post(.sendEOF) }

    /// Sends an SSH window-change for the PTY.
    public func resize(cols: Int, rows: Int) { control.post(.resize(cols: cols, rows: rows)) }

    /// Lets the connection read the next output chunk.
    public func acknowledgeOutput() { control.post(.acknowledgeOutput) }

    /// Stops the connection; the stream ends with `.finished(.cancelled)` unless it had already ended.
    public func cancel() { control.cancel() }
}
