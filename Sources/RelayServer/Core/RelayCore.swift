import AppAttest
import HerdrCrypto
import PeerGateListener
import RelayProtocol
import RelayStorage

/// The relay's whole protocol logic (interop-facts §5, design 002): admission, slots, splicing
/// decisions, limits, quotas, the HTTP endpoints and housekeeping. Pure: no sockets, no threads;
/// time from an injected clock, randomness from an injected source, state in an injected store.
///
/// The I/O shell calls in with what happened on a socket and drains `takeActions()` after each
/// call. Not thread-safe: one owner thread (the event loop) calls it.
public final class RelayCore {
    public let configuration: RelayConfiguration
    let store: any RelayStore
    let clock: any RelayClock
    let random: (Int) -> [UInt8]
    /// Checks phones' App Attest evidence against `configuration.appAttest`.
    let attestation: AppAttestVerifier
    let log: (RelayLogKind, String) -> Void

    var connections: [ConnectionID: ConnectionRecord] = [:]
    var rooms: [String: RoomState] = [:]
    var addresses: [String: AddressUsage] = [:]
    /// Pairing rooms (no stored record) that used up their quota, with their quota windows.
    var exhaustedPairingRooms: [String: (windowStart: Int64, bytes: Int64)] = [:]
    /// Sockets awaiting admission in opening order; their deadlines are in the same order.
    var pendingQueue: [ConnectionID] = []
    var pendingQueueHead = 0
    var nextConnectionID: ConnectionID = 1
    var nextPingRound: Int64
    var nextMaintenance: Int64
    var metrics = RelayMetrics()
    /// Why the store cannot be reached, since the last call that found it so; nil while it can.
    /// New admissions and HTTP calls are refused meanwhile; splices already running go on.
    public internal(set) var storeOutage: String?
    /// This node's name among the relays sharing the store (random, new at each start): the
    /// holder written in the room leases it takes.
    public let nodeID: String
    var nextBeat: Int64
    var nextQuotaFlush: Int64
    /// Rooms whose lease this node holds (a shared store only).
    public internal(set) var leasedRoomCount = 0
    private var actions: [RelayAction] = []

    func appendAction(_ action: RelayAction) { actions.append(action) }

