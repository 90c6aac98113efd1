import RelayClient

/// One `RelayLink`'s events for a single owner loop, each tagged with `tag`, so the owner can tell
/// a replaced link's late events from the current one's. The link hands them over itself
/// (`RelayLink.deliver(to:)`): no thread of its own.
public final class RoomPump: Sendable {
    public typealias Event = RelayLink.RoomEvent

    public let link: RelayLink
    public let tag: Int

    public init(link: RelayLink, tag: Int, deliver: @escaping @Sendable (Int, Event) -> Void) {
        self.link = link
        self.tag = tag
        link.deliver { event in deliver(tag, event) }
    }

    /// Stops the link (closing its connection); `stopped` is the last event delivered.
    public func stop() { link.stop() }
}
