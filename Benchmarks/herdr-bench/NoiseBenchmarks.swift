import EndToEndChannel
import Foundation
import Glibc
import Noise
import TestSupport

/// The Noise roads' cryptography measured beside this machine's own limits, taken in the same run
/// from `openssl speed` (the same OpenSSL 3 library our wrappers call): XK handshakes per second
/// on one core against X25519 operations per second, and 64 KiB transport throughput against
/// ChaCha20-Poly1305 at its 16384-byte column.
///
/// `openssl speed` counts user CPU time by default (not wall time), so ours is measured in this
/// thread's CPU time too; then a busy machine slows both alike. Each of `runs` rounds measures
/// the anchors and ours back to back, and the medians are reported.
struct NoiseBenchmarks {
    /// CPU seconds per measurement.
    let seconds: Double
    let runs: Int

    init(runs: Int, seconds: Double = 1.0) {
        self.runs = max(3, runs)
        self.seconds = seconds
    }

    /// X25519 operations in one XK handshake with both sides on this core: each side does three DH
    /// (initiator: es, ee, se; responder: es, ee, se) and generates one ephemeral key pair.
    static let dhPerHandshake = 6
    static let keyGenerationsPerHandshake = 2
    static let x25519OperationsPerHandshake = dhPerHandshake + keyGenerationsPerHandshake

    struct Round {
        var x25519PerSecond = 0.0
        var chaChaPerSecond = 0.0
        var handshakesBLAKE2s = 0.0
        var handshakesSHA256 = 0.0
        var encrypt = 0.0
        var decrypt = 0.0
        var channelSend = 0.0
        var channelReceive = 0.0
    }

    func run() throws -> BenchReport {
        var report = BenchReport(
            title: "Noise (issue 5): XK handshakes and transport vs `openssl speed`, same machine, same run")
        let transport = try TransportBench(seconds: seconds)
        var rounds: [Round] = []
        var version = ""
        for index in 0..<runs {
            var round = Round()
            round.handshakesBLAKE2s = handshakeRate(HashBLAKE2s.self)
            round.handshakesSHA256 = handshakeRate(HashSHA256.self)
            let limits = try OpenSSLLimits.measure(seconds: max(1, Int(seconds.rounded(.up))))
            version = limits.version
            round.x25519PerSecond = limits.x25519PerSecond
            round.chaChaPerSecond = limits.chaChaPoly16KiBBytesPerSecond
            round.encrypt = try transport.cipherStateEncrypt()
            round.decrypt = try transport.cipherStateDecrypt()
            round.channelSend = try transport.channelSend()
            round.channelReceive = try transport.channelReceive()
            rounds.append(round)
            print("  round \(index + 1)/\(runs) done")
        }
        func middle(_ value: (Round) -> Double) -> Double { median(rounds.map(value)) }

        let x25519 = middle(\.x25519PerSecond)
        let handshakeLimit = x25519 / Double(Self.x25519OperationsPerHandshake)
        for (name, rate) in [("BLAKE2s", middle(\.handshakesBLAKE2s)), ("SHA256", middle(\.handshakesSHA256))] {
            report.add(
                "Noise_XK_25519_ChaChaPoly_\(name) handshakes/s, one core, both sides", ours: format(rate, 0),
                anchor:
                    "\(format(handshakeLimit, 0)) (X25519 \(format(x25519, 0)) ops/s ÷ \(Self.x25519OperationsPerHandshake))",
                ratio: "\(format(rate / handshakeLimit))×", target: "≥ 0.8×")
        }

        let limit = middle(\.chaChaPerSecond)
        for (name, rate) in [
            (
                "CipherState EncryptWithAd, 65519-byte plaintext → 65535-byte message, caller's buffer",
                middle(\.encrypt)
            ),
            ("CipherState DecryptWithAd, 65535-byte message, caller's buffer", middle(\.decrypt)),
            ("SecureChannel send, 64 KiB messages (frames of 65535 + 35 bytes)", middle(\.channelSend)),
            ("SecureChannel receive, 64 KiB messages", middle(\.channelReceive)),
        ] {
            report.add(
                name, ours: "\(format(rate / 1e6, 0)) MB/s", anchor: "\(format(limit / 1e6, 0)) MB/s",
                ratio: "\(format(rate / limit))×", target: "≥ 0.8×")
        }

        let cold = try ColdCipherBench(samples: 100 * runs, sleepMicroseconds: 50_000).run()
        report.add(
            "ChaCha20-Poly1305 seal + open of a \(ColdCipherBench.plaintextLength)-byte keystroke message after a 50 ms sleep, p50",
            ours: "\(format(median(cold.compact), 1)) µs",
            anchor: "\(format(median(cold.openSSL), 1)) µs (OpenSSL EVP)",
            ratio: "\(format(median(cold.compact) / median(cold.openSSL)))×", target: "report")

        let dhOnlyLimit = x25519 / Double(Self.dhPerHandshake)
        report.notes += [
            "Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores; \(version). Medians of \(runs) rounds; each round "
                + "measures our handshakes, runs `openssl speed -mr -seconds 1 ecdhx25519` and `openssl speed -mr -seconds 1 -evp "
                + "chacha20-poly1305` (its 16384-byte column), then measures our transport. (`openssl speed x25519` is spelled "
                + "`ecdhx25519` in OpenSSL 3.0; it times EVP_PKEY_derive alone, on a context set up once.) All rates are per CPU "
                + "second: `openssl speed` counts user CPU time, ours counts this thread's CPU time.",
            "DH count per XK handshake, both sides on one core: each side does 3 DH (initiator: es, ee, se; responder: es, ee, se), "
                + "6 in all, and generates 1 ephemeral key pair, 2 in all, each counted as one full X25519 operation (its public key "
                + "is X25519(k, 9)): \(Self.x25519OperationsPerHandshake) per handshake. The static key pairs exist beforehand and are "
                + "not counted. Counting only the 6 DH, the limit would be \(format(dhOnlyLimit, 0))/s and the BLAKE2s ratio "
                + "\(format(middle(\.handshakesBLAKE2s) / dhOnlyLimit))×. A handshake here is Initialize on both sides, the three "
                + "messages written and read, and Split on both sides.",
            "Throughput counts plaintext (application) bytes. The SecureChannel rows include the chunk flag byte, a fresh array per "
                + "frame and per delivered message, and each 65536-byte message's split into a 65518-byte and an 18-byte chunk.",
        ]
        return report
    }

