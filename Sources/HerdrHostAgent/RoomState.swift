/// A device's relay room as the status file and `herdr-host status` show it (`description`).
enum RoomState: Hashable, Sendable, CustomStringConvertible {
    case connecting
    /// Admitted: a handshake is under way, or the room waits for the device.
    case parked
    case connected
    /// The connection ended; the link connects again.
    case reconnecting
    /// The last attempt failed for `reason`; the next in `retryIn` seconds (rounded up).
    case waiting(reason: String, retryIn: Int)
    /// Stopped until herdr-host restarts: another herdr-host took the room.
    case displaced
    /// Stopped until herdr-host restarts: the relay refused to park (`reason`).
    case refused(String)

    var description: String {
        switch self {
        case .connecting: "connecting"
        case .parked: "parked"
        case .connected: "connected"
        case .reconnecting: "reconnecting"
        case .waiting(let reason, let retryIn): "waiting (\(reason)); retry in \(retryIn) s"
        case .displaced: "stopped: another herdr-host took the room"
        case .refused(let reason): "stopped: the relay refused to park (\(reason))"
        }
    }
}
