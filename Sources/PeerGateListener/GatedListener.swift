import CSystem
import Dispatch
import Foundation
import Glibc
import PeerGate
import Synchronization

/// A TCP listener for this project's servers that decides on every connection before reading a
/// byte of it.
///
/// Accepting runs on a thread of its own that waits in `poll` (never on Swift's cooperative
/// pool). For each accepted socket, on that thread: `getpeername` gives the peer's numeric text;
/// when the rules refuse interfaces, `getsockname` and `getifaddrs` give the interface holding
/// the local address; `PeerGateRules.decide` judges; the status document records the answer.
/// A refused socket gets `SO_LINGER` {on, 0} and is closed at once: the kernel discards anything
/// the peer sent unread and answers with a reset, and no TIME_WAIT is kept for strangers. An
/// admitted socket goes to `onAdmitted` as a `GatedConnection`.
///
/// `onAdmitted` runs on the accept thread: hand the connection to a thread or loop of your own
/// and return, or accepting stalls.
public final class GatedListener: Sendable {
    public struct Configuration: Sendable {
        /// Numeric address to bind: "127.0.0.1", "0.0.0.0", "::1", or "::" (dual stack: IPv4
        /// peers arrive as `::ffff:a.b.c.d` and are judged as IPv4).
        public var bindAddress: String
        /// 0 picks a free port (read it back from `port`).
        public var port: UInt16
        public var rules: PeerGateRules
        public var backlog: Int32 = 128
        /// The accept thread's name.
        public var threadName = "peer gate"
        /// TEST ONLY: called with a refused socket after the decision and before its close, on the
        /// accept thread. Never set it in a program.
        public var testingOnlyBeforeRefusedClose: (@Sendable (Int32) -> Void)?

        public init(bindAddress: String, port: UInt16 = 0, rules: PeerGateRules) {
            self.bindAddress = bindAddress
            self.port = port
            self.rules = rules
        }
    }

    /// The pause after poll or accept fails for lack of descriptors or memory (or on a broken
    /// listening socket) before trying again, so the thread never spins.
    static let acceptBackoff: Int32 = 100  // milliseconds

    /// The bound port (the kernel's pick when the configuration said 0).
    public let port: UInt16
    public let bindAddress: String
    private let core: Core

    /// Binds (with SO_REUSEADDR, so a restarted server takes its port back at once), listens,
    /// and starts the accept thread.
    public init(
        _ configuration: Configuration, onAdmitted: @escaping @Sendable (GatedConnection) -> Void
    ) throws(ListenerError) {
        let socket = try ListeningSocket(
            bindAddress: configuration.bindAddress, port: configuration.port, backlog: configuration.backlog)
        let wake = csystem_eventfd_nonblocking()
        guard wake >= 0 else { throw ListenerError.posix(.socket, "eventfd") }
        self.port = socket.port
        self.bindAddress = configuration.bindAddress
        self.core = Core(configuration: configuration, wakeFD: wake, onAdmitted: onAdmitted)
        let core = core
        let thread = Thread { core.run(socket) }
        thread.name = "\(configuration.threadName) \(configuration.bindAddress) port \(socket.port)"
        thread.start()
    }

    deinit { close() }

    /// The status document now.
    public var status: PeerGateStatus { core.status.withLock { $0 } }

    /// Stops accepting and closes the listening socket; on return (unless called from the accept
    /// thread itself, e.g. inside `onAdmitted`) the port is free. It waits only for the decision
    /// in progress, if any. Admitted connections stay open. Idempotent; deinit calls it.
    public func close() { core.stop() }

    final class Core: Sendable {
        let status: Mutex<PeerGateStatus>
        let rules: PeerGateRules
        let wakeFD: Int32
        let onAdmitted: @Sendable (GatedConnection) -> Void
        let beforeRefusedClose: (@Sendable (Int32) -> Void)?
        private let stopping = Atomic<Bool>(false)
        private let acceptThread = Mutex<pthread_t?>(nil)
        private let finished = DispatchSemaphore(value: 0)

        init(configuration: Configuration, wakeFD: Int32, onAdmitted: @escaping @Sendable (GatedConnection) -> Void) {
            self.status = Mutex(PeerGateStatus(rules: configuration.rules))
            self.rules = configuration.rules
            self.wakeFD = wakeFD
            self.onAdmitted = onAdmitted
            self.beforeRefusedClose = configuration.testingOnlyBeforeRefusedClose
        }

        deinit { Glibc.close(wakeFD) }

        func stop() {
            guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else {
                waitForExit()
                return
            }
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
            waitForExit()
        }

        /// Waits for the accept thread to end, passing the signal on to any other waiter.
        private func waitForExit() {
            let onAcceptThread = acceptThread.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
            guard !onAcceptThread else { return }
            finished.wait()
            finished.signal()
        }