    /// Full XK handshakes per CPU second on this thread: both sides, fresh ephemerals, Split.
    func handshakeRate<H: NoiseHash>(_ hash: H.Type) -> Double {
        let initiatorStatic = KeyPair.generate()
        let responderStatic = KeyPair.generate()
        let prologue = CompanionProfile.herdrRemote.prologue(pid: "bench")
        return measureRate(seconds: seconds) {
            do {
                var initiator = try HandshakeState<CipherChaChaPoly, H>(
                    pattern: .xk, initiator: true, prologue: prologue, s: initiatorStatic, rs: responderStatic.publicKey
                )
                var responder = try HandshakeState<CipherChaChaPoly, H>(
                    pattern: .xk, initiator: false, prologue: prologue, s: responderStatic)
                _ = try responder.readMessage(initiator.writeMessage())
                _ = try initiator.readMessage(responder.writeMessage())
                _ = try responder.readMessage(initiator.writeMessage())
                let a = try initiator.transportCipherStates()
                let b = try responder.transportCipherStates()
                precondition(a.send.hasKey && b.receive.hasKey)
            } catch {
                fatalError("handshake failed in the benchmark: \(error)")
            }
            return 1
        }
    }
}

/// This thread's CPU time in seconds.
func threadCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Calls `body` (which returns the units of work it did) until `seconds` of this thread's CPU
/// time have passed, after a short warm-up; returns units per CPU second.
func measureRate(seconds: Double, _ body: () throws -> Int) rethrows -> Double {
    for _ in 0..<4 { _ = try body() }
    var units = 0
    let start = threadCPUTime()
    var elapsed = 0.0
    repeat {
        for _ in 0..<8 { units += try body() }
        elapsed = threadCPUTime() - start
    } while elapsed < seconds
    return Double(units) / elapsed
}

/// Transport throughput over established CipherStates and SecureChannels.
struct TransportBench {
    static let messageLength = 64 * 1024
    let seconds: Double
    let initiator: CompanionChannel
    let responder: CompanionChannel

    init(seconds: Double) throws {
        self.seconds = seconds
        let phone = KeyPair.generate()
        let mac = KeyPair.generate()
        var initiator = CompanionChannel(
            handshake: try CompanionProfile.herdrRemote.initiatorHandshake(
                pid: "bench", localStatic: phone, remoteStatic: mac.publicKey))
        var responder = CompanionChannel(
            handshake: try CompanionProfile.herdrRemote.responderHandshake(pid: "bench", localStatic: mac))
        var toResponder = Self.frames(try initiator.start())
        while !toResponder.isEmpty {
            let toInitiator = Self.frames(try responder.receive(toResponder.removeFirst()))
            for frame in toInitiator { toResponder += Self.frames(try initiator.receive(frame)) }
        }
        precondition(initiator.isEstablished && responder.isEstablished)
        self.initiator = initiator
        self.responder = responder
    }

    static func frames(_ actions: [CompanionChannel.Action]) -> [[UInt8]] {
        actions.compactMap { if case .send(let frame) = $0 { return frame } else { return nil } }
    }

