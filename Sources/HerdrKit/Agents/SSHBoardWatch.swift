import Foundation
import HerdrAgents
import SSHClient

/// A computer's board over the SSH road: the poll shell on one kept SSH connection, read every
/// `pollInterval` (docs/agents.md, "Over SSH"). Only the pinned host key is accepted and nobody
/// is asked anything: a host never connected to says so (`connect` once asks to trust its key).
@MainActor
final class SSHBoardWatch: ComputerBoardWatch {
    let profile: HostProfile
    private(set) var state: ComputerBoardState = .connecting
    var onChange: (@MainActor (ComputerBoardState) -> Void)?
    private let store: HostStore
    private let options: BoardWatchOptions
    private var task: Task<Void, Never>?
    private var poller: SSHHerdrPoller?
    private var tracker = AgentSinceTracker()

    init(profile: HostProfile, store: HostStore, options: BoardWatchOptions) {
        self.profile = profile
        self.store = store
        self.options = options
    }

    func start() {
        guard task == nil else { return }
        task = Task { [weak self] in await self?.run() }
    }

    func stop() {
        onChange = nil
        task?.cancel()
        task = nil
        poller?.close()
        poller = nil
    }

    private func set(_ state: ComputerBoardState) {
        self.state = state
        onChange?(state)
    }

    private func run() async {
        var failures = 0
        while !Task.isCancelled {
            let problem: ComputerProblem
            do throws(ComputerProblem) {
                try await follow()
                return
            } catch {
                problem = error
            }
            poller?.close()
            poller = nil
            guard !Task.isCancelled else { return }
            guard !options.once, !problem.isPermanent else { return set(.lost(problem, retrying: false)) }
            failures += 1
            set(.lost(problem, retrying: true))
            guard (try? await Task.sleep(for: .seconds(options.retryDelay(failures)))) != nil else { return }
        }
    }

    /// One connection: its boards until it fails (or, reading once, the first one).
    private func follow() async throws(ComputerProblem) {
        let poller = try SSHHerdrPoller(login: try login(), pin: try pin())
        self.poller = poller
        try await poller.start(timeout: options.session.connectTimeout.seconds + options.requestTimeout)
        while !Task.isCancelled {
            let replies = try await SSHBoard.read(poller, timeout: options.requestTimeout)
            guard !Task.isCancelled else { return }
            let board = tracker.stamp(SSHBoard.board(replies), now: Int64(Date().timeIntervalSince1970))
            set(.live(board, road: "ssh"))
            if options.once {
                poller.close()
                return
            }
            guard (try? await Task.sleep(for: .seconds(options.pollInterval))) != nil else { return }
        }
    }

    private func login() throws(ComputerProblem) -> SSHLogin {
        guard profile.platform == .unix else {
            throw ComputerProblem(
                .unsupported, "agents are read over SSH with a POSIX shell, which a Windows host does not have")
        }
        let key: DeviceKeyPair
        do {
            key = try DeviceKey.load(in: store.directory)
        } catch {
            throw ComputerProblem(.failed, "the device key is unavailable: \(error)")
        }
        return SSHLogin(
            profile: profile, deviceKey: key.privateKey, password: store.password(for: profile.id),
            options: options.session)
    }

    private func pin() throws(ComputerProblem) -> SSHPublicKey {
        let hostname = CanonicalHost.hostname(profile.hostname)
        let endpoint = CanonicalHost.pinKey(hostname: hostname, port: profile.port)
        let pin: SSHPublicKey?
        do {
            pin = try HostKeyPins(directory: store.directory).pinnedKey(hostname: hostname, port: profile.port)
        } catch {
            throw ComputerProblem(.failed, "cannot read pinned host keys: \(error)")
        }
        guard let pin else {
            throw ComputerProblem(
                .notPinned,
                "no host key is pinned for \(endpoint) yet: run herdr-remote connect \(profile.name) once to check and trust it"
            )
        }
        return pin
    }
}