        func run(_ socket: ListeningSocket) {
            acceptThread.withLock { $0 = pthread_self() }
            defer {
                socket.close()
                finished.signal()
            }
            var backoff: Int32 = -1
            while !stopping.load(ordering: .sequentiallyConsistent) {
                var fds = [
                    pollfd(fd: socket.fd, events: backoff < 0 ? Int16(POLLIN) : 0, revents: 0),
                    pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                ]
                let rc = poll(&fds, 2, backoff)
                backoff = -1
                if rc < 0 && errno != EINTR { backoff = GatedListener.acceptBackoff }
                if stopping.load(ordering: .sequentiallyConsistent) { break }
                if fds[0].revents != 0 { backoff = acceptAll(socket.fd) }
            }
        }

        /// Accepts until the queue is empty; returns a backoff (ms) if accept ran out of resources.
        private func acceptAll(_ listeningFD: Int32) -> Int32 {
            while !stopping.load(ordering: .sequentiallyConsistent) {
                let fd = csystem_accept_cloexec(listeningFD)
                if fd >= 0 {
                    gate(fd)
                    continue
                }
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EAGAIN: return -1  // drained
                // Out of descriptors or memory, or a broken listening socket: pause, do not spin.
                default: return GatedListener.acceptBackoff
                }
            }
            return -1
        }

        /// The gate itself: decide, record, then refuse (close) or hand over. Reads nothing.
        private func gate(_ fd: Int32) {
            // A peer that is already gone (reset before we got here) was never judged: close quietly.
            guard let peer = SocketAddress.peer(of: fd)?.numericHost else {
                _ = Glibc.close(fd)
                return
            }
            var interface: String?
            var localText = ""
            if rules.needsInterface, let local = SocketAddress.local(of: fd), let localIP = local.ip {
                localText = local.numericHost ?? localIP.description
                interface = InterfaceAddresses.current()?.interface(holding: localIP, scopeID: local.scopeID)
            }
            let decision = rules.decide(peer: peer, localInterface: interface, localAddress: localText)
            status.withLock { $0.record(decision, interface: interface, at: Date()) }
            guard decision.isAdmitted else {
                var abortive = linger(l_onoff: 1, l_linger: 0)
                _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &abortive, socklen_t(MemoryLayout<linger>.size))
                beforeRefusedClose?(fd)
                _ = Glibc.close(fd)
                return
            }
            onAdmitted(
                GatedConnection(fd: fd, decision: decision, localInterface: interface) { [self] in
                    status.withLock { $0 }
                })
        }
    }
}

/// The listening socket: non-blocking, close-on-exec, SO_REUSEADDR; closed by `close()` or deinit.
final class ListeningSocket: Sendable {
    let fd: Int32
    let port: UInt16
    private let open = Atomic<Bool>(true)

    init(bindAddress: String, port requestedPort: UInt16, backlog: Int32) throws(ListenerError) {
        guard let ip = IPAddress(numeric: bindAddress) else {
            throw ListenerError(
                .address, "\(PeerDecision.displayText(bindAddress)) is not a numeric IP address to bind")
        }
        let family = ip.family == .ipv4 ? AF_INET : AF_INET6
        let fd = socket(
            family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ListenerError.posix(.socket, "socket()") }
        var owned: Int32? = fd
        defer { if let owned { Glibc.close(owned) } }
        var one: Int32 = 1
        var zero: Int32 = 0
        let intSize = socklen_t(MemoryLayout<Int32>.size)
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, intSize) == 0 else {
            throw ListenerError.posix(.socket, "setsockopt(SO_REUSEADDR)")
        }
        if family == AF_INET6 && setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, intSize) != 0 {
            throw ListenerError.posix(.socket, "setsockopt(IPV6_V6ONLY)")
        }
        let address = SocketAddress(ip: ip, port: requestedPort)
        let endpoint = ip.family == .ipv4 ? "\(ip):\(requestedPort)" : "[\(ip)]:\(requestedPort)"
        guard address.withSockaddr({ bind(fd, $0, $1) }) == 0 else {
            throw ListenerError.posix(.bind, "bind \(endpoint)")
        }
        guard listen(fd, backlog) == 0 else { throw ListenerError.posix(.listen, "listen on \(endpoint)") }
        guard let bound = SocketAddress.local(of: fd) else { throw ListenerError.posix(.listen, "getsockname") }
        self.port = bound.port
        self.fd = fd
        owned = nil
    }

    deinit { close() }

    func close() {
        if open.exchange(false, ordering: .sequentiallyConsistent) { _ = Glibc.close(fd) }
    }
}
