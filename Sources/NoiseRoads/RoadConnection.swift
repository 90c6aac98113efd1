import EndToEndChannel
import SessionProtocol

/// A connection over one of the Noise roads with its channel up, the status acknowledged.
public struct RoadConnection: Sendable {
    public var channel: FramedChannel
    /// True when this connection registered the room (the caller keeps `registered`).
    public var registeredNow: Bool
    /// Which road it took.
    public var road: NoiseRoad
    /// What the computer said it serves beyond sessions of bytes (`"screen": 1`), by version.
    public var served: [String: Int]

    public init(channel: FramedChannel, registeredNow: Bool, road: NoiseRoad, served: [String: Int] = [:]) {
        self.channel = channel
        self.registeredNow = registeredNow
        self.road = road
        self.served = served
    }

    /// Whether the computer serves screen sessions of this side's version.
    public var servesScreenSessions: Bool { served[CompanionMessage.screenSessions] == 1 }
}
