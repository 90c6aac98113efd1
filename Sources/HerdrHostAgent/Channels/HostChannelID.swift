/// One of herdr-host's channels, on either road: an id names one channel for the agent's life
/// (`HostChannelTable`).
public struct HostChannelID: Hashable, Sendable, CustomStringConvertible {
    let value: Int

    public var description: String { "channel \(value)" }
}
