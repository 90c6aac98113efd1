import Dispatch
import Foundation
import Glibc
import PeerGate
import PeerGateListener
import RelayStorage
import Synchronization
import TLS

/// A running relay: the peer-gated listener (its own accept thread) and the event loop (its own
/// thread) that owns the core and every socket.
public final class RelayServer: Sendable {
    public struct Options: Sendable {
        /// Numeric address to bind ("127.0.0.1", "::", …).
        public var bindAddress: String
        /// 0 picks a free port.
        public var port: UInt16
        /// TLS for every connection; nil serves plain WebSocket (loopback behind a proxy, tests).
        public var tls: TLSContext?
        /// Where per-address limits take client addresses from: the TCP peer, or the header a
        /// proxy in front sets, so they count the real clients.
        public var clientAddress = ClientAddressSource.peer
        /// Who may connect at all: everyone by default (a public relay).
        public var rules = RelayServer.everyone

        public init(bindAddress: String, port: UInt16 = 0, tls: TLSContext? = nil) {
            self.bindAddress = bindAddress
            self.port = port
            self.tls = tls
        }
    }

    /// The peer rules of a public relay: every well-formed address.
    public static let everyone: PeerGateRules = {
        guard let policy = try? PeerPolicy.allowList(parsing: ["0.0.0.0/0", "::/0"]) else {
            preconditionFailure("the allow-everyone list is well-formed")
        }
        return PeerGateRules(policy: policy)
    }()

    /// The port clients connect to.
    public let port: UInt16
    private let listener: GatedListener
    private let inbox: RelayInbox
    private let state: LoopState

    final class LoopState: Sendable {
        let stopping = RelayStopFlag()
        let finished = DispatchSemaphore(value: 0)
    }

    /// Starts serving. `makeCore` runs on the loop thread (the core and its store belong to it);
    /// if it throws, the error is thrown here and nothing keeps running.
    public init(
        options: Options, makeCore: @escaping @Sendable () throws -> RelayCore
    ) throws {
        signal(SIGPIPE, SIG_IGN)  // a peer resetting mid-write must not kill the relay
        let inbox = try RelayInbox()
        let state = LoopState()
        let started = DispatchSemaphore(value: 0)
        let startError = Mutex<(any Error)?>(nil)
        let status = Mutex<(@Sendable () -> PeerGateStatus)?>(nil)
        let tls = options.tls
        let clientAddress = options.clientAddress
        let thread = Thread {
            let loop: RelayEventLoop
            do {
                let core = try makeCore()
                let settings = RelayEventLoop.Settings(
                    tls: tls, clientAddress: clientAddress,
                    status: { status.withLock { $0 }?() ?? PeerGateStatus(rules: RelayServer.everyone) })
                loop = try RelayEventLoop(core: core, settings: settings, inbox: inbox, stopping: state.stopping)
            } catch {
                startError.withLock { $0 = error }
                started.signal()
                state.finished.signal()
                return
            }
            started.signal()
            loop.run()
            state.finished.signal()
        }
        thread.name = "relay loop"
        thread.start()
        started.wait()
        if let error = startError.withLock({ $0 }) { throw error }
        var listenerConfiguration = GatedListener.Configuration(
            bindAddress: options.bindAddress, port: options.port, rules: options.rules)
        listenerConfiguration.threadName = "relay accept"
        listenerConfiguration.backlog = 4096
        let listener: GatedListener
        do {
            listener = try GatedListener(listenerConfiguration) { connection in
                let fd = connection.takeDescriptor()
                guard fd >= 0 else { return }
                inbox.post(
                    .init(
                        fd: fd, peer: connection.decision.peer,
                        peerIsLoopback: connection.decision.classification.kind == .loopback))
            }
        } catch {
            _ = state.stopping.set()
            inbox.wake()
            state.finished.wait()
            throw error
        }
        status.withLock { [listener] in $0 = { listener.status } }
        self.listener = listener
        self.inbox = inbox
        self.state = state
        self.port = listener.port
    }

    deinit { shutdown() }

    /// Stops accepting, closes every WebSocket with 1001 `server shutting down`, flushes for at
    /// most a second, and returns when the loop thread has ended. Idempotent.
    public func shutdown() {
        listener.close()
        guard state.stopping.set() else { return }
        inbox.wake()
        state.finished.wait()
    }
}
