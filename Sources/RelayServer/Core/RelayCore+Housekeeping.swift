import RelayProtocol
import RelayStorage

extension RelayCore {
    /// Time passes: admission deadlines, the ping round, store maintenance. Call about once a second.
    public func tick() {
        let now = clock.milliseconds
        expirePending(now: now)
        // A store that was unreachable is asked again (at most about once a second by the store).
        if storeOutage != nil { checkStore() }
        syncSharedStore(now: now)
        if now >= nextPingRound {
            nextPingRound = now + configuration.pingInterval
            pingRound()
        }
        if now >= nextMaintenance {
            nextMaintenance = now + configuration.maintenanceInterval
            maintain()
        }
    }

    /// Closes every socket with 1001 `server shutting down` and flushes what is kept in memory.
    public func shutdown() {
        for room in Array(rooms.values) {
            flushQuota(room)
            closeRoom(room, .serverShuttingDown)
        }
        // Rooms left memory as their sockets closed, giving their leases back: the nodes that
        // take the clients next need not wait for this one's heartbeat to lapse.
    }

    /// Milliseconds until `tick` has something to do (for the shell's wait), at most a second.
    public var millisecondsUntilTick: Int64 {
        let now = clock.milliseconds
        var next = min(nextPingRound, nextMaintenance)
        if store.isShared { next = min(next, nextBeat, nextQuotaFlush) }
        if pendingQueueHead < pendingQueue.count, let first = connections[pendingQueue[pendingQueueHead]] {
            next = min(next, first.openedAt + configuration.admissionTimeout)
        }
        return max(0, min(1000, next - now))
    }

    private func expirePending(now: Int64) {
        while pendingQueueHead < pendingQueue.count {
            let id = pendingQueue[pendingQueueHead]
            if let connection = connections[id], !connection.isAdmitted {
                guard now - connection.openedAt >= configuration.admissionTimeout else { break }
                close(connection, .admissionTimeout)
            }
            pendingQueueHead += 1
        }
        if pendingQueueHead > 1024 && pendingQueueHead * 2 > pendingQueue.count {
            pendingQueue.removeFirst(pendingQueueHead)
            pendingQueueHead = 0
        }
    }

    /// Drops sockets that did not answer the previous ping, pings the rest.
    private func pingRound() {
        for connection in Array(connections.values) {
            if connection.awaitingPong {
                forgetDropped(connection)
                continue
            }
            connection.awaitingPong = true
            appendAction(.ping(connection.id))
        }
    }

    private func forgetDropped(_ connection: ConnectionRecord) {
        closed(connection.id)
        metrics.countClose("missed pong")
        appendAction(.drop(connection.id))
    }

    /// Store housekeeping: quotas flushed, live rooms' activity kept fresh, expired secrets and
    /// rooms idle for 30 days reaped (closing any socket still in a reaped room).
    private func maintain() {
        let now = clock.unixSeconds
        for room in rooms.values {
            if room.isEstablished && (room.mac?.isAdmitted == true || room.phone?.isAdmitted == true),
                let record = room.record, now - record.lastActivity >= 86_400
            {
                touchActivity(room, force: true)
            } else {
                flushQuota(room)
            }
        }
        do {
            let reaped = try store.reap(now: now, idleBefore: now - configuration.idleRoomLifetime)
            for name in reaped {
                guard let room = rooms[name] else { continue }
                room.record = nil
                closeRoom(room, .roomExpired)
            }
            if !reaped.isEmpty { log(.event, "reaped \(reaped.count) idle room(s)") }
        } catch {
            noteStoreFailure(error, "while reaping")
        }
        exhaustedPairingRooms = exhaustedPairingRooms.filter { now - $0.value.windowStart < RoomState.quotaWindow }
        let nowMilliseconds = clock.milliseconds
        addresses = addresses.filter { _, usage in
            usage.openSockets > 0 || !usage.upgrades.isIdle(at: nowMilliseconds, length: 60_000)
                || !usage.attestRequests.isIdle(at: nowMilliseconds, length: 60_000)
        }
    }
}
