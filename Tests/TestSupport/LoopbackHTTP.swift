import Glibc

/// A plain HTTP/1.1 GET to a server on 127.0.0.1, for the operator endpoints of the servers tests
/// start (`/healthz`, `/metrics`). Nil when nothing answers.
public enum LoopbackHTTP {
    public static func get(port: UInt16, path: String, timeout: Int = 5) -> (status: Int, body: String)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return nil }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard let reply = UnixSocketClient.exchange(fd: fd, request, timeout: timeout, done: { _ in false }) else {
            return nil
        }
        let text = String(decoding: reply, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n"), let statusText = text.split(separator: " ").dropFirst().first,
            let status = Int(statusText)
        else { return nil }
        return (status, String(text[headEnd.upperBound...]))
    }

    /// The unlabelled samples of a Prometheus text page: `name value` lines.
    public static func samples(_ page: String) -> [String: Int] {
        var samples: [String: Int] = [:]
        for line in page.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, !parts[0].contains("{"), let value = Int(parts[1]) {
                samples[String(parts[0])] = value
            }
        }
        return samples
    }
}
