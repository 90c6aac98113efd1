import Foundation
import Glibc
import PeerGate
import Testing

/// An independent classifier for the property test: the same written rules, built another way
/// (inet_pton into in_addr/in6_addr, then 32- and 64-bit masks), sharing no code with PeerGate.
enum ReferenceClassifier {
    static func kind(_ text: String) -> PeerKind {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 61, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return .malformed }
        var address = bytes[...]
        var scoped = false
        if let percent = bytes.firstIndex(of: UInt8(ascii: "%")) {
            address = bytes[..<percent]
            let scope = bytes[(percent + 1)...]
            guard !scope.isEmpty, scope.count <= 15, !scope.contains(UInt8(ascii: "%")) else { return .malformed }
            scoped = true
        }
        guard address.count <= 45 else { return .malformed }
        let cString = address.map { CChar(bitPattern: $0) } + [0]
        var v4 = in_addr()
        if inet_pton(AF_INET, cString, &v4) == 1 {
            return scoped ? .malformed : kind4(UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, cString, &v6) == 1 else { return .malformed }
        let raw = withUnsafeBytes(of: v6) { Array($0) }
        let high = raw[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = raw[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        if high == 0 && low >> 32 == 0xffff { return kind4(UInt32(truncatingIfNeeded: low)) }
        if high == 0 && low == 1 { return .loopback }
        if high & 0xffc0_0000_0000_0000 == 0xfe80_0000_0000_0000 { return .linkLocal }
        if high & 0xffff_ffff_ffff_0000 == 0xfd7a_115c_a1e0_0000 { return .tailnet }
        if high & 0xfe00_0000_0000_0000 == 0xfc00_0000_0000_0000 { return .uniqueLocal }
        return .public
    }

    static func kind4(_ value: UInt32) -> PeerKind {
        if value & 0xff00_0000 == 0x7f00_0000 { return .loopback }
        if value & 0xff00_0000 == 0x0a00_0000 { return .private }
        if value & 0xfff0_0000 == 0xac10_0000 { return .private }
        if value & 0xffff_0000 == 0xc0a8_0000 { return .private }
        if value & 0xffff_0000 == 0xa9fe_0000 { return .linkLocal }
        if value & 0xffc0_0000 == 0x6440_0000 { return .tailnet }
        return .public
    }
}

/// SplitMix64: small, fast, and the same sequence for the same seed everywhere.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// Text shaped like the addresses a socket, a header or an attacker might hand the classifier.
struct AddressTextGenerator {
    var random: SplitMix64

    /// IPv4 edges: the first address of each range and of the next block, and their neighbours.
    static let edges4: [UInt32] = [
        0x7f00_0000, 0x8000_0000, 0x0a00_0000, 0x0b00_0000, 0xac10_0000, 0xac20_0000, 0xc0a8_0000, 0xc0a9_0000,
        0xa9fe_0000, 0xa9ff_0000, 0x6440_0000, 0x6480_0000, 0x0000_0000,
    ]
    /// IPv6 prefixes near the ranges' edges (first bytes; the rest random).
    static let prefixes6: [[UInt8]] = [
        [0xfe, 0x80], [0xfe, 0xbf], [0xfe, 0xc0], [0xfe, 0x7f], [0xfc, 0x00], [0xfb, 0xff], [0xfd, 0xff], [0xfe, 0x00],
        [0xfd, 0x7a, 0x11, 0x5c, 0xa1, 0xe0], [0xfd, 0x7a, 0x11, 0x5c, 0xa1, 0xdf],
        [0xfd, 0x7a, 0x11, 0x5c, 0xa1, 0xe1],
        [0x20, 0x01, 0x0d, 0xb8], [],
    ]
    static let scopes = [
        "eth0", "en0", "1", "tailscale0", "", "%x", String(repeating: "s", count: 15),
        String(repeating: "s", count: 16), "a b",
    ]
    static let garbageAlphabet = Array("0123456789abcdefABCDEFxg:.%/[] -\u{0}\u{7f}é\n")

    mutating func next() -> String {
        switch random.next() % 8 {
        case 0, 1: return scoped(dotted(ipv4()))
        case 2: return scoped(mapped(ipv4()))
        case 3, 4: return scoped(ipv6Text(ipv6()))
        case 5: return garbage()
        default: return mutate(random.next() % 2 == 0 ? dotted(ipv4()) : ipv6Text(ipv6()))
        }
    }

    mutating func ipv4() -> UInt32 {
        if random.next() % 3 == 0 { return UInt32(truncatingIfNeeded: random.next()) }
        let edge = Self.edges4[Int(random.next() % UInt64(Self.edges4.count))]
        let delta = Int32(truncatingIfNeeded: random.next() % 7) - 3
        return edge &+ UInt32(bitPattern: delta)
    }

    mutating func ipv6() -> [UInt8] {
        var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        switch random.next() % 6 {
        case 0:
            bytes = [UInt8](repeating: 0, count: 15) + [UInt8(random.next() % 3)]  // ::, ::1, ::2
        case 1, 2, 3, 4:
            let prefix = Self.prefixes6[Int(random.next() % UInt64(Self.prefixes6.count))]
            bytes.replaceSubrange(0..<prefix.count, with: prefix)
            if random.next() % 3 == 0 {
                bytes.replaceSubrange(prefix.count..<16, with: [UInt8](repeating: 0, count: 16 - prefix.count))
            }
        default:
            break
        }
        return bytes
    }

    func dotted(_ value: UInt32) -> String {
        [24, 16, 8, 0].map { String((value >> UInt32($0)) & 0xff) }.joined(separator: ".")
    }

    mutating func mapped(_ value: UInt32) -> String {
        switch random.next() % 4 {
        case 0: return "::ffff:" + dotted(value)
        case 1: return "::FFFF:" + dotted(value)
        case 2: return "0:0:0:0:0:ffff:" + dotted(value)
        default: return String(format: "::ffff:%x:%x", value >> 16, value & 0xffff)
        }
    }

    /// Canonical (inet_ntop), fully written with leading zeros, or upper case.
    mutating func ipv6Text(_ bytes: [UInt8]) -> String {
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        switch random.next() % 3 {
        case 0: return groups.map { String(format: "%04x", $0) }.joined(separator: ":")
        case 1: return canonical(bytes).uppercased()
        default: return canonical(bytes)
        }
    }

    func canonical(_ bytes: [UInt8]) -> String {
        var text = [CChar](repeating: 0, count: 64)
        _ = bytes.withUnsafeBytes { inet_ntop(AF_INET6, $0.baseAddress, &text, 64) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    mutating func scoped(_ text: String) -> String {
        guard random.next() % 4 == 0 else { return text }
        return text + "%" + Self.scopes[Int(random.next() % UInt64(Self.scopes.count))]
    }

    mutating func garbage() -> String {
        let length = Int(random.next() % 70)
        return String(
            (0..<length).map { _ in Self.garbageAlphabet[Int(random.next() % UInt64(Self.garbageAlphabet.count))] })
    }

    /// One character inserted, deleted or replaced.
    mutating func mutate(_ text: String) -> String {
        var characters = Array(text)
        let position = Int(random.next() % UInt64(characters.count + 1))
        let replacement = Self.garbageAlphabet[Int(random.next() % UInt64(Self.garbageAlphabet.count))]
        switch random.next() % 3 {
        case 0: characters.insert(replacement, at: position)
        case 1: if position < characters.count { characters.remove(at: position) }
        default: if position < characters.count { characters[position] = replacement }
        }
        return String(characters)
    }
}

@Suite("Classifier against an independent reference")
struct ClassifierPropertyTests {
    /// Fixed so a failure reproduces; `PEERGATE_FUZZ_SEED` replays another run.
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["PEERGATE_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x4845_5244_5247_4154
    static let iterations = 50_000

    @Test("random addresses, mapped forms, scopes and garbage agree with the reference")
    func agreesWithReference() {
        var generator = AddressTextGenerator(random: SplitMix64(seed: Self.seed))
        var seen: [PeerKind: Int] = [:]
        var failures = 0
        for iteration in 0..<Self.iterations {
            let text = generator.next()
            let expected = ReferenceClassifier.kind(text)
            let actual = PeerClassification(text)
            seen[expected, default: 0] += 1
            if actual.kind != expected {
                failures += 1
                Issue.record(
                    "seed \(Self.seed) iteration \(iteration): \(text.debugDescription) is \(actual.kind), reference says \(expected)"
                )
                if failures >= 20 { return }
            }
            // A parsed address printed canonically means the same thing again.
            if let address = actual.address, PeerKind(peer: address.description) != actual.kind {
                Issue.record("seed \(Self.seed) iteration \(iteration): \(address) re-parses to another kind")
            }
        }
        // The generator must reach every kind often, or the agreement proves little.
        for kind in PeerKind.allCases {
            #expect(
                seen[kind, default: 0] >= 200,
                "seed \(Self.seed): only \(seen[kind, default: 0]) \(kind.rawValue) inputs")
        }
    }

    @Test("CIDR membership agrees with masks on random addresses")
    func cidrMembership() throws {
        var random = SplitMix64(seed: Self.seed ^ 0xc1d2)
        for iteration in 0..<5_000 {
            let value = UInt32(truncatingIfNeeded: random.next())
            let length = Int(random.next() % 33)
            let mask: UInt32 = length == 0 ? 0 : ~UInt32(0) << UInt32(32 - length)
            let network = value & mask
            let probe = random.next() % 2 == 0 ? value : UInt32(truncatingIfNeeded: random.next())
            let block = try CIDRBlock(parsing: "\(Self.text(network))/\(length)")
            let inside = block.contains(IPAddress(numeric: Self.text(probe))!)
            #expect(
                inside == (probe & mask == network),
                "seed \(Self.seed) iteration \(iteration): \(Self.text(probe)) in \(block)")
            let mappedInside = block.contains(IPAddress(numeric: "::ffff:" + Self.text(probe))!)
            #expect(mappedInside == inside, "mapped form of \(Self.text(probe)) judged differently")
        }
    }

    static func text(_ value: UInt32) -> String {
        [24, 16, 8, 0].map { String((value >> UInt32($0)) & 0xff) }.joined(separator: ".")
    }
}
