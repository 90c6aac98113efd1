extension RedisRelayStore {
    /// The Lua scripts behind every change that must be atomic across nodes. Each gets the key
    /// prefix as `ARGV[1]`; the rest are in the order `RedisRelayStore` passes them. The keys are
    /// derived inside the script, so they suit a single Redis (or a primary with replicas), not
    /// Redis Cluster.
    enum Script: CaseIterable {
        case save, register, addQuota, touch, deleteRoom, addSecret, takeSecret, reap, attempt, acquireLease,
            releaseLease, leaseHolder, requestMove, takeMoves

        var source: String {
            switch self {
            case .save:
                // name, has verifier, verifier, last activity, quota window, quota bytes, ttl
                return """
                    local P, name = ARGV[1], ARGV[2]
                    local room = P .. 'room:' .. name
                    if ARGV[3] == '1' then redis.call('HSET', room, 'v', ARGV[4]) else redis.call('HDEL', room, 'v') end
                    redis.call('HSET', room, 'a', ARGV[5], 'qs', ARGV[6], 'qb', ARGV[7])
                    redis.call('EXPIRE', room, ARGV[8])
                    redis.call('ZADD', P .. 'rooms', ARGV[5], name)
                    return 1
                    """
            case .register:
                // name, verifier, now, ttl: sets the verifier only while the room has none.
                return """
                    local P, name = ARGV[1], ARGV[2]
                    local room = P .. 'room:' .. name
                    if redis.call('HEXISTS', room, 'v') == 1 then return 0 end
                    redis.call('HSET', room, 'v', ARGV[3], 'a', ARGV[4])
                    redis.call('HSETNX', room, 'qs', '0')
                    redis.call('HSETNX', room, 'qb', '0')
                    redis.call('EXPIRE', room, ARGV[5])
                    redis.call('ZADD', P .. 'rooms', ARGV[4], name)
                    return 1
                    """
            case .addQuota:
                // name, bytes, now, window length: returns {window start, bytes} or nil.
                return """
                    local room = ARGV[1] .. 'room:' .. ARGV[2]
                    local fields = redis.call('HMGET', room, 'a', 'qs')
                    if not fields[1] then return false end
                    if tonumber(ARGV[4]) - (tonumber(fields[2]) or 0) >= tonumber(ARGV[5]) then
                        redis.call('HSET', room, 'qs', ARGV[4], 'qb', ARGV[3])
                        return {ARGV[4], ARGV[3]}
                    end
                    local total = redis.call('HINCRBY', room, 'qb', ARGV[3])
                    return {fields[2], tostring(total)}
                    """
            case .touch:
                // name, last activity, ttl
                return """
                    local room = ARGV[1] .. 'room:' .. ARGV[2]
                    if redis.call('EXISTS', room) == 0 then return 0 end
                    redis.call('HSET', room, 'a', ARGV[3])
                    redis.call('EXPIRE', room, ARGV[4])
                    redis.call('ZADD', ARGV[1] .. 'rooms', ARGV[3], ARGV[2])
                    return 1
                    """
            case .attempt:
                // name, limit, window milliseconds: the window starts at its first attempt and
                // lasts by Redis' clock, so every node counts into the same one.
                return """
                    local key = ARGV[1] .. 'attempts:' .. ARGV[2]
                    local count = redis.call('INCR', key)
                    if count == 1 then redis.call('PEXPIRE', key, ARGV[4]) end
                    if count <= tonumber(ARGV[3]) then return 1 end
                    return 0
                    """
            case .acquireLease:
                // room, node, node lifetime ms, node's heartbeat mark: nil when granted, else the
                // live holder.
                return Self.liveness + """
                    local key = ARGV[1] .. 'lease:' .. ARGV[2]
                    local holder = redis.call('GET', key)
                    if holder and holder ~= ARGV[3] and isLive(ARGV[1], holder) then
                        return holder
                    end
                    redis.call('SET', ARGV[1] .. 'node:' .. ARGV[3], ARGV[5], 'PX', ARGV[4])
                    if holder ~= ARGV[3] then redis.call('SET', key, ARGV[3]) end
                    return false
                    """
            case .releaseLease:
                // room, node
                return """
                    local key = ARGV[1] .. 'lease:' .. ARGV[2]
                    if redis.call('GET', key) == ARGV[3] then redis.call('DEL', key) end
                    return 1
                    """
            case .leaseHolder:
                // room, node: the live holder other than node, or nil.
                return Self.liveness + """
                    local holder = redis.call('GET', ARGV[1] .. 'lease:' .. ARGV[2])
                    if holder and holder ~= ARGV[3] and isLive(ARGV[1], holder) then
                        return holder
                    end
                    return false
                    """
            case .requestMove:
                // room, holder: the holder's queue is bounded and forgotten after a minute.
                return """
                    local key = ARGV[1] .. 'moves:' .. ARGV[3]
                    redis.call('RPUSH', key, ARGV[2])
                    redis.call('LTRIM', key, -10000, -1)
                    redis.call('EXPIRE', key, 60)
                    return 1
                    """
            case .takeMoves:
                // node: the queue's rooms, the queue emptied.
                return """
                    local key = ARGV[1] .. 'moves:' .. ARGV[2]
                    local rooms = redis.call('LRANGE', key, 0, -1)
                    redis.call('DEL', key)
                    return rooms
                    """
            case .deleteRoom:
                // name
                return Self.helpers + "dropRoom(ARGV[1], ARGV[2])\nreturn 1"
            case .addSecret:
                // kind, digest hex, room, expires, attachment, ttl, now
                return Self.helpers + """
                    local P, kind, hex, name = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
                    dropSecret(P, kind, hex)
                    local key = P .. 'secret:' .. kind .. ':' .. hex
                    redis.call('HSET', key, 'room', name, 'exp', ARGV[5], 'att', ARGV[6])
                    redis.call('EXPIRE', key, ARGV[7])
                    local set = P .. 'secrets:' .. name .. ':' .. kind
                    redis.call('ZREMRANGEBYSCORE', set, '-inf', ARGV[8])
                    redis.call('ZADD', set, ARGV[5], hex)
                    if redis.call('TTL', set) < tonumber(ARGV[7]) then redis.call('EXPIRE', set, ARGV[7]) end
                    redis.call('ZADD', P .. 'expiry', ARGV[5], kind .. ':' .. hex)
                    return 1
                    """
            case .takeSecret:
                // kind, digest hex, room, now: deletes a match of this room, expired or not;
                // returns {attachment} while it was valid, nil otherwise.
                return Self.helpers + """
                    local P, kind, hex, name = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
                    local fields = redis.call('HMGET', P .. 'secret:' .. kind .. ':' .. hex, 'room', 'exp', 'att')
                    if not fields[1] or fields[1] ~= name then return false end
                    dropSecret(P, kind, hex)
                    if tonumber(ARGV[5]) < tonumber(fields[2]) then return {fields[3]} end
                    return false
                    """
            case .reap:
                // now, idle before, batch: deletes up to a batch of expired secrets and of idle
                // rooms; returns {more to do (0/1), names of the rooms removed…}.
                return Self.helpers + """
                    local P, now, idleBefore, batch = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
                    local expired = redis.call('ZRANGEBYSCORE', P .. 'expiry', '-inf', now, 'LIMIT', 0, batch)
                    for _, member in ipairs(expired) do
                        local colon = string.find(member, ':', 1, true)
                        if colon then dropSecret(P, string.sub(member, 1, colon - 1), string.sub(member, colon + 1)) end
                        redis.call('ZREM', P .. 'expiry', member)
                    end
                    local idle = redis.call('ZRANGEBYSCORE', P .. 'rooms', '-inf', '(' .. idleBefore, 'LIMIT', 0, batch)
                    for _, name in ipairs(idle) do dropRoom(P, name) end
                    local result = {0}
                    if #expired == batch or #idle == batch then result[1] = 1 end
                    for _, name in ipairs(idle) do result[#result + 1] = name end
                    return result
                    """
            }
        }

        private static var kinds: String {
            RelaySecretKind.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        }

        /// Whether a node is alive: its heartbeat key lives and, when it holds a presence token,
        /// that token's subscription is still there (gone the moment a killed node's socket
        /// closed). A `PUBSUB` the node's ACL user may not run says nothing: the heartbeat decides.
        private static var liveness: String {
            """
            local function isLive(P, node)
                local mark = redis.call('GET', P .. 'node:' .. node)
                if not mark then return false end
                if mark == '1' then return true end
                local counts = redis.pcall('PUBSUB', 'NUMSUB', P .. 'presence:' .. mark)
                if type(counts) ~= 'table' or counts.err then return true end
                return tonumber(counts[2]) > 0
            end

            """
        }

        /// Removing one secret from every index, and a room with all its secrets.
        private static var helpers: String {
            """
            local function dropSecret(P, kind, hex)
                local key = P .. 'secret:' .. kind .. ':' .. hex
                local owner = redis.call('HGET', key, 'room')
                if owner then redis.call('ZREM', P .. 'secrets:' .. owner .. ':' .. kind, hex) end
                redis.call('DEL', key)
                redis.call('ZREM', P .. 'expiry', kind .. ':' .. hex)
            end
            local function dropRoom(P, name)
                for _, kind in ipairs({\(kinds)}) do
                    local set = P .. 'secrets:' .. name .. ':' .. kind
                    for _, hex in ipairs(redis.call('ZRANGE', set, 0, -1)) do
                        redis.call('DEL', P .. 'secret:' .. kind .. ':' .. hex)
                        redis.call('ZREM', P .. 'expiry', kind .. ':' .. hex)
                    end
                    redis.call('DEL', set)
                end
                redis.call('DEL', P .. 'room:' .. name)
                redis.call('ZREM', P .. 'rooms', name)
            end

            """
        }
    }
}
