import CLISupport
import Foundation
import HerdrKit

/// `key` and `forget-host-key`: this device's key and the pins of hosts' keys.
enum KeyCommands {
    static let key = CommandSpec(
        name: "key", abstract: "Print this device's SSH public key, ready for a host's authorized_keys.",
        discussion: """
            The key is an Ed25519 key made on first use and kept in the config directory (mode 0600); it never \
            leaves this device. It is for the SSH road: add the printed line to ~/.ssh/authorized_keys on each \
            host, for example:

              herdr-remote key | ssh studio 'cat >> ~/.ssh/authorized_keys'
            """,
        flags: [FlagSpec("fingerprint", help: "Print the SHA256 fingerprint instead.")],
        handler: { arguments in
            let directory = ConfigDirectory.standard()
            let existed = FileManager.default.fileExists(atPath: directory.deviceKeyFile.path)
            let pair = try DeviceKey.load(in: directory)
            if !existed { printError("Created a device key at \(directory.deviceKeyFile.path)") }
            print(arguments.flag("fingerprint") ? pair.publicKey.fingerprintSHA256 : pair.authorizedKeysLine)
            return .success
        })

    static let forgetHostKey = CommandSpec(
        name: "forget-host-key",
        abstract: "Forget the pinned host key of HOST[:PORT], so the next connection asks again.",
        discussion:
            "Only do this when you know why the host's key changed (a reinstall, a new machine at the same name).",
        arguments: [PositionalSpec("destination", help: "host, host:port, or [ipv6]:port (port 22 when omitted).")],
        handler: { arguments in
            let text = arguments.positional("destination") ?? ""
            guard let (host, port) = parseDestination(text) else {
                throw arguments.usageError("'\(text)' is not HOST, HOST:PORT or [IPV6]:PORT")
            }
            let pins = HostKeyPins(directory: .standard())
            let old = try pins.pinnedKey(hostname: host, port: port)
            guard try pins.forget(hostname: host, port: port), let old else {
                throw RemoteError(.failure, "no pinned host key for \(HostCommands.endpoint(host, port))")
            }
            print("Forgot the host key of \(HostCommands.endpoint(host, port)) (\(old.fingerprintSHA256)).")
            return .success
        })

    /// `host`, `host:port`, `[v6]:port`, or a bare IPv6 address; the host canonicalized.
    static func parseDestination(_ text: String) -> (String, Int)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var host = trimmed
        var port = 22
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { return nil }
            host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()), (1...65535).contains(value) else {
                    return nil
                }
                port = value
            }
        } else if trimmed.filter({ $0 == ":" }).count == 1, let colon = trimmed.firstIndex(of: ":") {
            host = String(trimmed[..<colon])
            guard let value = Int(trimmed[trimmed.index(after: colon)...]), (1...65535).contains(value) else {
                return nil
            }
            port = value
        }
        host = CanonicalHost.hostname(host)
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace }) else { return nil }
        return (host, port)
    }
}
