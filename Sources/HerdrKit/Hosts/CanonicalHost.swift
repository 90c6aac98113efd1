/// One spelling per host, so that pins and connections agree on what "the same host" is.
///
/// Only the spelling is normalized: `100.x`, a short MagicDNS name and its FQDN stay different hosts, as in
/// OpenSSH's known_hosts.
public enum CanonicalHost {
    /// `raw` trimmed of whitespace, lowercased, with one trailing dot dropped (`Host.TS.net.` → `host.ts.net`).
    public static func hostname(_ raw: String) -> String {
        var host = raw.trimmingWhitespace().lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }

    /// The key for `hostname` and `port`: `"host:port"` with the canonical hostname.
    ///
    /// The port never contains a colon, so the last colon splits the key even for IPv6 hosts.
    public static func pinKey(hostname: String, port: Int) -> String {
        "\(Self.hostname(hostname)):\(port)"
    }
}

extension String {
    /// The string without leading and trailing Unicode whitespace and newlines.
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
