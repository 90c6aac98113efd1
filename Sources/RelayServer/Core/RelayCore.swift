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
    let attestation: any AttestationVerifier
    let log: (String) -> Void

    var connections: [ConnectionID: ConnectionRecord] = [:]
    var rooms: [String: RoomState] = [:]
    var addresses: [String: AddressUsage] = [:]
    /// Pairing rooms (no stored record) that used up their quota, and the day they did.
    var exhaustedPairingRooms: [String: Int64] = [:]
    /// Sockets awaiting admission in opening order; their deadlines are in the same order.
    var pendingQueue: [ConnectionID] = []
    var pendingQueueHead = 0
    var nextConnectionID: ConnectionID = 1
    var nextPingRound: Int64
    var nextMaintenance: Int64
    var metrics = RelayMetrics()
    private var actions: [RelayAction] = []

    func appendAction(_ action: RelayAction) { actions.append(action) }

    public init(
        configuration: RelayConfiguration, store: any RelayStore, clock: any RelayClock,
        random: @escaping (Int) -> [UInt8] = { SecureRandom.bytes($0) },
        attestation: any AttestationVerifier = UnavailableAttestationVerifier(),
        log: @escaping (String) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.random = random
        self.attestation = attestation
        self.log = log
        nextPingRound = clock.milliseconds + configuration.pingInterval
        nextMaintenance = clock.milliseconds + configuration.maintenanceInterval
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

    /// The checks before a WebSocket upgrade is accepted, in order: an `Origin` header (403
    /// `forbidden`), the room header (400 `bad room`), the client address's upgrade rate and open
    /// sockets (429). Nil: go on with the WebSocket handshake, then `open`.
    public func checkUpgrade(_ head: HTTPRequestHead, address: String) -> HTTPResponse? {
        if !head.values(named: "origin").isEmpty { return refuseHTTP(403, "forbidden") }
        guard roomName(in: head) != nil else { return refuseHTTP(400, "bad room") }
        let now = clock.milliseconds
        var usage = addresses[address] ?? AddressUsage()
        defer { addresses[address] = usage }
        guard usage.upgrades.admit(at: now, limit: configuration.upgradesPerMinute, length: 60_000) else {
            return refuseHTTP(429, "rate limited")
        }
        guard usage.openSockets < configuration.socketsPerAddress else { return refuseHTTP(429, "too many sockets") }
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

    /// A text frame: admission (Hello, then Proof). Text after admission is not spliced; it is
    /// dropped.
    public func text(_ text: String, from id: ConnectionID) {
        guard let connection = connections[id] else { return }
        switch connection.phase {
        case .awaitingHello:
            guard let hello = RelayHello.parse(text) else { return refuse(connection, .badHello) }
            let nonce = random(RelayLimits.nonceSize)
            connection.phase = .awaitingProof(hello, nonce: nonce)
            actions.append(.sendText(id, RelayChallenge(nonce: nonce).json))
        case .awaitingProof(let hello, let nonce):
            admit(connection, hello: hello, nonce: nonce, proofText: text)
        case .admitted:
            metrics.framesDropped += 1
        }
    }

    /// A binary frame of `byteCount` payload bytes: where to forward it (the room's other slot),
    /// or nil to drop it (no peer yet, or the frame broke a rule and the sender is being closed).
    public func binary(byteCount: Int, from id: ConnectionID) -> ConnectionID? {
        guard let connection = connections[id] else { return nil }
        guard case .admitted(let role) = connection.phase else {
            // Pre-auth bytes are never buffered or forwarded: a binary frame breaks admission.
            if case .awaitingHello = connection.phase {
                refuse(connection, .badHello)
            } else {
                refuse(connection, .badProof)
            }
            return nil
        }
        let room = connection.room
        let now = clock.milliseconds
        let second = now / 1000
        if room.frameSecond != second {
            room.frameSecond = second
            room.framesThisSecond = 0
        }
        room.framesThisSecond += 1
        guard room.framesThisSecond <= configuration.framesPerSecond else {
            close(connection, .frameRateExceeded)
            return nil
        }
        guard let peer = room.slot(role == .mac ? .phone : .mac) else {
            metrics.framesDropped += 1
            return nil
        }
        guard room.spend(byteCount, day: clock.unixSeconds / 86_400, limit: configuration.bytesPerDay) else {
            closeRoom(room, .dailyQuotaExceeded)
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
    /// it after an action). Unknown ids are ignored.
    public func closed(_ id: ConnectionID) {
        guard let connection = connections[id] else { return }
        forget(connection)
        // The Mac's side of the end-to-end channel is gone: the phone must reconnect to a fresh
        // park. A phone leaving leaves the Mac parked (its next phone starts a new handshake).
        if case .admitted(.mac) = connection.phase, let phone = connection.room.phone {
            close(phone, .peerGone)
        }
        releaseIfEmpty(connection.room)
    }

    // MARK: - Admission

    private func admit(_ connection: ConnectionRecord, hello: RelayHello, nonce: [UInt8], proofText: String) {
        let room = connection.room
        let now = clock.milliseconds
        guard room.proofs.admit(at: now, limit: configuration.proofsPerWindow, length: configuration.proofWindow) else {
            return refuse(connection, .rateLimited)
        }
        guard let proof = RelayProof.parse(proofText) else { return refuse(connection, .badProof) }
        let role = hello.role
        var attestedKey: [UInt8] = []
        var ticketDigest: [UInt8]?
        if let verifier = room.record?.verifier {
            guard case .signature(let signature) = proof else { return refuse(connection, .signatureRequired) }
            let transcript = RelayTranscript.join(
                role: role, nonce: nonce, room: room.name, origin: configuration.origin)
            guard let key = try? Ed25519PublicKey(raw: verifier), key.isValidSignature(signature, for: transcript)
            else {
                return refuse(connection, .badSignature)
            }
        } else {
            switch (role, proof) {
            case (.mac, .empty): break
            case (_, .signature): return refuse(connection, .badSignature)  // nothing registered to check it against
            case (.mac, .ticket): return refuse(connection, .badProof)
            case (.phone, .empty), (.phone, .ticket):
                guard room.mac != nil else { return refuse(connection, .macOffline) }
                if case .ticket(let ticket) = proof {
                    // Checked now, taken only once every other check has passed: a refused
                    // attempt does not use the ticket up.
                    guard let bytes = RelayJSON.bytes(ticket) else { return refuse(connection, .badTicket) }
                    let digest = SHA256.hash(bytes)
                    do {
                        guard
                            let key = try store.peekSecret(
                                .ticket, digest: digest, room: room.name, now: clock.unixSeconds)
                        else { return refuse(connection, .badTicket) }
                        attestedKey = key
                        ticketDigest = digest
                    } catch {
                        return fail(connection, error)
                    }
                } else if configuration.attestationRequired {
                    return refuse(connection, .ticketRequired)
                }
            }
        }
        if room.isOverQuota(day: clock.unixSeconds / 86_400, limit: configuration.bytesPerDay) {
            metrics.admissions["daily quota exceeded", default: 0] += 1
            return close(connection, .dailyQuotaExceeded)
        }
        let holder = room.slot(role)
        if holder != nil && hello.nonDisplacing { return refuse(connection, .slotOccupied) }
        if !room.isEstablished && role == .phone {
            room.pairingCycles += 1
            if room.pairingCycles > configuration.pairingCycles {
                metrics.admissions["pairing cycle cap", default: 0] += 1
                log("a pairing room passed its cycle cap and was closed")
                return closeRoom(room, .pairingCycleCap)
            }
        }
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
        if role == .phone {
            let minted = random(RelayLimits.tokenSize)
            do {
                try store.addSecret(
                    .registrationToken, digest: SHA256.hash(minted), room: room.name,
                    expires: clock.unixSeconds + configuration.secretLifetime, attachment: attestedKey)
            } catch {
                return fail(connection, error)
            }
            token = minted
        }
        if let holder { close(holder, .displaced) }
        if role == .mac { room.pairingCycles = 0 }  // a fresh park gets a fresh budget
        room.pending.removeAll { $0 === connection }
        room.setSlot(role, connection)
        connection.phase = .admitted(role)
        if room.isEstablished { touchActivity(room, force: false) }
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

    /// A store failure during admission: close 1011 `internal error`, log without names.
    func fail(_ connection: ConnectionRecord, _ error: any Error) {
        log("store error during admission: \(error)")
        close(connection, .internalError)
    }

    // MARK: - Closing

    /// Forgets the connection and asks the shell to close it with `reason`.
    func close(_ connection: ConnectionRecord, _ reason: RelayClose) {
        guard connections[connection.id] != nil else { return }
        forget(connection)
        metrics.countClose(reason.reason)
        actions.append(.close(connection.id, reason))
        releaseIfEmpty(connection.room)
    }

    /// Closes every socket of the room with `reason`.
    func closeRoom(_ room: RoomState, _ reason: RelayClose) {
        for connection in room.connections { close(connection, reason) }
    }

    private func forget(_ connection: ConnectionRecord) {
        connections[connection.id] = nil
        let room = connection.room
        if room.mac === connection { room.mac = nil }
        if room.phone === connection { room.phone = nil }
        room.pending.removeAll { $0 === connection }
        if var usage = addresses[connection.address] {
            usage.openSockets -= 1
            addresses[connection.address] = usage
        }
    }

    // MARK: - Rooms

    /// The request's room: exactly one `x-relay-room` header of 64 lowercase hex digits.
    public func roomName(in head: HTTPRequestHead) -> String? {
        let values = head.values(named: RelayLimits.roomHeader)
        guard values.count == 1, RoomName.isValid(values[0]) else { return nil }
        return values[0]
    }

    /// The room in memory, loading its record from the store on first touch.
    func roomState(_ name: String) -> RoomState {
        if let room = rooms[name] { return room }
        let record: RoomRecord?
        do {
            record = try store.room(named: name)
        } catch {
            log("store error loading a room: \(error)")
            record = nil
        }
        let room = RoomState(name: name, record: record)
        if record == nil, let day = exhaustedPairingRooms[name] {
            room.quotaDay = day
            room.quotaBytes = configuration.bytesPerDay + 1
        }
        rooms[name] = room
        return room
    }

    func releaseIfEmpty(_ room: RoomState) {
        guard room.isEmpty, rooms[room.name] === room else { return }
        flushQuota(room)
        // A pairing room has no record to keep its byte count in; remember the ones that used
        // up today's quota (each took 512 MiB of traffic, so there are few) until the day ends.
        if room.record == nil && room.isOverQuota(day: room.quotaDay, limit: configuration.bytesPerDay) {
            exhaustedPairingRooms[room.name] = room.quotaDay
        }
        rooms[room.name] = nil
    }

    /// Refreshes the stored last-activity stamp of an established room (at most once a minute
    /// unless forced, so signed joins do not each cost a write).
    func touchActivity(_ room: RoomState, force: Bool) {
        guard var record = room.record else { return }
        let now = clock.unixSeconds
        guard force || now - record.lastActivity >= 60 else { return }
        record.lastActivity = now
        record.quotaDay = room.quotaDay
        record.quotaBytes = room.quotaBytes
        do {
            try store.save(record)
            room.record = record
            room.quotaDirty = false
        } catch {
            log("store error saving activity: \(error)")
        }
    }

    func flushQuota(_ room: RoomState) {
        guard room.quotaDirty, var record = room.record else { return }
        record.quotaDay = room.quotaDay
        record.quotaBytes = room.quotaBytes
        do {
            try store.save(record)
            room.record = record
            room.quotaDirty = false
        } catch {
            log("store error saving a quota: \(error)")
        }
    }

    func refuseHTTP(_ status: Int, _ error: String) -> HTTPResponse {
        metrics.httpResponses[status, default: 0] += 1
        return RelayHTTP.error(status, error)
    }
}
