import Foundation
import Glibc
import HerdrKit

extension FuzzTargets {
    /// The file `HostKeyPins` reads, written once per process and rewritten per input: reading it
    /// never fails on content (only on I/O); every pin `allPins` lists is what `pinnedKey` finds
    /// for its host and port (when its name is canonical, as herdr-remote writes it); forgetting the first pinnable one removes it and keeps the others,
    /// and pinning its key again makes it the pin once more. Lines it does not understand stay.
    static let knownHosts = FuzzTarget("known-hosts", "HerdrKit: known_hosts pins (read, forget, pin)") { data in
        let file = KnownHostsScratch.file
        guard KnownHostsScratch.write(data) else { return }
        let pins = HostKeyPins(file: file)
        let listed: [(host: String, port: Int, key: SSHPublicKey)]
        do {
            listed = try pins.allPins()
        } catch {
            FuzzCheck.expect(data.count > HostKeyPins.maxFileBytes, "a readable file refused: \(error)")
            return
        }
        var pinnable: (host: String, port: Int, key: SSHPublicKey)?
        for pin in listed {
            // Hosts a known_hosts line may name but herdr-remote never pins are refused as arguments;
            // a name not in canonical form (`a..`) is another host once canonicalized again.
            guard CanonicalHost.hostname(pin.host) == pin.host,
                let found = try? pins.pinnedKey(hostname: pin.host, port: pin.port)
            else { continue }
            FuzzCheck.expect(found == pin.key, "allPins and pinnedKey disagree for \(pin.host):\(pin.port)")
            if pinnable == nil { pinnable = pin }
        }
        guard let pin = pinnable else { return }
        let before = Array(data.split(separator: 0x0A))
        FuzzCheck.expect((try? pins.forget(hostname: pin.host, port: pin.port)) == true, "a listed pin not forgotten")
        FuzzCheck.expect(
            (try? pins.pinnedKey(hostname: pin.host, port: pin.port)) == .some(nil), "forgotten, still pinned")
        let forgotten = CanonicalHost.pinKey(hostname: pin.host, port: pin.port)
        let others = listed.filter { CanonicalHost.pinKey(hostname: $0.host, port: $0.port) != forgotten }
        let after = ((try? pins.allPins()) ?? []).filter {
            CanonicalHost.pinKey(hostname: $0.host, port: $0.port) != forgotten
        }
        FuzzCheck.expect(
            after.count == others.count
                && zip(after, others).allSatisfy { $0.host == $1.host && $0.port == $1.port && $0.key == $1.key },
            "forgetting one pin changed the others")
        let contents = KnownHostsScratch.read()
        let kept = contents.split(separator: 0x0A)
        FuzzCheck.expect(kept.count <= before.count, "forgetting added lines")
        FuzzCheck.expect((try? pins.pin(pin.key, hostname: pin.host, port: pin.port)) == true, "pinning again refused")
        FuzzCheck.expect(
            (try? pins.pinnedKey(hostname: pin.host, port: pin.port)) == .some(pin.key), "pinned again, another key")
    }
}

/// The scratch known_hosts file of this process (its directory made once, removed at exit).
enum KnownHostsScratch {
    static let directory = URL(fileURLWithPath: NSTemporaryDirectory())
        .appendingPathComponent("herdr-fuzz-known-hosts-\(getpid())")
    static let file: URL = {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: KnownHostsScratch.directory) }
        return directory.appendingPathComponent("known_hosts")
    }()

    /// Replaces the file's bytes. Plain system calls: Foundation's `FileManager.contents(atPath:)`
    /// leaks a 4 KiB buffer per call on Linux, which LeakSanitizer reports against this target.
    static func write(_ bytes: [UInt8]) -> Bool {
        let fd = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// The file's bytes now (empty when it cannot be read).
    static func read() -> [UInt8] {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return bytes }
            bytes += buffer[..<count]
        }
    }
}
