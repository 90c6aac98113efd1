import PeerGateListener
import RelayProtocol

extension RelayCore {
    /// What the request gate makes of a client request.
    public enum GateVerdict: Hashable, Sendable {
        /// Refused with this answer (403 `forbidden`, 400 `bad room`).
        case refused(HTTPResponse)
        /// A GET or HEAD for one of the web client's files (only with `--web-client`).
        case webClientFile
        /// A request for this room.
        case room(String)
    }

    /// The query parameter a browser's request may carry its room in.
    public static let roomQueryParameter = "room"

    /// The checks every client request passes first, before its method or path is looked at (as
    /// upstream's entry gate). The `Origin` first: none (native clients never send one), or,
    /// with the web client on, exactly one equal to the relay's origin; any other is 403
    /// `forbidden` (so without the web client any `Origin` is, as upstream). Then, with the web
    /// client on, a GET or HEAD that is no upgrade and carries no `x-relay-room` is for a static
    /// file. Then the room: exactly one `x-relay-room` of 64 lowercase hex; a request admitted by
    /// its `Origin` (a browser cannot set that header on a WebSocket) may carry it as the query
    /// parameter `room` instead, or as both when they agree. Otherwise 400 `bad room`. Pure: the
    /// caller counts a refusal.
    public func gate(_ head: HTTPRequestHead) -> GateVerdict {
        let origins = head.values(named: "origin")
        let admittedBrowser = !origins.isEmpty
        if admittedBrowser {
            guard configuration.webClient != nil, origins.count == 1, origins[0] == configuration.origin else {
                return .refused(RelayHTTP.plain(403, "forbidden"))
            }
        }
        let headerRooms = head.values(named: RelayLimits.roomHeader)
        if configuration.webClient != nil, headerRooms.isEmpty, head.method == "GET" || head.method == "HEAD",
            head.values(named: "upgrade").isEmpty
        {
            return .webClientFile
        }
        let queryRooms = admittedBrowser ? Self.queryValues(named: Self.roomQueryParameter, in: head.target) : []
        guard let room = Self.room(headerValues: headerRooms, queryValues: queryRooms) else {
            return .refused(RelayHTTP.plain(400, "bad room"))
        }
        return .room(room)
    }

    /// The request's room, as `gate` reads it; nil when the gate refuses the request or it is
    /// for a static file.
    public func roomName(in head: HTTPRequestHead) -> String? {
        if case .room(let name) = gate(head) { return name }
        return nil
    }

    /// One room from at most one header value and at most one query value, every value given a
    /// valid room name and all of them the same.
    static func room(headerValues: [String], queryValues: [String]) -> String? {
        guard headerValues.count <= 1, queryValues.count <= 1, let name = (headerValues + queryValues).first,
            RoomName.isValid(name), (headerValues + queryValues).allSatisfy({ $0 == name })
        else { return nil }
        return name
    }

    /// The raw values of the query parameter `name` in a request target (`/?room=…&x=1`), in
    /// order; a parameter without `=` has the empty value. Not percent-decoded: a room name is hex.
    static func queryValues(named name: String, in target: String) -> [String] {
        guard let question = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: question)...].split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0] == name else { return nil }
            return parts.count == 2 ? String(parts[1]) : ""
        }
    }
}
