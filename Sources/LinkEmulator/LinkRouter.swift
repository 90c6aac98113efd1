/// Which direction of a link a setting is for.
public enum LinkDirectionSelector: String, Sendable {
    /// From the link's namespace into the emulator.
    case uplink
    /// From the emulator into the link's namespace.
    case downlink
    case both
}

/// A link as the router is told of it: its name and the addresses its namespace owns.
public struct LinkDescription: Equatable, Sendable {
    public let name: String
    public let prefixes: [IPPrefix]

    public init(name: String, prefixes: [IPPrefix]) {
        self.name = name
        self.prefixes = prefixes
    }
}

public struct LinkRouterError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The emulator's model, without I/O: packets read from one link go to the link that owns their
/// destination address (the longest prefix wins), through the ingress link's uplink and then
/// the egress link's downlink (each with its state and impairments), and come out when their
/// delivery time comes. Time is nanoseconds of a monotonic clock, given with every call;
/// randomness comes from `Random`, so a seeded generator repeats a run exactly.
public struct LinkRouter<Random: RandomNumberGenerator> {
    private var links: [EmulatedLink]
    private var random: Random
    private var events = EventHeap<Event>()
    private var inFlightBytes = 0
    public let inFlightPacketLimit: Int
    public let inFlightByteLimit: Int
    /// The routing table, longest prefixes first.
    private let table: [(prefix: IPPrefix, link: Int)]

    private struct Event {
        enum Stage {
            /// Leaves the ingress link's uplink; enters the egress link's downlink.
            case enterDownlink
            /// Written to the egress link.
            case deliver
        }
        let stage: Stage
        let link: Int
        let flow: FlowKey
        let packet: [UInt8]
    }

    /// A packet whose delivery time has come, for the link at `link`.
    public struct Delivery {
        public let link: Int
        public let packet: [UInt8]
    }

    /// Names must be unique and non-empty, and an address prefix belongs to one link only.
    public init(
        links descriptions: [LinkDescription], random: Random, flowCapacity: Int = 65536,
        inFlightPacketLimit: Int = 65536, inFlightByteLimit: Int = 64 << 20
    ) throws(LinkRouterError) {
        guard !descriptions.isEmpty else { throw LinkRouterError("no links") }
        var names: Set<String> = []
        var prefixes: Set<IPPrefix> = []
        for description in descriptions {
            guard !description.name.isEmpty else { throw LinkRouterError("a link has no name") }
            guard names.insert(description.name).inserted else {
                throw LinkRouterError("two links are named \(description.name)")
            }
            for prefix in description.prefixes {
                guard prefixes.insert(prefix).inserted else {
                    throw LinkRouterError("\(prefix) is given to two links")
                }
            }
        }
        links = descriptions.map { EmulatedLink(name: $0.name, prefixes: $0.prefixes, flowCapacity: flowCapacity) }
        table = descriptions.enumerated().flatMap { index, description in
            description.prefixes.map { (prefix: $0, link: index) }
        }.sorted { $0.prefix.length > $1.prefix.length }
        self.random = random
        self.inFlightPacketLimit = inFlightPacketLimit
        self.inFlightByteLimit = inFlightByteLimit
    }

    public var linkNames: [String] { links.map(\.name) }

    public func linkIndex(named name: String) -> Int? { links.firstIndex { $0.name == name } }

    /// The link owning `address`, if any.
    public func route(_ address: IPAddress) -> Int? { table.first { $0.prefix.contains(address) }?.link }

    /// A packet read from the link at `link` at time `now`.
    public mutating func receive(_ packet: [UInt8], fromLink link: Int, at now: Int64) {
        guard let header = PacketHeader(parsing: packet) else {
            links[link].uplink.statistics.drop(.malformed)
            return
        }
        guard let egress = route(header.destination) else {
            links[link].uplink.statistics.drop(.noRoute)
            return
        }
        guard events.count < inFlightPacketLimit, inFlightBytes + packet.count <= inFlightByteLimit else {
            links[link].uplink.statistics.drop(.inFlight)
            return
        }
        let flow = header.flow
        if let reason = links[link].stateDrop(flow) {
            links[link].uplink.statistics.drop(reason)
            return
        }
        switch links[link].uplink.admit(size: packet.count, at: now, random: &random) {
        case .drop: return
        case .deliver(let time):
            events.push(Event(stage: .enterDownlink, link: egress, flow: flow, packet: packet), at: time)
            inFlightBytes += packet.count
        }
    }

    /// The packets due at `now`, in order of their delivery times.
    public mutating func deliveries(dueAt now: Int64) -> [Delivery] {
        var due: [Delivery] = []
        while let (time, event) = events.popDue(at: now) {
            switch event.stage {
            case .deliver:
                inFlightBytes -= event.packet.count
                due.append(Delivery(link: event.link, packet: event.packet))
            case .enterDownlink:
                // The downlink sees the packet at the time it arrives, however late this call is.
                if let reason = links[event.link].stateDrop(event.flow) {
                    links[event.link].downlink.statistics.drop(reason)
                    inFlightBytes -= event.packet.count
                    continue
                }
                switch links[event.link].downlink.admit(size: event.packet.count, at: time, random: &random) {
                case .drop: inFlightBytes -= event.packet.count
                case .deliver(let delivery):
                    events.push(
                        Event(stage: .deliver, link: event.link, flow: event.flow, packet: event.packet), at: delivery)
                }
            }
        }
        return due
    }

    /// When the next event is due (the next call to `deliveries` that returns something, or
    /// moves a packet on); nil when nothing is in flight.
    public var nextEventTime: Int64? { events.earliest }

    /// Packets in flight (between reading and writing).
    public var inFlightPackets: Int { events.count }

    public mutating func configure(link: Int, _ direction: LinkDirectionSelector, _ impairments: LinkImpairments) {
        if direction != .downlink { links[link].uplink.configure(impairments) }
        if direction != .uplink { links[link].downlink.configure(impairments) }
    }

    public func impairments(link: Int, _ direction: LinkDirectionSelector) -> LinkImpairments {
        direction == .downlink ? links[link].downlink.impairments : links[link].uplink.impairments
    }

    public mutating func setState(link: Int, _ state: LinkState) { links[link].setState(state) }

    public func state(link: Int) -> LinkState { links[link].state }

    public func statistics(link: Int) -> LinkStatistics { links[link].statistics }

    /// A delivered packet of `size` bytes could not be written to the link at `link`: it counts
    /// as dropped there, not as passed.
    public mutating func recordUndeliverable(link: Int, size: Int) {
        links[link].downlink.statistics.passedPackets -= 1
        links[link].downlink.statistics.passedBytes -= UInt64(size)
        links[link].downlink.statistics.drop(.undeliverable)
    }
}
