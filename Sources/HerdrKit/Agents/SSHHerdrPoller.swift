import Dispatch
import Foundation
import HerdrAgents
import HerdrCrypto
import SSHClient
import Synchronization

/// One SSH connection to a host running the poll shell (`HerdrPoll`), asked one request at a time:
/// `request` sends the line and returns herdr's reply. The connection runs on its own thread
/// (`SSHConnection`); it stays up between requests, so `watch` polls over one connection.
final class SSHHerdrPoller: Sendable {
    private typealias Waiter = CheckedContinuation<Result<HerdrPoll.Reply, ComputerProblem>, Never>

    private struct State {
        var reader = HerdrPollReader()
        var waiting: (id: String, waiter: Waiter)?
        /// Why the connection ended, once it did: every later request fails with it.
        var ended: ComputerProblem?
    }

    private let connection: SSHConnection
    private let endpoint: String
    private let state = Mutex(State())

    /// A connection to `login`'s host that requires the pinned key `pin` (the poll shell needs a
    /// unix host). Nothing is sent before `start`.
    init(login: SSHLogin, pin: SSHPublicKey) throws(ComputerProblem) {
        endpoint = CanonicalHost.pinKey(hostname: login.hostname, port: login.port)
        do {
            connection = try SSHConnection(
                configuration: login.configuration(
                    policy: .accept([pin.blob]), preferred: [pin.algorithm], pty: nil, command: HerdrPoll.command))
        } catch {
            throw ComputerProblem(.failed, error.message)
        }
    }

    /// Connects, logs in and starts the loop; returns once it answered its first request.
    func start(timeout: Double) async throws(ComputerProblem) {
        let endpoint = endpoint
        connection.start { [self] event in
            switch event {
            case .output(let stdout, _):
                received(stdout)
                connection.acknowledgeOutput()
            case .finished(let termination, _):
                ended(Self.problem(termination, endpoint: endpoint))
            default:
                break
            }
        }
        _ = try await request(.hello, timeout: timeout)
    }

    /// Sends `request` and waits for its reply, at most `timeout` seconds (the connection is then
    /// given up: a herdr that never answers would hold every later request).
    func request(_ request: HerdrPoll.Request, timeout: Double) async throws(ComputerProblem) -> HerdrPoll.Reply {
        let id = Hex.encode(SecureRandom.bytes(8))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                let cancelled = Task.isCancelled
                let refused: ComputerProblem? = state.withLock { state in
                    if let ended = state.ended { return ended }
                    if cancelled { return ComputerProblem(.timedOut, "\(endpoint): stopped waiting for herdr") }
                    guard state.waiting == nil else {
                        return ComputerProblem(.failed, "a herdr request while another was under way")
                    }
                    state.waiting = (id, waiter)
                    return nil
                }
                if let refused { return waiter.resume(returning: .failure(refused)) }
                connection.send(Array(request.line(id: id).utf8))
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                    let late = Int(timeout.rounded())
                    fail(id: id, ComputerProblem(.timedOut, "\(endpoint): herdr did not answer within \(late) s"))
                }
            }
        } onCancel: {
            fail(id: id, ComputerProblem(.timedOut, "\(endpoint): stopped waiting for herdr"))
        }
        return try result.get()
    }

    /// Ends the connection (its thread ends on its own).
    func close() {
        connection.cancel()
    }

    private func received(_ bytes: [UInt8]) {
        let (replies, broken): ([HerdrPoll.Reply], HerdrReplyError?) = state.withLock { state in
            do throws(HerdrReplyError) {
                try state.reader.append(bytes)
            } catch {
                return ([], error)
            }
            var replies: [HerdrPoll.Reply] = []
            while let reply = state.reader.next() { replies.append(reply) }
            return (replies, nil)
        }
        if let broken {
            ended(ComputerProblem(.protocolViolation, "\(endpoint): \(broken)"))
            connection.cancel()
            return
        }
        for reply in replies {
            let waiter: Waiter? = state.withLock { state in
                guard let waiting = state.waiting, waiting.id == reply.id else { return nil }
                state.waiting = nil
                return waiting.waiter
            }
            waiter?.resume(returning: .success(reply))
        }
    }

    private func fail(id: String, _ problem: ComputerProblem) {
        let waiter: Waiter? = state.withLock { state in
            guard let waiting = state.waiting, waiting.id == id else { return nil }
            state.waiting = nil
            state.ended = state.ended ?? problem
            return waiting.waiter
        }
        guard let waiter else { return }
        connection.cancel()
        waiter.resume(returning: .failure(problem))
    }

    private func ended(_ problem: ComputerProblem) {
        let waiter: Waiter? = state.withLock { state in
            state.ended = state.ended ?? problem
            defer { state.waiting = nil }
            return state.waiting?.waiter
        }
        waiter?.resume(returning: .failure(problem))
    }

    /// What an ended connection means for reading agents.
    static func problem(_ termination: SSHTermination, endpoint: String) -> ComputerProblem {
        switch termination {
        case .cancelled:
            return ComputerProblem(.timedOut, "\(endpoint): the connection was stopped")
        case .hostKeyRejected(let presented):
            return ComputerProblem(
                .hostKeyChanged,
                "\(endpoint): the host key changed (now \(presented.fingerprintSHA256)); nothing was sent. See herdr-remote connect"
            )
        case .probed:
            return ComputerProblem(.failed, "\(endpoint): the connection stopped after the key exchange")
        case .exited(let status, let signal):
            let how = signal.map { "was killed by SIG\($0)" } ?? "exited with status \(status ?? 0)"
            return ComputerProblem(.failed, "\(endpoint): the shell reading herdr \(how)")
        case .failed(let failure):
            let kind: ComputerProblem.Kind =
                switch failure.kind {
                case .unreachable, .peerRefused, .connectionLost, .handshake: .unreachable
                case .timeout: .timedOut
                case .authentication: .authentication
                case .channel, .internalError: .failed
                }
            return ComputerProblem(kind, failure.message)
        }
    }
}