    func cipherStateEncrypt() throws -> Double {
        var send = try CipherState<CipherChaChaPoly>(key: (0..<32).map { UInt8($0) })
        let plaintext = [UInt8](repeating: 0x5a, count: NoiseLimits.maximumPlaintextLength)
        var output = [UInt8](repeating: 0, count: NoiseLimits.maximumMessageLength)
        return try plaintext.withUnsafeBytes { p in
            try output.withUnsafeMutableBytes { o in
                try measureRate(seconds: seconds) {
                    try send.encryptWithAd(UnsafeRawBufferPointer(start: nil, count: 0), plaintext: p, into: o)
                    return p.count
                }
            }
        }
    }

    /// One message made at nonce 0, decrypted again and again by setting the nonce back
    /// (SetNonce is part of the CipherState interface and costs nothing).
    func cipherStateDecrypt() throws -> Double {
        let key = (0..<32).map { UInt8($0) }
        var send = try CipherState<CipherChaChaPoly>(key: key)
        var receive = try CipherState<CipherChaChaPoly>(key: key)
        let message = try send.encryptWithAd(
            [], [UInt8](repeating: 0x5a, count: NoiseLimits.maximumPlaintextLength))
        var output = [UInt8](repeating: 0, count: NoiseLimits.maximumPlaintextLength)
        return try message.withUnsafeBytes { m in
            try output.withUnsafeMutableBytes { o in
                try measureRate(seconds: seconds) {
                    receive.setNonce(0)
                    return try receive.decryptWithAd(
                        UnsafeRawBufferPointer(start: nil, count: 0), ciphertext: m, into: o)
                }
            }
        }
    }

    func channelSend() throws -> Double {
        var channel = initiator
        let message = [UInt8](repeating: 0x5a, count: Self.messageLength)
        return try measureRate(seconds: seconds) {
            _ = try channel.send(message)
            return message.count
        }
    }

    /// Frames must be received in nonce order, so batches of them are made untimed and then
    /// received timed, until the timed part adds up to `seconds` of CPU time.
    func channelReceive() throws -> Double {
        var sender = initiator
        var receiver = responder
        let message = [UInt8](repeating: 0x5a, count: Self.messageLength)
        var timed = 0.0
        var received = 0
        while timed < seconds {
            var frames: [[UInt8]] = []
            for _ in 0..<64 { frames += try sender.send(message) }
            let start = threadCPUTime()
            for frame in frames {
                for case .deliver(let delivered) in try receiver.receive(frame) { received += delivered.count }
            }
            timed += threadCPUTime() - start
        }
        return Double(received) / timed
    }
}

/// This machine's limits from `openssl speed`, measured now.
struct OpenSSLLimits {
    let version: String
    let chaChaPoly16KiBBytesPerSecond: Double
    let x25519PerSecond: Double

    static func measure(seconds: Int) throws -> OpenSSLLimits {
        let version = try ProcessRunner.run("openssl", ["version"], check: true).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let chacha = try ProcessRunner.run(
            "openssl", ["speed", "-mr", "-seconds", String(seconds), "-evp", "chacha20-poly1305"],
            timeout: Double(seconds * 6 + 30), check: true
        ).stdout
        let x25519 = try ProcessRunner.run(
            "openssl", ["speed", "-mr", "-seconds", String(seconds), "ecdhx25519"], timeout: Double(seconds * 2 + 30),
            check: true
        ).stdout
        return OpenSSLLimits(
            version: version, chaChaPoly16KiBBytesPerSecond: try parseCipher(chacha, blockSize: 16384),
            x25519PerSecond: try parseECDH(x25519))
    }

    /// `-mr` output: `+H:16:64:256:1024:8192:16384` names the columns, `+F:<n>:<name>:<bytes/s>…`
    /// holds the values.
    static func parseCipher(_ output: String, blockSize: Int) throws -> Double {
        let lines = output.split(separator: "\n")
        guard
            let header = lines.first(where: { $0.hasPrefix("+H:") })?.split(separator: ":").dropFirst().map(
                String.init),
            let column = header.firstIndex(of: String(blockSize)),
            let values = lines.first(where: { $0.hasPrefix("+F:") })?.split(separator: ":").dropFirst(3).map(
                String.init),
            column < values.count, let value = Double(values[column])
        else { throw FixtureError("cannot read the \(blockSize)-byte column from openssl speed:\n\(output)") }
        return value
    }

    /// `-mr` output for ECDH: `+F5:<n>:<bits>:<ops/s>:<seconds/op>`.
    static func parseECDH(_ output: String) throws -> Double {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("+F5:") }),
            case let fields = line.split(separator: ":"), fields.count >= 4, let value = Double(fields[3])
        else { throw FixtureError("cannot read X25519 ops/s from openssl speed:\n\(output)") }
        return value
    }
}
