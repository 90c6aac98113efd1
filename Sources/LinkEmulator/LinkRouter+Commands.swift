extension LinkRouter {
    /// Carries out a control command and returns its answer: `ok` with what it shows, or
    /// `error: …`. `quit` answers `ok`; stopping is the caller's part.
    public mutating func execute(_ command: LinkCommand) -> String {
        func index(_ name: String) -> Int? { linkIndex(named: name) }
        func unknown(_ name: String) -> String {
            "error: no link named \(name.prefix(64)) (links: \(linkNames.joined(separator: " ")))"
        }
        switch command {
        case .ping, .quit: return "ok"
        case .links: return "ok " + linkNames.joined(separator: " ")
        case .stats(let name):
            guard let link = index(name) else { return unknown(name) }
            return (["ok", name, "state=\(state(link: link).rawValue)"] + statistics(link: link).fields)
                .joined(separator: " ")
        case .show(let name):
            guard let link = index(name) else { return unknown(name) }
            return "ok \(name) state=\(state(link: link).rawValue) uplink "
                + Self.describe(impairments(link: link, .uplink)) + " downlink "
                + Self.describe(impairments(link: link, .downlink))
        case .setState(let name, let new):
            guard let link = index(name) else { return unknown(name) }
            setState(link: link, new)
            return "ok"
        case .clear(let name):
            guard let link = index(name) else { return unknown(name) }
            configure(link: link, .both, LinkImpairments())
            return "ok"
        case .configure(let name, let direction, let changes):
            guard let link = index(name) else { return unknown(name) }
            for selected in direction == .both ? [LinkDirectionSelector.uplink, .downlink] : [direction] {
                var new = impairments(link: link, selected)
                for change in changes { change.apply(to: &new) }
                configure(link: link, selected, new)
            }
            return "ok"
        }
    }

    /// `delay=… jitter=… …` as the command would set it.
    static func describe(_ impairments: LinkImpairments) -> String {
        func duration(_ value: Duration) -> String {
            let nanoseconds = value.nanoseconds
            return nanoseconds % 1_000_000 == 0 ? "\(nanoseconds / 1_000_000)ms" : "\(nanoseconds / 1000)us"
        }
        func percent(_ value: Double) -> String {
            let scaled = value * 100
            return scaled == scaled.rounded() ? "\(Int(scaled))%" : "\(scaled)%"
        }
        var fields = [
            "delay=\(duration(impairments.delay))", "jitter=\(duration(impairments.jitter))",
            "reorder=\(impairments.reorder ? "on" : "off")", "loss=\(percent(impairments.loss))",
        ]
        if let burst = impairments.burst {
            fields.append(
                "burst=\(percent(burst.enterBad)),\(percent(burst.leaveBad)),\(percent(burst.lossInBad)),\(percent(burst.lossInGood))"
            )
        } else {
            fields.append("burst=off")
        }
        fields.append(impairments.rate.map { "rate=\($0)bit" } ?? "rate=off")
        fields.append("queue=\(impairments.effectiveQueueBytes)")
        fields.append("bucket=\(impairments.bucketBytes)")
        return fields.joined(separator: " ")
    }
}
