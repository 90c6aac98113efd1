import Foundation
import HomeRoad
import Noise
import PeerGate
import Plumbing
import RelayClient
import SessionProtocol
import Synchronization

/// Every road from a paired device to its computer, tried together (happy eyeballs): the home
/// addresses first, the relay after a short head start, the first channel up wins, home preferred
/// (a relay channel up first waits a moment for a home attempt still under way). The pinned
/// computer key proves the computer on every road: another machine at the same private address
/// fails the handshake harmlessly while the relay carries on.
public struct DeviceRoads: Sendable {
    /// Which roads a connection may take.
    public enum Choice: String, Sendable, CaseIterable {
        case any, home, relay
    }

    /// Who this device is to the computer, on every road.
    public var greeting: Greeting
    /// The relay road; nil for a computer paired on the home network only.
    public var relay: RelayRoad?
    /// Where the computer's home door listens, as it last said.
    public var home: [HomeAddress]
    public var choice: Choice = .any
    /// Seconds the home addresses go first before the relay is tried too.
    public var homeHeadStart: Double = 0.25
    /// Seconds for a home address's TCP connect (a home network answers in milliseconds).
    public var homeConnectTimeout: Double = 3
    public var homeOptions = HomeConnection.Options()

    /// What the handshake and the status need, whichever road carries them.
    public struct Greeting: Sendable {
        public var pairingID: String
        public var computerKey: [UInt8]
        public var status: CompanionMessage.DeviceStatus
        public var staticKey: KeyPair
        /// Seconds for the handshake and the status exchange.
        public var timeout: Double = 15

        public init(pairingID: String, computerKey: [UInt8], status: CompanionMessage.DeviceStatus, staticKey: KeyPair)
        {
            self.pairingID = pairingID
            self.computerKey = computerKey
            self.status = status
            self.staticKey = staticKey
        }
    }

    public init(greeting: Greeting, relay: RelayRoad?, home: [HomeAddress], choice: Choice = .any) {
        self.greeting = greeting
        self.relay = relay
        self.home = home
        self.choice = choice
    }

    /// One attempt over the roads `choice` allows; blocks the calling thread (not Swift's pool).
    /// `homeFirst` false starts the relay with the home addresses and takes whichever is up
    /// first: for the attempt right after the home road dropped, when a home attempt is unlikely
    /// to answer soon (the session's home probe moves it back once home answers again).
    public func connect(homeFirst: Bool = true, attempt: ConnectAttempt? = nil) throws(RoadFailure)
        -> RoadConnection
    {
        let homes = choice == .relay ? [] : home
        let relay = choice == .home ? nil : self.relay
        if choice == .relay && relay == nil {
            throw .unavailable("this computer was paired on the home network only: it has no relay road")
        }
        let useRelay = relay != nil
        if homes.isEmpty {
            guard let relay else {
                throw .unavailable("the computer has told this device no home address (pair again, or use the relay)")
            }
            return try relay.connect(attempt: attempt)
        }
        let race = Race(homePreference: homeFirst ? Race.homePreference : 0)
        for address in homes {
            race.start(home: true) { () throws(RoadFailure) in
                try connectHome(address, race, attempt: attempt)
            }
        }
        if useRelay {
            if homeFirst { race.waitForWinner(orAllFailed: homes.count, timeout: homeHeadStart) }
            if !race.isDecided, let relay {
                race.start(home: false) { () throws(RoadFailure) in
                    try relay.connect(attempt: attempt)
                }
            }
        }
        return try race.outcome(attempts: homes.count + (useRelay ? 1 : 0), relayTried: useRelay)
    }

    /// Why an established connection ended, as a failure: what it means for retrying.
    public func classify(_ end: FramePipeEnd, on road: NoiseRoad) -> RoadFailure {
        switch road {
        case .relay: relay?.classify(end) ?? .unavailable("the connection ended (\(end))")
        case .home(let address): .unavailable("the home connection to \(address) ended (\(end))")
        }
    }

