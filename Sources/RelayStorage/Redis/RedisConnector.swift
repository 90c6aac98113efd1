import Foundation
import Glibc
import Synchronization

/// Keeps one connection to Redis for a single owner (the relay's event loop). The first connect
/// happens on the owner's thread, so a wrong URL fails at start; after a connection is lost, each
/// new attempt runs on a thread of its own, at most one per `retryMilliseconds`, so a Redis that
/// has gone silent (a partition, where a connect waits out its whole timeout) never stalls the
/// owner's splices. Meanwhile every call fails at once with the outage. Each connection comes with
/// the node's presence (`RedisPresence`), made with it, so a node that reconnected is present again.
final class RedisConnector {
    /// A connection with the digests of the scripts loaded on it, and the node's presence.
    struct Live {
        let connection: RedisConnection
        let scripts: [RedisRelayStore.Script: [UInt8]]
        /// Nil when Redis refused the subscription: leases then rest on heartbeats alone.
        let presence: RedisPresence?
        /// Why there is no presence, when Redis refused it.
        let presenceRefusal: String?
    }

    /// A finished background attempt, handed from its thread to the owner under the lock.
    private final class Outcome: @unchecked Sendable {
        let result: Result<Live, RelayStoreError>
        init(_ result: Result<Live, RelayStoreError>) { self.result = result }
    }

    /// Where the connecting thread leaves its outcome.
    private final class Mailbox: Sendable {
        let slot = Mutex<Outcome?>(nil)
    }

    let address: RedisAddress
    private let keyPrefix: String
    private let timeoutMilliseconds: Int
    private let retryMilliseconds: Int64
    private var current: Live?
    private var connecting = false
    private let finished = Mailbox()
    private var lastAttempt: Int64?
    /// Why Redis cannot be used, since the call that found it so; nil while it can.
    private(set) var outage: String?

    init(address: RedisAddress, keyPrefix: String, timeoutMilliseconds: Int, retryMilliseconds: Int64)
        throws(RelayStoreError)
    {
        self.address = address
        self.keyPrefix = keyPrefix
        self.timeoutMilliseconds = timeoutMilliseconds
        self.retryMilliseconds = retryMilliseconds
        current = try Self.connect(address, keyPrefix: keyPrefix, timeoutMilliseconds: timeoutMilliseconds).get()
    }

    /// The connection, or the outage thrown at once (starting a background attempt when one is due).
    func live() throws(RelayStoreError) -> Live {
        if let current, !current.connection.isBroken { return current }
        current = nil
        if connecting {
            guard let outcome = finished.slot.withLock({ $0.take() }) else { throw unavailable() }
            connecting = false
            switch outcome.result {
            case .success(let live):
                current = live
                outage = nil
                return live
            case .failure(let error):
                outage = error.message
            }
        }
        let now = Self.milliseconds()
        if let lastAttempt, now - lastAttempt < retryMilliseconds { throw unavailable() }
        lastAttempt = now
        connecting = true
        let (address, keyPrefix, timeout, finished) = (address, keyPrefix, timeoutMilliseconds, finished)
        let thread = Thread {
            let outcome = Outcome(Self.connect(address, keyPrefix: keyPrefix, timeoutMilliseconds: timeout))
            finished.slot.withLock { $0 = outcome }
        }
        thread.name = "redis connect"
        thread.start()
        throw unavailable()
    }

    /// The connection in use failed (or Redis said it cannot serve): the next call reconnects,
    /// no sooner than `retryMilliseconds` from now.
    func lost(_ message: String) {
        current = nil
        outage = message
        lastAttempt = Self.milliseconds()
    }

    private func unavailable() -> RelayStoreError {
        RelayStoreError(outage ?? "Redis at \(address): reconnecting", unavailable: true)
    }

    private static func connect(_ address: RedisAddress, keyPrefix: String, timeoutMilliseconds: Int) -> Result<
        Live, RelayStoreError
    > {
        do throws(RelayStoreError) {
            let connection = try RedisConnection(address: address, timeoutMilliseconds: timeoutMilliseconds)
            var scripts: [RedisRelayStore.Script: [UInt8]] = [:]
            for script in RedisRelayStore.Script.allCases {
                let reply = try connection.command(["SCRIPT", "LOAD", script.source].map { Array($0.utf8) })
                guard case .string(let digest) = reply else {
                    throw RelayStoreError("Redis at \(address) refused SCRIPT LOAD: \(reply.text)", unavailable: true)
                }
                scripts[script] = digest
            }
            var presence: RedisPresence?
            var refusal: String?
            do {
                presence = try RedisPresence(
                    address: address, timeoutMilliseconds: timeoutMilliseconds, keyPrefix: keyPrefix)
            } catch  where !error.isUnavailable {
                refusal = error.message
            }
            return .success(
                Live(connection: connection, scripts: scripts, presence: presence, presenceRefusal: refusal))
        } catch {
            return .failure(RelayStoreError(error.message, unavailable: true))
        }
    }

    static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
