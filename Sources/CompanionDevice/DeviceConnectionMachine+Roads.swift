import NetworkPath
import NoiseRoads
import RelayClient

/// Connecting, reconnecting and moving (docs/companion.md, "Resume", "Liveness"): the attempt
/// that connects, the retry after it failed or after a drop, the race for a fresh connection
/// when the path goes quiet or the network moves, and the home probe while on the relay.
extension DeviceConnectionMachine {
    /// Where reconnecting stands between connections.
    struct Retry {
        /// Attempts since the session was last up (reset after a drop of a session that ran).
        var attempt = 0
        /// Retry-soon waits in a row (a relay cluster moving the room).
        var reshards = 0
        /// Quick retries used while the computer was between two parks.
        var quickRetries = 0
        var lastReason = ""
        /// How the next attempt goes.
        var next = RetryAfterDrop.backingOff
        /// The attempt under way is a free one: news of the network cut a wait short, and if it
        /// fails the wait goes on until then, the retry budget untouched.
        var freeUntil: Double?
    }

    /// A race for a fresh connection from the connection in use.
    struct Race {
        var id: AttemptID
        var from: AttemptID
        var cause: Cause

        enum Cause {
            case quiet(silentFor: Double)
            case networkChanged(String)
        }
    }

    /// The home probe of a connection over the relay.
    struct Probe {
        var from: AttemptID
        var nextAt: Double
        var running: AttemptID?
    }

    // MARK: - Attempts

    /// Starts the attempt that connects, as `retry.next` says.
    mutating func connect(now: Double) {
        let id = newAttemptID()
        phase = .connecting(id)
        actions.append(.connect(id, RoadAttempt(homeFirst: retry.next.homeFirst, home: home, homeOnly: false)))
    }

    mutating func attemptEnded(
        _ id: AttemptID, _ result: Result<Arrival, RoadFailure>, now: Double
    ) {
        if phase == .connecting(id) {
            switch result {
            case .success(let arrival): adopt(id, arrival, moved: nil, now: now)
            case .failure(let failure): connectFailed(failure, now: now)
            }
        } else if let race, race.id == id {
            raceEnded(race, result, now: now)
        } else if let probe, probe.running == id {
            probeEnded(probe, result, now: now)
        } else if case .success = result {
            actions.append(.close(id))  // an attempt overtaken by another
        }
    }

    /// The connection `id` is the one in use from now on: the session attaches or resumes on it.
    mutating func adopt(_ id: AttemptID, _ arrival: Arrival, moved reason: MoveReason?, now: Double) {
        guard !session.isScreen || arrival.servesScreenSessions else {
            // An older herdr-host would end the channel on the first screen message.
            actions.append(.close(id))
            return finish(
                .failed(
                    Failure(
                        .sessionRefused,
                        "the computer's herdr-host serves no screen sessions: update it there, or connect without --screen"
                    )))
        }
        actions.append(.adopt(id))
        if let reason { emit(.moved(to: arrival.road, because: reason)) }
        retry.reshards = 0
        retry.next = .backingOff
        retry.quickRetries = 0
        retry.freeUntil = nil
        if arrival.registeredNow { emit(.registered) }
        emit(.connected(via: arrival.road))
        latestLink = id
        connectedOnce = true
        phase = .up
        probe = nil
        if !arrival.road.isHome, settings.choice == .any, let interval = settings.homeProbeInterval {
            probe = Probe(from: id, nextAt: now + interval)
        }
        var link = Link(id: id, road: arrival.road, now: now)
        if watching, attach == nil, let wait = settings.boardWait { link.boardDeadline = now + wait.seconds }
        // The board is asked for on each connection: none starts watching.
        link.watchChange = watching ? true : nil
        self.link = link
        sendAttach(now: now)
        flush(now: now)
    }

    private mutating func connectFailed(_ failure: RoadFailure, now: Double) {
        if let until = retry.freeUntil.take() {
            // Only what no retry can mend ends it; anything else waits on as before the news.
            if let end = stop(after: failure, attempt: 1) { return finish(end) }
            retry.lastReason = failure.description
            if until <= now { return connect(now: now) }
            phase = .waiting(until: until)
            return
        }
        if case .resharding = failure, waitSoon(reason: failure.description, now: now) { return }
        if let end = stop(after: failure, attempt: retry.attempt) { return finish(end) }
        retry.lastReason = failure.description
        if case .computerOffline = failure, !wasUp {
            wait(Self.offlineRetries[retry.attempt], now: now)
            retry.attempt += 1
            return
        }
        // An at-once retry can find the computer between two parks: the relay closed it when
        // this device's old socket went, and it is parking again.
        if case .computerOffline = failure, retry.next.atOnce, retry.quickRetries < Self.reparkRetries.count {
            wait(Self.reparkRetries[retry.quickRetries], now: now)
            retry.quickRetries += 1
            return
        }
        retry.next = .backingOff
        retry.attempt += 1
        backOff(reason: retry.lastReason, atOnce: false, now: now)
    }

