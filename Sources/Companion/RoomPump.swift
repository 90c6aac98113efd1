import Foundation
import RelayClient

/// Turns one `RelayLink` into a stream of events for a single owner loop: each admitted
/// connection, its frames, its end, the link's waits and its stop. Runs on a thread of its own
/// (it blocks on the link and the connection), and hands everything to `deliver` tagged with
/// `tag`, so the owner can tell a replaced link's late events from the current one's.
public final class RoomPump: Sendable {
    public enum Event: Sendable {
        /// A connection was admitted (the phone's carries its registration token).
        case admitted(RelayConnection)
        /// A frame from the peer on the current connection.
        case frame([UInt8])
        /// The current connection ended; the link reconnects unless it stops.
        case connectionEnded(RelayConnectionEnd)
        case waiting(retryIn: Double, reason: String)
        /// The link gave up for good; the last event.
        case stopped(RelayLink.StopReason)
    }

    public let link: RelayLink
    public let tag: Int

    public init(link: RelayLink, tag: Int, deliver: @escaping @Sendable (Int, Event) -> Void) {
        self.link = link
        self.tag = tag
        let thread = Thread {
            while let event = link.nextEvent(timeout: nil) {
                switch event {
                case .connecting: continue
                case .waiting(let delay, let reason): deliver(tag, .waiting(retryIn: delay, reason: reason))
                case .stopped(let reason):
                    deliver(tag, .stopped(reason))
                    return
                case .admitted(let connection):
                    deliver(tag, .admitted(connection))
                    // Frames go from the connection's own thread straight to the owner.
                    let ended = DispatchSemaphore(value: 0)
                    connection.deliver { event in
                        switch event {
                        case .message(let bytes): deliver(tag, .frame(bytes))
                        case .ended(let end):
                            deliver(tag, .connectionEnded(end))
                            ended.signal()
                        }
                    }
                    ended.wait()
                }
            }
        }
        thread.name = "room pump"
        thread.start()
    }

    /// Stops the link (closing its connection); the pump ends after delivering `stopped`.
    public func stop() { link.stop() }
}
