import EndToEndChannel
import Foundation
import HerdrCrypto
import Noise
import Plumbing
import RelayClient
import RelayProtocol
import SessionProtocol

/// A paired device's way to its computer through the relay, after pairing (specs/002
/// "Reconnection"): a signed join as the phone, a fresh XK handshake with the pinned computer key,
/// the status with the room secret first (so a pairing that dropped half-way heals), the
/// computer's ack, and, while the room is not registered yet, the registration. What it returns
/// is a channel ready for the session protocol.
public struct RelayRoad: Sendable {
    /// What the device keeps about its computer.
    public struct Pairing: Sendable, Hashable {
        public var relay: RelayEndpoint
        public var computerKey: [UInt8]
        public var pairingID: String
        public var roomSecret: [UInt8]
        public var registered: Bool

        public init(
            relay: RelayEndpoint, computerKey: [UInt8], pairingID: String, roomSecret: [UInt8], registered: Bool
        ) {
            self.relay = relay
            self.computerKey = computerKey
            self.pairingID = pairingID
            self.roomSecret = roomSecret
            self.registered = registered
        }

        public var room: String { RoomName.derive(staticPublicKey: computerKey, pid: pairingID) }
    }

    public let pairing: Pairing
    public let deviceName: String
    public let staticKey: KeyPair
    public var options = RelayConnection.Options()
    /// Seconds for the handshake and the status exchange.
    public var timeout: Double = 15

    public init(pairing: Pairing, deviceName: String, staticKey: KeyPair) {
        self.pairing = pairing
        self.deviceName = deviceName
        self.staticKey = staticKey
    }

    /// One attempt. Blocks the calling thread (a thread of its own, not Swift's pool).
    public func connect(attempt: ConnectAttempt? = nil) throws(RoadFailure) -> RoadConnection {
        let key: RelayJoinKey
        do {
            key = try RelayJoinKey(roomSecret: pairing.roomSecret)
        } catch {
            throw .pairingGone("the kept room secret is unusable")
        }
        let connection: RelayConnection
        do {
            connection = try RelayConnection.connect(
                to: pairing.relay, room: pairing.room, role: .device, credential: .joinKey(key), options: options,
                started: { attempt?.holds($0) })
        } catch {
            if attempt?.isCancelled == true { throw .unavailable("the attempt was called off: the network changed") }
            // In open mode a deleted or expired room admits any join, so its loss shows only as
            // "mac offline": ask the relay whether the room still has its verifier.
            if error.serverError == AdmissionError.macOffline.rawValue, pairing.registered,
                (try? RelayHTTPClient(endpoint: pairing.relay).roomIsEstablished(
                    room: pairing.room, verifier: key.verifier))
                    == false
            {
                throw .pairingGone("the relay no longer holds the room")
            }
            throw classify(error)
        }
        do throws(RoadFailure) {
            let established = try establish(connection, key: key)
            if attempt?.isCancelled == true {
                throw RoadFailure.unavailable("the attempt was called off: the network changed")
            }
            return established
        } catch {
            connection.close()
            throw error
        }
    }

    private func establish(_ connection: RelayConnection, key: RelayJoinKey) throws(RoadFailure) -> RoadConnection {
        let greeted = try greet(
            over: connection, pairingID: pairing.pairingID, computerKey: pairing.computerKey,
            status: .init(name: deviceName, roomSecret: pairing.roomSecret, registered: pairing.registered),
            staticKey: staticKey, timeout: timeout, classify: classify)
        var channel = greeted.channel
        var registeredNow = false
        if !pairing.registered {
            let token = connection.registrationToken ?? []
            do throws(ConnectionError) {
                try RelayHTTPClient(endpoint: pairing.relay).register(
                    room: pairing.room, registrationToken: token, verifier: key.verifier)
                registeredNow = true
            } catch {
                // The room was registered by an earlier connection whose answer was lost: the
                // signed join above already proved our key is the room's.
                registeredNow = error.serverError == "already registered"
            }
            if registeredNow {
                do {
                    try channel.send(CompanionMessage.registered.bytes)
                } catch {
                    throw .unavailable("\(error)")
                }
            }
        }
        return RoadConnection(
            channel: channel, registeredNow: registeredNow, road: .relay(host: pairing.relay.host),
            served: greeted.served)
    }

    func classify(_ error: ConnectionError) -> RoadFailure {
        if let close = error.close, close == .dailyQuotaExceeded {
            return .quotaExceeded(relay: pairing.relay.host, resetsBy: Date().addingTimeInterval(86400))
        }
        if error.serverError == AdmissionError.macOffline.rawValue {
            return .computerOffline(relay: pairing.relay.host)
        }
        return switch RelayLink.disposition(after: error) {
        case .stop(.needsRepairing(let why)): .pairingGone(why)
        case .stop(.roomDeleted), .stop(.pairingCycleCap): .pairingGone(error.close?.reason ?? "room deleted")
        case .stop(.displaced): .displaced
        case .stop(.refused(let why)): .refused(why)
        case .retrySoon: .resharding(relay: pairing.relay.host)
        case .stop(.stopped), .retry: .unavailable(error.message)
        }
    }

    /// Why an admitted connection ended, as a failure: what the relay's close means for retrying.
    public func classify(_ end: FramePipeEnd) -> RoadFailure {
        guard case .closedByRelay(let close) = end else { return .unavailable("the connection ended (\(end))") }
        if close == .dailyQuotaExceeded {
            return .quotaExceeded(relay: pairing.relay.host, resetsBy: Date().addingTimeInterval(86400))
        }
        return switch RelayLink.disposition(after: end) {
        case .stop(.needsRepairing(let why)): .pairingGone(why)
        case .stop(.roomDeleted), .stop(.pairingCycleCap): .pairingGone(close.reason)
        case .stop(.displaced): .displaced
        case .stop(.refused(let why)): .refused(why)
        case .retrySoon: .resharding(relay: pairing.relay.host)
        case .stop(.stopped), .retry: .unavailable("the relay closed the connection (\(close))")
        }
    }
}
