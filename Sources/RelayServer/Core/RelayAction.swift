import RelayProtocol

/// A socket as the relay's core knows it: a number the I/O shell assigned meaning to.
public typealias ConnectionID = UInt64

/// What the core asks the I/O shell to do. The shell drains them after every call into the core.
public enum RelayAction: Hashable, Sendable {
    /// Send a text frame (admission JSON).
    case sendText(ConnectionID, String)
    /// Admission succeeded: raise the socket's frame limit to the spliced size.
    case admitted(ConnectionID, frameLimit: Int)
    /// Send a close frame with this code and reason, then close the socket. The core has already
    /// forgotten the connection.
    case close(ConnectionID, RelayClose)
    /// Close the socket without a close frame (it missed a pong; nobody is listening).
    case drop(ConnectionID)
    /// Send a ping.
    case ping(ConnectionID)
}
