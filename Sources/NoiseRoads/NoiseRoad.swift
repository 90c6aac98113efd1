import PeerGate

/// Which Noise road a device's connection to its computer took: the home network or the relay
/// (the third road, SSH, is not a Noise road).
public enum NoiseRoad: Hashable, Sendable, CustomStringConvertible {
    case home(HomeAddress)
    case relay(host: String)

    /// "home network [fd00::7]:4610" or "relay relay.example.com".
    public var description: String {
        switch self {
        case .home(let address): "home network \(address)"
        case .relay(let host): "relay \(host)"
        }
    }

    public var isHome: Bool {
        if case .home = self { return true }
        return false
    }
}
