import Foundation
import Glibc
import HerdrCrypto
import HerdrKit

/// The parts of the local sshd's effective configuration pairing needs, from `sshd -T` (which prints
/// one lowercase `keyword value` per line).
public struct SSHDSettings: Sendable, Equatable {
    public var ports: [Int]
    /// `HostKey` paths (private keys; the public halves are the same path plus `.pub`).
    public var hostKeyFiles: [String]
    /// `AuthorizedKeysFile` patterns, with their `%` tokens unexpanded.
    public var authorizedKeysFiles: [String]

    public init(ports: [Int] = [], hostKeyFiles: [String] = [], authorizedKeysFiles: [String] = []) {
        self.ports = ports
        self.hostKeyFiles = hostKeyFiles
        self.authorizedKeysFiles = authorizedKeysFiles
    }

    /// Reads `sshd -T` output.
    public init(testOutput: String) {
        self.init()
        for line in testOutput.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let value = String(parts[1]).trimmingCharacters(in: .whitespaces)
            switch parts[0].lowercased() {
            case "port": if let port = Int(value), (1...65535).contains(port) { ports.append(port) }
            case "hostkey": hostKeyFiles.append(value)
            case "authorizedkeysfile": authorizedKeysFiles += value.split(separator: " ").map(String.init)
            default: break
            }
        }
    }

    /// The first `AuthorizedKeysFile` expanded for `user` (nil when it is `none` or unset).
    public func authorizedKeysPath(user: String, home: String, uid: uid_t) -> String? {
        guard let pattern = authorizedKeysFiles.first, pattern.lowercased() != "none" else { return nil }
        return Self.expand(pattern, user: user, home: home, uid: uid)
    }

    /// sshd's expansion of an `AuthorizedKeysFile` pattern: `%%` → `%`, `%h` → home, `%u` → user,
    /// `%U` → uid; a relative result is taken from the home directory.
    public static func expand(_ pattern: String, user: String, home: String, uid: uid_t) -> String {
        var out = ""
        var iterator = pattern.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                out.append(character)
                continue
            }
            switch iterator.next() {
            case "%": out.append("%")
            case "h": out += home
            case "u": out += user
            case "U": out += String(uid)
            case let other?: out += "%" + String(other)
            case nil: out.append("%")
            }
        }
        return out.hasPrefix("/") ? out : (home.hasSuffix("/") ? home : home + "/") + out
    }

    /// Runs `sshd -T -C user=…,host=…,addr=…` for `user`.
    ///
    /// `sshd -T` refuses to run when it can read no host key, which is the case for everyone but root.
    /// Then it is run again with `-h` naming a throwaway key of our own (made in a private temporary
    /// directory and removed at once): the settings are the same, and only our key's `hostkey` line is
    /// dropped. When the configuration names no host keys of its own, sshd would use its default
    /// paths, and ``hostKeyFiles`` is left empty so the caller falls back to them.
    ///
    /// - Returns: nil when there is no sshd or it cannot be run either way.
    public static func query(user: String, host: String, address: String, timeout: TimeInterval = 10) -> SSHDSettings? {
        guard
            let sshd = ExternalCommand.find(
                "sshd", extraDirectories: ["/usr/sbin", "/usr/local/sbin", "/sbin", "/opt/homebrew/sbin"])
        else { return nil }
        let connection = "user=\(user),host=\(host),addr=\(address)"
        if let output = try? ExternalCommand.run(sshd, ["-T", "-C", connection], timeout: timeout), output.status == 0 {
            return SSHDSettings(testOutput: String(decoding: output.stdout, as: UTF8.self))
        }
        var template = Array("/tmp/herdr-pair-sshd-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return nil }
        let directory = String(cString: made)
        let keyPath = directory + "/throwaway_host_key"
        defer {
            unlink(keyPath)
            rmdir(directory)
        }
        let key = OpenSSHPrivateKey(privateKey: Ed25519PrivateKey(), comment: "herdr-pair sshd -T probe")
        let fd = open(keyPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        let written = (try? FileIO.writeAll(Array(key.pemText.utf8), to: fd, path: keyPath)) != nil
        close(fd)
        guard written,
            let output = try? ExternalCommand.run(sshd, ["-T", "-h", keyPath, "-C", connection], timeout: timeout),
            output.status == 0
        else { return nil }
        var settings = SSHDSettings(testOutput: String(decoding: output.stdout, as: UTF8.self))
        settings.hostKeyFiles.removeAll { $0 == keyPath }
        return settings
    }
}

/// The host keys whose fingerprints go into a pairing code: Ed25519 and ECDSA only (the phone's rule).
public enum HostKeyFingerprints {
    /// Where sshd looks when its configuration names no host keys.
    public static let defaultPublicKeyFiles = ["/etc/ssh/ssh_host_ed25519_key.pub", "/etc/ssh/ssh_host_ecdsa_key.pub"]

    /// The key in an OpenSSH `.pub` file, when it is Ed25519 or ECDSA.
    ///
    /// - Throws: ``HostError`` when the file cannot be read or holds no valid key; returns nil for a
    ///   valid key of another type (RSA, DSA, security keys, certificates).
    public static func key(inPublicKeyFile path: String) throws(HostError) -> SSHPublicKey? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(.notFound, "read the host key", path: path) }
        defer { close(fd) }
        let bytes = try FileIO.readToEnd(fd, path: path, limit: SSHPublicKey.maxLineBytes)
        let line =
            String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let key: SSHPublicKey
        do {
            key = try SSHPublicKey(openSSHLine: line)
        } catch {
            throw HostError(.malformed, "\(path) is not an OpenSSH public key: \(error.message)")
        }
        return isPairable(key) ? key : nil
    }

    /// Ed25519 and ECDSA (nistp256/384/521) keys.
    public static func isPairable(_ key: SSHPublicKey) -> Bool {
        key.algorithm == "ssh-ed25519" || key.algorithm.hasPrefix("ecdsa-sha2-nistp")
    }

    /// Fingerprints of the pairable keys among `files` (duplicates dropped, order kept, at most
    /// `limit`), skipping files that do not exist or hold other key types.
    public static func fingerprints(ofPublicKeyFiles files: [String], limit: Int = 3) -> [String] {
        var prints: [String] = []
        for file in files {
            guard let key = try? key(inPublicKeyFile: file) else { continue }
            if !prints.contains(key.fingerprintSHA256) { prints.append(key.fingerprintSHA256) }
        }
        return Array(prints.prefix(limit))
    }
}
