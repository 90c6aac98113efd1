import EndToEndChannel

/// A connection over one of the Noise roads with its channel up, the status acknowledged.
public struct RoadConnection: Sendable {
    public var channel: FramedChannel
    /// True when this connection registered the room (the caller keeps `registered`).
    public var registeredNow: Bool
    /// Which road it took.
    public var road: NoiseRoad

    public init(channel: FramedChannel, registeredNow: Bool, road: NoiseRoad) {
        self.channel = channel
        self.registeredNow = registeredNow
        self.road = road
    }
}
