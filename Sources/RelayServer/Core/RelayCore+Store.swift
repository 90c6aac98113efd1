import RelayProtocol
import RelayStorage

/// What the core writes back to the store while rooms live in memory: activity, quotas, and
/// (a shared store) the leases and heartbeats that keep each room on one node.
extension RelayCore {
    /// Refreshes the stored last-activity stamp of an established room (at most once a minute
    /// unless forced, so signed joins do not each cost a write).
    func touchActivity(_ room: RoomState, force: Bool) {
        guard var record = room.record else { return }
        let now = clock.unixSeconds
        guard force || now - record.lastActivity >= 60 else { return }
        flushQuota(room)
        do {
            try store.touchRoom(named: room.name, lastActivity: now)
            record.lastActivity = now
            room.record = record
        } catch {
            noteStoreFailure(error, "saving activity")
        }
    }

    /// Adds the bytes counted here since the last flush to the store's count for the room, and
    /// takes the store's total (other nodes' bytes included) as the room's.
    func flushQuota(_ room: RoomState) {
        guard room.unflushedBytes > 0, var record = room.record else { return }
        do {
            let window = try store.addQuotaBytes(
                room.unflushedBytes, room: room.name, now: clock.unixSeconds, windowLength: RoomState.quotaWindow)
            room.unflushedBytes = 0
            guard let window else { return }
            room.quotaWindowStart = window.start
            room.quotaBytes = window.bytes
            record.quotaWindowStart = window.start
            record.quotaBytes = window.bytes
            room.record = record
        } catch {
            noteStoreFailure(error, "saving a quota")
        }
    }

    /// Takes the room's lease for `connection`'s admission, unless this node holds it already
    /// or the store is this node's alone. False when the connection was closed instead: 4421
    /// `reshard` when another live node holds it, `store unavailable` when the store cannot say.
    func takeLease(_ room: RoomState, for connection: ConnectionRecord) -> Bool {
        guard store.isShared, !room.leased else { return true }
        do {
            if let holder = try store.acquireLease(room: room.name, node: nodeID, lifetime: configuration.leaseLifetime)
            {
                metrics.admissions["reshard", default: 0] += 1
                close(connection, .reshard)
                // The balancer sends this room here now: the holder's sockets should come too,
                // or a Mac parked there would keep its phone away for as long as it stays.
                try store.requestMove(room: room.name, from: holder)
                return false
            }
            room.leased = true
            leasedRoomCount += 1
            return true
        } catch {
            fail(connection, error)
            return false
        }
    }

    /// Gives up the room's lease (its last socket went). A store that cannot be reached keeps it
    /// until this node's heartbeat lapses.
    func releaseLease(_ room: RoomState) {
        guard room.leased else { return }
        room.leased = false
        leasedRoomCount -= 1
        do {
            try store.releaseLease(room: room.name, node: nodeID)
        } catch {
            noteStoreFailure(error, "releasing a lease")
        }
    }

    /// A shared store's periodic work: the heartbeat that keeps this node's leases valid, and
    /// the quota flush that bounds what a dying node can lose.
    func syncSharedStore(now: Int64) {
        guard store.isShared else { return }
        if now >= nextBeat {
            nextBeat = now + max(1, configuration.leaseLifetime / 5)
            do {
                try store.beat(node: nodeID, lifetime: configuration.leaseLifetime)
                moveRooms(try store.takeMoveRequests(node: nodeID))
            } catch {
                noteStoreFailure(error, "the heartbeat")
            }
        }
        if now >= nextQuotaFlush {
            nextQuotaFlush = now + configuration.sharedQuotaFlushInterval
            for room in rooms.values where room.unflushedBytes > 0 { flushQuota(room) }
        }
    }

    /// Closes the rooms other nodes asked for with 4421 `reshard`: their clients come back soon,
    /// through the balancer, to the node that now has them.
    func moveRooms(_ names: [String]) {
        var moved = 0
        for name in names {
            guard let room = rooms[name], room.leased else { continue }
            closeRoom(room, .reshard)
            moved += 1
        }
        if moved > 0 { log(.event, "sent \(moved) room(s) to the node the balancer routes them to now") }
    }

    /// A store call failed: an outage is noted (once), any other error logged.
    func noteStoreFailure(_ error: RelayStoreError, _ what: String) {
        if error.isUnavailable {
            noteStoreOutage(error)
        } else {
            log(.failure, "store error \(what): \(error)")
        }
    }
}