    public init(
        configuration: RelayConfiguration, store: any RelayStore, clock: any RelayClock,
        random: @escaping (Int) -> [UInt8] = { SecureRandom.bytes($0) },
        log: @escaping (RelayLogKind, String) -> Void = { _, _ in }
    ) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.random = random
        attestation = AppAttestVerifier(policy: configuration.appAttest)
        self.log = log
        nextPingRound = clock.milliseconds + configuration.pingInterval
        nextMaintenance = clock.milliseconds + configuration.maintenanceInterval
        nodeID = Hex.encode(random(8))
        nextBeat = clock.milliseconds
        nextQuotaFlush = clock.milliseconds + configuration.sharedQuotaFlushInterval
    }

    /// What the shell must do now, in order; empties the list.
    public func takeActions() -> [RelayAction] {
        defer { actions.removeAll(keepingCapacity: true) }
        return actions
    }

    /// True when there are actions to take (saves the shell an allocation on the hot path).
    public var hasActions: Bool { !actions.isEmpty }

    /// Sockets the core knows (awaiting admission or admitted).
    public var connectionCount: Int { connections.count }
    /// Rooms with at least one socket.
    public var activeRoomCount: Int { rooms.count }

    // MARK: - WebSocket upgrade

    /// The checks before a WebSocket upgrade is accepted, in upstream's order: the request gate
    /// (`Origin`: 403, the room header: 400), the client address's upgrade rate and open sockets
    /// (429), then the relay's capacity (503). Nil: go on with the WebSocket handshake, then `open`.
    public func checkUpgrade(_ head: HTTPRequestHead, address: String) -> HTTPResponse? {
        let name: String
        switch gate(head) {
        case .refused(let refusal): return refuseHTTP(refusal)
        case .webClientFile: return refuseHTTP(RelayHTTP.plain(400, "bad room"))  // never: it is an upgrade
        case .room(let room): name = room
        }
        let now = clock.milliseconds
        var usage = addresses[address] ?? AddressUsage()
        defer { addresses[address] = usage }
        guard usage.upgrades.admit(at: now, limit: configuration.upgradesPerMinute, length: 60_000) else {
            return refuseHTTP(RelayHTTP.plain(429, "rate limited"))
        }
        guard usage.openSockets < configuration.socketsPerAddress else {
            return refuseHTTP(RelayHTTP.plain(429, "too many connections"))
        }
        guard connections.count < configuration.maximumSockets else {
            return refuseHTTP(RelayHTTP.plain(503, "capacity"))
        }
        if rooms[name] == nil, rooms.count >= configuration.maximumRooms {
            return refuseHTTP(RelayHTTP.plain(503, "capacity"))
        }
        if storeOutage != nil && checkStore() != nil { return refuseHTTP(RelayHTTP.plain(503, "store unavailable")) }
        return nil
    }

    /// Registers an upgraded socket in its room (after `checkUpgrade` passed and the 101 went
    /// out). A room already holding the maximum of sockets awaiting admission drops its oldest.
    public func open(room name: String, address: String) -> ConnectionID {
        let now = clock.milliseconds
        let id = nextConnectionID
        nextConnectionID += 1
        let room = roomState(name)
        let connection = ConnectionRecord(id: id, room: room, address: address, openedAt: now)
        connections[id] = connection
        addresses[address, default: AddressUsage()].openSockets += 1
        if room.pending.count >= configuration.pendingPerRoom {
            close(room.pending[0], .tooManyPending)
        }
        room.pending.append(connection)
        pendingQueue.append(id)
        return id
    }

    // MARK: - Frames

    /// A complete text frame before admission: the Hello, then the Proof. (After admission text
    /// messages are streamed like binary ones, through `frame`.)
    public func text(_ text: String, from id: ConnectionID) {
        guard let connection = connections[id] else { return }
        switch connection.phase {
        case .awaitingHello:
            switch RelayHello.read(text) {
            case .malformed:
                metrics.admissions[AdmissionError.badHello.rawValue, default: 0] += 1
                return close(connection, .refused(.badHello))  // no Result first, as upstream
            case .null: return close(connection, .internalError)
            case .hello(let hello):
                let nonce = random(RelayLimits.nonceSize)
                connection.phase = .awaitingProof(hello, nonce: nonce)
                actions.append(.sendText(id, RelayChallenge(nonce: nonce).json))
            }
        case .awaitingProof(let hello, let nonce):
            admit(connection, hello: hello, nonce: nonce, proofText: text)
        case .admitted:
            metrics.framesDropped += 1
        }
    }

    /// A data frame header (text or binary, `byteCount` payload bytes) from `id`: where to forward
    /// it, or nil to drop it. `startsMessage` is false for the continuation frames of a fragmented
    /// message, which go where the message's first frame went. Before admission any binary frame
    /// breaks admission. After it, every message counts toward the room's frame rate and every
    /// byte toward its quota, forwarded or not; a message with no peer to take it is dropped.
    public func frame(byteCount: Int, startsMessage: Bool, from id: ConnectionID) -> ConnectionID? {
        guard let connection = connections[id] else { return nil }
        guard case .admitted(let role) = connection.phase else {
            // Pre-auth bytes are never buffered or forwarded.
            if case .awaitingHello = connection.phase {
                metrics.admissions[AdmissionError.badHello.rawValue, default: 0] += 1
                close(connection, .refused(.badHello))
            } else {
                refuse(connection, .badProof)
            }
            return nil
        }
        let room = connection.room
        if startsMessage {
            guard room.messages.admit(at: clock.milliseconds, limit: configuration.framesPerSecond, length: 1000)
            else {
                close(connection, .frameRateExceeded)
                return nil
            }
        }
        guard room.spend(byteCount, now: clock.unixSeconds, limit: configuration.bytesPerDay) else {
            closeRoom(room, .dailyQuotaExceeded)
            return nil
        }
        let peer = room.slot(role == .computer ? .device : .computer)
        if startsMessage { connection.messageTarget = peer }
        guard let peer, connection.messageTarget === peer else {
            metrics.framesDropped += 1
            return nil
        }
        metrics.framesSpliced += 1
        metrics.bytesSpliced += byteCount
        return peer.id
    }

    /// A pong arrived.
    public func pong(from id: ConnectionID) {
        connections[id]?.awaitingPong = false
    }

    /// The socket is gone (the peer closed it, it broke the WebSocket protocol, or the shell closed
    /// it after an action). Unknown ids are ignored. An admitted side going takes its peer with it
    /// (1001 `peer gone`), so a parked Mac re-parks and the next phone meets a fresh handshake.
    public func closed(_ id: ConnectionID) {
        guard let connection = connections[id] else { return }
        forget(connection)
        closePeer(of: connection)
        releaseIfEmpty(connection.room)
    }

    // MARK: - Admission

    /// The Proof decides, in upstream's order: the proof rate, then the credential the room asks
    /// for (a signature in an established room; in a pairing room nothing in open mode, a ticket
    /// from phones under attestation), then the slot.
    private func admit(_ connection: ConnectionRecord, hello: RelayHello, nonce: [UInt8], proofText: String) {
        let room = connection.room
        let role = hello.role
        // A room whose record could not be read is neither pairing nor established: read it
        // again, and refuse while the store cannot say.
        if room.recordUnknown {
            do {
                room.adopt(try store.room(named: room.name))
                noteStoreAnswered()
            } catch {
                return fail(connection, error)
            }
        }
        if store.isShared {
            // Counted in the store, so a room's attempts spread over nodes share one window.
            do {
                guard
                    try store.admitAttempt(
                        room: room.name, limit: configuration.proofsPerWindow, length: configuration.proofWindow)
                else { return refuse(connection, .rateLimited) }
            } catch {
                return fail(connection, error)
            }
        } else {
            guard
                room.proofs.admit(
                    at: clock.milliseconds, limit: configuration.proofsPerWindow, length: configuration.proofWindow)
            else { return refuse(connection, .rateLimited) }
        }
        let presented = RelayProof.presented(proofText)
        guard case .fields(let signature, let ticket) = presented else {
            // Upstream fails on a `null` Proof only where it reads a field of it.
            if presented == .null && (room.isEstablished || (configuration.attestationRequired && role == .device)) {
                return close(connection, .internalError)
            }
            if presented == .unparseable { return refuse(connection, .badProof) }
            return admitToSlot(connection, role: role, hello: hello, ticketDigest: nil, attestedKey: [])
        }
        var attestedKey: [UInt8] = []
        var ticketDigest: [UInt8]?
        if let verifier = room.record?.verifier {
            guard let signature else { return refuse(connection, .signatureRequired) }
            let transcript = RelayTranscript.join(
                role: role, nonce: nonce, room: room.name, origin: configuration.origin)
            guard let signatureBytes = RelayJSON.bytes(signature), let key = try? Ed25519PublicKey(raw: verifier),
                key.isValidSignature(signatureBytes, for: transcript)
            else { return refuse(connection, .badSignature) }
            // A verified join proves the pairing is live, whatever the slot says next.
            touchActivity(room, force: false)
        } else if configuration.attestationRequired && role == .device {
            // The Mac cannot attest and parks on its Noise key alone; the phone brings a ticket.
            guard let ticket else { return refuse(connection, .ticketRequired) }
            // Checked now, taken only once every other check has passed: unlike upstream, a
            // refused attempt (`mac offline`, `slot occupied`) does not use the ticket up.
            guard let bytes = RelayJSON.bytes(ticket) else { return refuse(connection, .badTicket) }
            let digest = SHA256.hash(bytes)
            do {
                guard let key = try store.peekSecret(.ticket, digest: digest, room: room.name, now: clock.unixSeconds)
                else { return refuse(connection, .badTicket) }
                attestedKey = key
                ticketDigest = digest
            } catch {
                return fail(connection, error)
            }
        }
        admitToSlot(connection, role: role, hello: hello, ticketDigest: ticketDigest, attestedKey: attestedKey)
    }

    /// The credential passed: a phone needs a parked Mac, a pairing room counts the phone's
    /// cycle, `nonDisplacing` yields to a holder, and otherwise the newest connection wins.
    private func admitToSlot(
        _ connection: ConnectionRecord, role: RelayRole, hello: RelayHello, ticketDigest: [UInt8]?,
        attestedKey: [UInt8]
    ) {
        let room = connection.room
        // Another live node splicing this room owns it: the client comes back once the routing
        // has settled (a balancer that just moved the room, a node that just died).
        guard takeLease(room, for: connection) else { return }
        if !room.isEstablished && role == .computer { room.pairingCycles = 0 }  // a fresh park gets a fresh budget
        if role == .device {
            guard room.mac != nil else { return refuse(connection, .macOffline) }
            if !room.isEstablished {
                room.pairingCycles += 1
                if room.pairingCycles > configuration.pairingCycles {
                    metrics.admissions["pairing cycle cap", default: 0] += 1
                    log(.event, "a pairing room passed its cycle cap and was closed")
                    return closeRoom(room, .pairingCycleCap)
                }
            }
        }
        let holder = room.slot(role)
        if holder != nil && hello.nonDisplacing { return refuse(connection, .slotOccupied) }
        if let ticketDigest {
            do {
                guard
                    try store.takeSecret(.ticket, digest: ticketDigest, room: room.name, now: clock.unixSeconds) != nil
                else { return refuse(connection, .badTicket) }
            } catch {
                return fail(connection, error)
            }
        }
        var token: [UInt8]?
        if role == .device {
            let minted = random(RelayLimits.tokenSize)
            do {
                try store.addSecret(
                    .registrationToken, digest: SHA256.hash(minted), room: room.name,
                    expires: clock.unixSeconds + configuration.secretLifetime, attachment: attestedKey,
                    now: clock.unixSeconds)
            } catch {
                return fail(connection, error)
            }
            token = minted
        }
        // The displaced holder's peer stays: a reconnecting phone must not knock out the Mac.
        if let holder { close(holder, .displaced, closingPeer: false) }
        room.pending.removeAll { $0 === connection }
        room.setSlot(role, connection)
        connection.phase = .admitted(role)
        metrics.admissions["ok", default: 0] += 1
        actions.append(.sendText(connection.id, RelayResult.admitted(registrationToken: token).json))
        actions.append(.admitted(connection.id, frameLimit: configuration.frameSize))
    }

    /// `{"ok":false,"error":X}`, then close 1008 X.
    func refuse(_ connection: ConnectionRecord, _ error: AdmissionError) {
        metrics.admissions[error.rawValue, default: 0] += 1
        actions.append(.sendText(connection.id, RelayResult.refused(error.rawValue).json))
        close(connection, .refused(error))
    }

    /// A store failure during admission: close 1011 `internal error` (`store unavailable` when
    /// the store cannot be reached), log without names.
    func fail(_ connection: ConnectionRecord, _ error: any Error) {
        if let error = error as? RelayStoreError, error.isUnavailable {
            noteStoreOutage(error)
            return close(connection, .storeUnavailable)
        }
        log(.failure, "store error during admission: \(error)")
        close(connection, .internalError)
    }

    /// The store could not be reached: logged once per outage.
    func noteStoreOutage(_ error: RelayStoreError) {
        if storeOutage == nil { log(.failure, "store unavailable: \(error.message)") }
        storeOutage = error.message
    }

    /// The store answered: an outage, if any, is over.
    func noteStoreAnswered() {
        guard let outage = storeOutage else { return }
        storeOutage = nil
        log(.event, "store reachable again (it was: \(outage))")
    }

    /// Asks the store whether it can be reached (a networked store pings), and records the answer.
    @discardableResult
    public func checkStore() -> String? {
        if let problem = store.checkHealth() {
            noteStoreOutage(RelayStoreError(problem, unavailable: true))
        } else {
            noteStoreAnswered()
        }
        return storeOutage
    }

    // MARK: - Closing

    /// Forgets the connection and asks the shell to close it with `reason`. An admitted side's
    /// peer is closed with 1001 `peer gone` unless `closingPeer` is false (a displacement, or the
    /// whole room closing with a reason of its own).
    func close(_ connection: ConnectionRecord, _ reason: RelayClose, closingPeer: Bool = true) {
        guard connections[connection.id] != nil else { return }
        forget(connection)
        metrics.countClose(reason.reason)
        actions.append(.close(connection.id, reason))
        if closingPeer { closePeer(of: connection) }
        releaseIfEmpty(connection.room)
    }

    /// Closes every socket of the room with `reason`.
    func closeRoom(_ room: RoomState, _ reason: RelayClose) {
        for connection in room.connections { close(connection, reason, closingPeer: false) }
    }

    /// `connection` (already forgotten) was admitted: its peer slot's holder goes too.
    private func closePeer(of connection: ConnectionRecord) {
        guard case .admitted(let role) = connection.phase,
            let peer = connection.room.slot(role == .computer ? .device : .computer)
        else { return }
        close(peer, .peerGone, closingPeer: false)
    }

    private func forget(_ connection: ConnectionRecord) {
        connections[connection.id] = nil
        let room = connection.room
        if room.mac === connection { room.mac = nil }
        if room.phone === connection { room.phone = nil }
        room.pending.removeAll { $0 === connection }
        connection.messageTarget = nil
        if var usage = addresses[connection.address] {
            usage.openSockets -= 1
            addresses[connection.address] = usage
        }
    }

    // MARK: - Rooms

    /// The room in memory, loading its record from the store on first touch.
    func roomState(_ name: String) -> RoomState {
        if let room = rooms[name] { return room }
        var record: RoomRecord?
        var unknown = false
        do {
            record = try store.room(named: name)
        } catch {
            noteStoreFailure(error, "loading a room")
            unknown = true
        }
        let room = RoomState(name: name, record: record)
        room.recordUnknown = unknown
        if record == nil, let quota = exhaustedPairingRooms[name] {
            room.quotaWindowStart = quota.windowStart
            room.quotaBytes = quota.bytes
        }
        rooms[name] = room
        return room
    }

    func releaseIfEmpty(_ room: RoomState) {
        guard room.isEmpty, rooms[room.name] === room else { return }
        flushQuota(room)
        releaseLease(room)
        // A pairing room has no record to keep its byte count in; remember the ones that used
        // up their quota (each took 512 MiB of traffic, so there are few) until the window ends.
        if room.record == nil && room.isOverQuota(now: clock.unixSeconds, limit: configuration.bytesPerDay) {
            exhaustedPairingRooms[room.name] = (room.quotaWindowStart, room.quotaBytes)
        }
        rooms[room.name] = nil
    }

    /// Counts a refusal the shell sends without calling `respond`.
    func refuseHTTP(_ response: HTTPResponse) -> HTTPResponse {
        metrics.httpResponses[response.status, default: 0] += 1
        return response
    }
}
