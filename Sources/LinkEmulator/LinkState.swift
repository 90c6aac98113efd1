/// Whether a link carries packets.
public enum LinkState: String, Sendable, CaseIterable {
    /// Packets pass, with the link's impairments.
    case up
    /// Every packet is dropped silently; the interface stays up (a dead access point, a black hole).
    case blackhole
    /// The flows seen on the link before the cut are dropped silently from now on, while new
    /// flows pass: what a phone sees when its old path dies but a new connection works.
    case cut
}

/// The flows a link has carried, the most recent `capacity` of them, and the ones a cut holds.
struct FlowMemory {
    let capacity: Int
    private var seen: Set<FlowKey> = []
    private var order: [FlowKey] = []
    private var orderHead = 0
    private(set) var cutFlows: Set<FlowKey> = []

    init(capacity: Int) { self.capacity = capacity }

    /// Notes that `flow` crossed the link; the oldest flow is forgotten past `capacity`.
    mutating func record(_ flow: FlowKey) {
        guard seen.insert(flow).inserted else { return }
        order.append(flow)
        if seen.count > capacity {
            seen.remove(order[orderHead])
            orderHead += 1
            if orderHead * 2 > order.count {
                order.removeFirst(orderHead)
                orderHead = 0
            }
        }
    }

    /// Cuts every flow seen so far.
    mutating func cut() { cutFlows = seen }

    mutating func clearCut() { cutFlows = [] }

    func isCut(_ flow: FlowKey) -> Bool { cutFlows.contains(flow) }
}

/// A link of the emulator: one namespace's interface, the addresses it owns, its state and the
/// impairments of both directions.
struct EmulatedLink {
    let name: String
    let prefixes: [IPPrefix]
    private(set) var state = LinkState.up
    var uplink = LinkDirection()
    var downlink = LinkDirection()
    private var flows: FlowMemory

    init(name: String, prefixes: [IPPrefix], flowCapacity: Int) {
        self.name = name
        self.prefixes = prefixes
        flows = FlowMemory(capacity: flowCapacity)
    }

    mutating func setState(_ new: LinkState) {
        switch new {
        case .up, .blackhole: flows.clearCut()
        case .cut: flows.cut()
        }
        state = new
    }

    /// The drop the link's state makes of a packet of `flow`, if any (the flow is remembered either way).
    mutating func stateDrop(_ flow: FlowKey) -> DropReason? {
        flows.record(flow)
        switch state {
        case .up: return nil
        case .blackhole: return .blackhole
        case .cut: return flows.isCut(flow) ? .cut : nil
        }
    }

    var statistics: LinkStatistics {
        var result = LinkStatistics()
        result.uplink = uplink.statistics
        result.downlink = downlink.statistics
        return result
    }
}