    private func connectHome(_ address: HomeAddress, _ race: Race, attempt: ConnectAttempt?)
        throws(RoadFailure) -> RoadConnection
    {
        let pipe: HomeConnection
        do {
            pipe = try HomeConnection.connect(
                to: address, timeout: homeConnectTimeout, options: homeOptions,
                isCancelled: { race.isDecided || attempt?.isCancelled == true })
        } catch {
            throw .unavailable(error.message)
        }
        if let attempt, !attempt.holds(pipe) { throw .unavailable("the attempt was called off: the network changed") }
        do {
            let greeted = try greet(
                over: pipe, pairingID: greeting.pairingID, computerKey: greeting.computerKey, status: greeting.status,
                staticKey: greeting.staticKey, timeout: greeting.timeout,
                classify: { .unavailable("the home connection to \(address) ended (\($0))") })
            return .init(
                channel: greeted.channel, registeredNow: false, road: .home(address), served: greeted.served)
        } catch {
            pipe.close()
            throw error
        }
    }
}

/// The attempts of one `DeviceRoads.connect`, each on a thread of its own. A home channel wins
/// as soon as it is up; a relay channel up first waits `homePreference` seconds for a home
/// attempt still under way. Every channel that does not win is closed at once.
private final class Race: Sendable {
    /// Seconds a relay channel up first waits for a home attempt still under way, by default.
    static let homePreference = 0.25

    private let homePreference: Double

    init(homePreference: Double) { self.homePreference = homePreference }

    private struct State {
        var home: RoadConnection?
        var relay: RoadConnection?
        var decided = false
        var failures: [(home: Bool, failure: RoadFailure)] = []
        var homeRunning = 0
    }

    private let state = Mutex(State())
    private let changed = DispatchSemaphore(value: 0)

    /// A winner is chosen, or a home channel is up (nothing else can win then).
    var isDecided: Bool { state.withLock { $0.decided || $0.home != nil } }

    func start(
        home: Bool,
        _ attempt: @escaping @Sendable () throws(RoadFailure) -> RoadConnection
    ) {
        if home { state.withLock { $0.homeRunning += 1 } }
        let thread = Thread { [self] in
            let result = Result(catching: attempt)
            let loser: RoadConnection? = state.withLock { state in
                if home { state.homeRunning -= 1 }
                switch result {
                case .success(let established):
                    guard !state.decided else { return established }
                    if home {
                        guard state.home == nil else { return established }
                        state.home = established
                    } else {
                        state.relay = established
                    }
                    return nil
                case .failure(let failure):
                    state.failures.append((home, failure))
                    return nil
                }
            }
            loser?.channel.connection.close()
            changed.signal()
        }
        thread.name = "road attempt"
        thread.start()
    }

    /// Waits up to `timeout` seconds, less when a channel is up or `count` attempts failed.
    func waitForWinner(orAllFailed count: Int, timeout: Double) {
        let deadline = DispatchTime.now() + timeout
        while state.withLock({ $0.home == nil && $0.relay == nil && $0.failures.count < count }) {
            if changed.wait(timeout: deadline) == .timedOut { return }
        }
    }

    /// The winner, or once all `attempts` failed the failure to report: the relay's (it knows
    /// about pairings and quotas) when it was tried, else the home addresses'.
    func outcome(attempts: Int, relayTried: Bool) throws(RoadFailure)
        -> RoadConnection
    {
        var relayUpAt: DispatchTime?
        while true {
            enum Step {
                case won(RoadConnection, loser: RoadConnection?)
                case failed([(home: Bool, failure: RoadFailure)])
                case wait
            }
            let step: Step = state.withLock { state in
                if let home = state.home {
                    state.decided = true
                    defer { state.relay = nil }
                    return .won(home, loser: state.relay)
                }
                if let relay = state.relay {
                    let waited = relayUpAt.map { DispatchTime.now() >= $0 + homePreference } ?? false
                    if state.homeRunning == 0 || waited {
                        state.decided = true
                        return .won(relay, loser: nil)
                    }
                    return .wait
                }
                return state.failures.count >= attempts ? .failed(state.failures) : .wait
            }
            switch step {
            case .won(let winner, let loser):
                loser?.channel.connection.close()
                return winner
            case .failed(let failures):
                if relayTried, let relay = failures.first(where: { !$0.home }) { throw relay.failure }
                throw .unavailable(
                    "no home address answered (\(failures.map(\.failure.description).joined(separator: "; ")))")
            case .wait:
                if relayUpAt == nil, state.withLock({ $0.relay != nil }) { relayUpAt = .now() }
                if let relayUpAt {
                    _ = changed.wait(timeout: relayUpAt + homePreference)
                } else {
                    changed.wait()
                }
            }
        }
    }
}
