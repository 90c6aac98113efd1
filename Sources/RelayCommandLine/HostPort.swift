/// `host:port` as the command line gives it: "127.0.0.1:8787", "[::1]:8787", "relay.test:443".
public enum HostPort {
    /// Host and port; nil unless the host is not empty, an IPv6 address is in brackets and the
    /// port is a number up to 65535 (0 included: "pick one" when listening).
    public static func split(_ text: String) -> (String, UInt16)? {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, let port = UInt16(portText) else { return nil }
        return (String(host), port)
    }
}