    /// The connection in use ended (`failure`: what its end means for retrying).
    mutating func dropped(_ failure: RoadFailure, now: Double) {
        guard let link else { return }
        self.link = nil
        let dropped = Dropped(road: link.road, connectedAt: link.connectedAt, closedBecause: link.closedBecause)
        // A race's new connection takes the old one's place at the relay, which closes the old
        // one (`displaced`): the race decides what comes next.
        if let race, race.from == link.id {
            phase = .awaitingRace(failure, dropped: dropped)
            return
        }
        retryAfterDrop(failure, dropped, now: now)
    }

    private mutating func retryAfterDrop(_ failure: RoadFailure, _ dropped: Dropped, now: Double) {
        var failure = failure
        if let why = dropped.closedBecause { failure = .unavailable(why) }
        if failure == .displaced, now - racedAt < 60 {
            failure = .unavailable("a new connection of this device took the old one's place at the relay")
        }
        if case .resharding = failure, waitSoon(reason: failure.description, now: now) { return }
        if let end = stop(after: failure, attempt: 1) { return finish(end) }
        retry.lastReason = failure.description
        if wasUp { retry.attempt = 0 }
        retry.attempt += 1
        retry.next = RetryAfterDrop.after(
            dropped.road, upFor: now - dropped.connectedAt, hasRelay: settings.hasRelay, choice: settings.choice)
        backOff(reason: retry.lastReason, atOnce: retry.next.atOnce, now: now)
    }

    /// The end a failure means, or nil to retry.
    private func stop(after failure: RoadFailure, attempt: Int) -> Termination? {
        switch failure {
        case .pairingGone: return .failed(Failure(.pairingGone, failure.description))
        case .quotaExceeded, .displaced, .refused: return .failed(Failure(.relayRefused, failure.description))
        case .unavailable(let why), .resharding(relay: let why):
            // Nothing ran yet and this was the first try: say so at once, as ssh does.
            if attempt == 0, !wasUp { return .failed(Failure(.unreachable, why)) }
            return nil
        case .computerOffline:
            // herdr-host parks again right after each device leaves: a connect just after another
            // one ended may find it between two parks, so the first try gets a few quick retries.
            if !wasUp, attempt >= Self.offlineRetries.count {
                return .failed(Failure(.unreachable, failure.description))
            }
            return nil
        }
    }

    /// A relay cluster moving the room: wait a fraction of a second (not a backoff step), up to
    /// RelayLink's number of reshards in a row; false once they are used up.
    private mutating func waitSoon(reason: String, now: Double) -> Bool {
        guard retry.reshards < RelayLink.soonRetries else { return false }
        retry.reshards += 1
        // A session under way says why the screen is still; a first connect just takes a moment.
        if wasUp { emit(.reconnecting(attempt: retry.reshards, reason: reason)) }
        wait(RelayBackoff.soonDelay(random: settings.random()), now: now)
        return true
    }

    /// Reconnect attempt `retry.attempt` after the policy's delay (at once when `atOnce`), or
    /// the end when the policy gives up.
    private mutating func backOff(reason: String, atOnce: Bool, now: Double) {
        let attempt = retry.attempt
        guard let delay = settings.retryDelay(attempt) else {
            // No attempt at all: the policy does not reconnect (`--no-reattach`).
            let message =
                attempt <= 1
                ? "the link dropped (\(retry.lastReason)); reconnecting is off"
                : "gave up reconnecting after \(attempt - 1) attempts; last: \(retry.lastReason)"
            return finish(.failed(Failure(.connectionLost, message)))
        }
        emit(.reconnecting(attempt: attempt, reason: reason))
        if atOnce { connect(now: now) } else { wait(delay, now: now) }
    }

    /// The next attempt after `seconds`.
    private mutating func wait(_ seconds: Double, now: Double) {
        phase = .waiting(until: now + seconds)
    }

    // MARK: - Racing and probing

