import Synchronization

/// Requests from other threads to the connection thread, and the cancel flag.
/// Every request also signals the wake fd so a `poll` in progress returns.
final class ConnectionControl: Sendable {
    enum Request {
        case send([UInt8])
        case sendEOF
        case resize(cols: Int, rows: Int)
        case acknowledgeOutput
    }

    let wake: WakeSignal
    private let state = Mutex<(requests: [Request], cancelled: Bool)>(([], false))

    init(wake: WakeSignal) { self.wake = wake }

    func post(_ request: Request) {
        state.withLock { $0.requests.append(request) }
        wake.signal()
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
        wake.signal()
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func takeRequests() -> [Request] {
        state.withLock { state in
            defer { state.requests.removeAll(keepingCapacity: true) }
            return state.requests
        }
    }
}
