import Foundation
import PeerGate
import PeerGateListener

/// Where per-address limits take a client's address from. Behind a proxy every TCP peer is the
/// proxy, so the operator names the header the proxy sets authoritatively (upstream's
/// `RELAY_TRUST_PROXY` / `RELAY_TRUST_CLOUDFLARE`); a header no proxy sets would let any client
/// pick a fresh address per connection, so neither is trusted unless asked for.
public enum ClientAddressSource: Hashable, Sendable {
    /// The TCP peer.
    case peer
    /// `X-Forwarded-For`, read `hops` from the right (each appending proxy adds the peer it saw on
    /// the right; the ones to its left are the client's to invent).
    case forwardedFor(hops: Int)
    /// `CF-Connecting-IP` (Cloudflare sets it and drops a client's copy), then `X-Forwarded-For`
    /// as above.
    case cloudflare(hops: Int)

    /// Whether a proxy stands in front, so TCP peers are proxies and not clients.
    public var isBehindProxy: Bool { self != .peer }

    /// The client's address for `head` arriving from TCP peer `peer`.
    public func clientAddress(_ head: HTTPRequestHead, peer: String) -> String {
        let hops: Int
        switch self {
        case .peer: return peer
        case .forwardedFor(let count): hops = count
        case .cloudflare(let count):
            hops = count
            if let value = head.values(named: "cf-connecting-ip").first.map(Self.trimmed), Self.isUsable(value) {
                return value
            }
        }
        let parts = head.values(named: "x-forwarded-for").joined(separator: ",").split(separator: ",").map(Self.trimmed)
            .filter { !$0.isEmpty }
        guard !parts.isEmpty else { return peer }
        // A chain shorter than the configured hops falls back to the rightmost (the most trusted)
        // entry, never to the client-controlled leftmost.
        let index = parts.count - hops
        let chosen = parts[index >= 0 ? index : parts.count - 1]
        return Self.isUsable(chosen) ? chosen : peer
    }

    private static func trimmed(_ text: some StringProtocol) -> String {
        String(text).trimmingCharacters(in: .whitespaces)
    }

    private static func isUsable(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= PeerAddress.maximumTextLength
    }
}
