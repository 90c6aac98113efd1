/// The relay's counters, rendered as Prometheus text on `/metrics`. Labels are fixed protocol
/// strings only: never an address or a room name.
struct RelayMetrics {
    var admissions: [String: Int] = [:]
    var closes: [String: Int] = [:]
    var httpResponses: [Int: Int] = [:]
    var framesSpliced = 0
    var bytesSpliced = 0
    var framesDropped = 0

    mutating func countClose(_ reason: String) { closes[reason, default: 0] += 1 }

    func render(
        openConnections: Int, activeRooms: Int, splicedRooms: Int, leasedRooms: Int, storedRooms: Int?, storeUp: Bool
    ) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        family("relay_connections_open", "gauge", "WebSocket connections open now.")
        out += "relay_connections_open \(openConnections)\n"
        family("relay_rooms_active", "gauge", "Rooms with at least one socket.")
        out += "relay_rooms_active \(activeRooms)\n"
        family("relay_rooms_spliced", "gauge", "Rooms whose Mac and phone are both admitted here.")
        out += "relay_rooms_spliced \(splicedRooms)\n"
        family("relay_rooms_leased", "gauge", "Rooms this node holds the lease of in a shared store.")
        out += "relay_rooms_leased \(leasedRooms)\n"
        family("relay_store_up", "gauge", "1 while the store can be reached, 0 during an outage.")
        out += "relay_store_up \(storeUp ? 1 : 0)\n"
        if let storedRooms {
            family("relay_rooms_stored", "gauge", "Rooms in the store.")
            out += "relay_rooms_stored \(storedRooms)\n"
        }
        family("relay_admissions_total", "counter", "Admission results, by result.")
        for (result, count) in admissions.sorted(by: { $0.key < $1.key }) {
            out += "relay_admissions_total{result=\"\(result)\"} \(count)\n"
        }
        family("relay_closes_total", "counter", "Sockets the relay closed, by close reason.")
        for (reason, count) in closes.sorted(by: { $0.key < $1.key }) {
            out += "relay_closes_total{reason=\"\(reason)\"} \(count)\n"
        }
        family("relay_http_responses_total", "counter", "HTTP responses, by status.")
        for (status, count) in httpResponses.sorted(by: { $0.key < $1.key }) {
            out += "relay_http_responses_total{status=\"\(status)\"} \(count)\n"
        }
        family("relay_frames_spliced_total", "counter", "Data frames (text and binary) forwarded to a peer.")
        out += "relay_frames_spliced_total \(framesSpliced)\n"
        family("relay_bytes_spliced_total", "counter", "Payload bytes forwarded to a peer.")
        out += "relay_bytes_spliced_total \(bytesSpliced)\n"
        family("relay_frames_dropped_total", "counter", "Frames dropped for want of a peer.")
        out += "relay_frames_dropped_total \(framesDropped)\n"
        return out
    }
}