    /// The connection in use went quiet, or the network moved from under it: a fresh connection
    /// over whatever road answers (home first unless home is the one in doubt), while the old one
    /// carries on until the new one takes the session over.
    mutating func startRace(_ cause: Race.Cause, now: Double) {
        // A race is a reconnect: not with reconnecting off (`--no-reattach`).
        guard settings.retryDelay(1) != nil, let link, race == nil else { return }
        let id = newAttemptID()
        race = Race(id: id, from: link.id, cause: cause)
        racedAt = now
        actions.append(.connect(id, RoadAttempt(homeFirst: !link.road.isHome, home: home, homeOnly: false)))
    }

    private mutating func raceEnded(
        _ race: Race, _ result: Result<Arrival, RoadFailure>, now: Double
    ) {
        self.race = nil
        switch result {
        case .success(let arrival):
            let reason: MoveReason =
                switch race.cause {
                case .quiet(let silentFor): .pathWentQuiet(seconds: silentFor + now - racedAt)
                case .networkChanged(let change): .networkChanged(change)
                }
            if let link, link.id == race.from {
                // At once, without the closing handshake: the old path is quiet or gone, and its
                // closing handshake would hold the resume on the new connection up to its limit.
                actions.append(.abandon(link.id))
                self.link = nil
                adopt(race.id, arrival, moved: reason, now: now)
            } else if case .awaitingRace = phase {
                adopt(race.id, arrival, moved: reason, now: now)
            } else {
                actions.append(.close(race.id))
            }
        case .failure:
            if case .awaitingRace(let failure, let dropped) = phase {
                retryAfterDrop(failure, dropped, now: now)
            } else if link?.id == race.from {
                link?.liveness.suspectAgain(after: now + Self.raceRetryDelay)
            }
        }
    }

    /// While the latest connection runs over the relay (or between it and the next), tries the
    /// home addresses every `homeProbeInterval`.
    mutating func probeIfDue(now: Double) {
        guard var probe, probe.running == nil, now >= probe.nextAt else { return }
        guard !home.isEmpty else {
            probe.nextAt = now + (settings.homeProbeInterval ?? 0)
            self.probe = probe
            return
        }
        let id = newAttemptID()
        probe.running = id
        self.probe = probe
        actions.append(.connect(id, RoadAttempt(homeFirst: true, home: home, homeOnly: true)))
    }

    private mutating func probeEnded(
        _ probe: Probe, _ result: Result<Arrival, RoadFailure>, now: Double
    ) {
        guard case .success(let arrival) = result, let id = probe.running else {
            self.probe?.running = nil
            self.probe?.nextAt = now + (settings.homeProbeInterval ?? 0)
            return
        }
        // Still on the relay: closing it hands over. Already dropped: the wait ends here.
        if let link { actions.append(.close(link.id)) }
        self.link = nil
        adopt(id, arrival, moved: .homeIsBack, now: now)
    }

    /// The kernel's news: when the connection in use lost its address or its route, race a fresh
    /// one at once; between connections, cut the wait short. An attempt under way that the news
    /// may have left on a path that is gone (`stale`) is called off and made again at once: a
    /// connect issued between a Wi-Fi's addresses going and its link going down leaves from ::1
    /// and would otherwise wait out its 10 s limit while the new network is already up.
    mutating func networkChanged(_ change: PathChange?, stale: Set<AttemptID>, now: Double) {
        if let race, stale.contains(race.id) {
            actions.append(.cancel(race.id))
            self.race = nil
            if case .awaitingRace(let failure, let dropped) = phase {
                return retryAfterDrop(failure, dropped, now: now)
            }
            // Still quiet, the path is suspected again at once.
            if link?.id == race.from { link?.liveness.suspectAgain(after: now) }
        }
        switch phase {
        case .waiting(let until):
            // A free attempt: if it fails, the wait goes on until `until`.
            retry.freeUntil = until
            connect(now: now)
        case .connecting(let id):
            guard stale.contains(id) else { return }
            actions.append(.cancel(id))
            connect(now: now)
        case .up:
            guard let change, let link else { return }
            startRace(.networkChanged(change.description), now: now)
            // A socket whose address or route is gone carries nothing more: drop it now, so that
            // if the race finds no way either, the retry says so and backs off, visibly.
            if change.oldPathIsDead {
                self.link?.closedBecause = change.description
                actions.append(.abandon(link.id))
                dropped(.unavailable(change.description), now: now)
            }
        case .idle, .awaitingRace, .finished: return
        }
    }
}
