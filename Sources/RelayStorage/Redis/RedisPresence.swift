import HerdrCrypto

/// A node's presence in Redis for as long as its process lives: a second connection that does
/// nothing but stay subscribed to a channel named by a random token. Redis counts the subscriber
/// while the connection is open and drops it the moment the process dies (the kernel closes the
/// socket, even on SIGKILL), so another node can tell a node that was killed from one between two
/// heartbeats (`PUBSUB NUMSUB`) without waiting for the heartbeat to lapse. Not thread-safe.
final class RedisPresence {
    /// The channel's name after `KEYPREFIX presence:`, written as the node's heartbeat mark.
    let token: String
    private let connection: RedisConnection

    /// Connects and subscribes. Throws with what Redis said when it refuses the subscription (an
    /// ACL user without the channel); the caller then goes on with heartbeats alone.
    init(address: RedisAddress, timeoutMilliseconds: Int, keyPrefix: String) throws(RelayStoreError) {
        token = Hex.encode(SecureRandom.bytes(16))
        connection = try RedisConnection(address: address, timeoutMilliseconds: timeoutMilliseconds)
        let channel = keyPrefix + "presence:" + token
        let reply = try connection.command([Array("SUBSCRIBE".utf8), Array(channel.utf8)])
        guard case .array(let fields) = reply, fields.first == .string(Array("subscribe".utf8)) else {
            throw RelayStoreError("Redis at \(address) refused SUBSCRIBE \(channel): \(reply.text)")
        }
    }

    /// False once Redis closed the subscription or sent anything on it (nothing is published to
    /// it, so either means it is no longer the quiet subscription other nodes count).
    var isHeld: Bool { !connection.isBroken && !connection.hasUnsolicitedInput }
}
