import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import Testing

@testable import SSHPairingHost

@Suite struct LineFormatTests {
    static let key = SSHPublicKey(ed25519: try! Ed25519PrivateKey(seed: [UInt8](repeating: 9, count: 32)).publicKey)

    @Test func theOneTimeLineIsExactlyTheInteropFormat() throws {
        let id = try #require(PairingID(text: "AAECAwQFBgcICQoLDA0ODw"))
        let expiry = Date(timeIntervalSince1970: 1_800_000_000)
        let line = try OneTimeKeyLine(
            pairingID: id, expiresAt: expiry, helperPath: "/usr/local/bin/herdr-pair",
            stateDirectory: "/home/james/.local/state/herdr-pair/AAECAwQFBgcICQoLDA0ODw", publicKey: Self.key)
        let stamp = LocalTime.expiryTimeString(expiry)
        #expect(
            line.text
                == "restrict,expiry-time=\"\(stamp)\",from=\"100.64.0.0/10,fd7a:115c:a1e0::/48,127.0.0.1,::1\","
                + "command=\"/usr/local/bin/herdr-pair --enroll=AAECAwQFBgcICQoLDA0ODw "
                + "--state=/home/james/.local/state/herdr-pair/AAECAwQFBgcICQoLDA0ODw\" "
                + "\(Self.key.openSSHString) herdr-pair:AAECAwQFBgcICQoLDA0ODw")
        let info = try #require(OneTimeKeyLineInfo(line: line.text))
        #expect(info.pairingID == id)
        #expect(info.expiresAt == expiry)
        #expect(info.stateDirectory == "/home/james/.local/state/herdr-pair/AAECAwQFBgcICQoLDA0ODw")
        let entry = try #require(AuthorizedKeysEntry(line: line.text))
        #expect(entry.options.map(\.name) == ["restrict", "expiry-time", "from", "command"])
        #expect(entry.comment == "herdr-pair:AAECAwQFBgcICQoLDA0ODw")
    }

    @Test func expiryTimeIsLocalTime() throws {
        let saved = getenv("TZ").map { String(cString: $0) }
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        setenv("TZ", "UTC", 1)
        tzset()
        let date = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15 08:00:00 UTC
        #expect(LocalTime.expiryTimeString(date) == "20270115080000")
        #expect(LocalTime.dateString(date) == "2027-01-15")
        setenv("TZ", "America/New_York", 1)
        tzset()
        #expect(LocalTime.expiryTimeString(date) == "20270115030000")
        #expect(LocalTime.parseExpiryTime("20270115030000") == date)
        #expect(LocalTime.parseExpiryTime("20270115080000Z") == date)
        #expect(LocalTime.parseExpiryTime("202701150300") == date)
        for bad in ["", "2027", "2027011503000", "20271315030000", "2027011503000x", "20270115250000"] {
            #expect(LocalTime.parseExpiryTime(bad) == nil, "\(bad)")
        }
    }

    @Test func pathsThatNeedQuotingAreQuotedAndUnsafeOnesRefused() throws {
        let id = PairingID.random()
        let spaced = try OneTimeKeyLine(
            pairingID: id, expiresAt: Date(), helperPath: "/Users/James Volpe/bin/herdr-pair",
            stateDirectory: "/Users/James Volpe/.local/state/herdr-pair/\(id.text)", publicKey: Self.key)
        #expect(spaced.command.hasPrefix("'/Users/James Volpe/bin/herdr-pair' --enroll="))
        #expect(
            OneTimeKeyLineInfo(line: spaced.text)?.stateDirectory
                == "/Users/James Volpe/.local/state/herdr-pair/\(id.text)")
        for bad in ["relative/herdr-pair", "/a\"b", "/a'b", "/a\\b", "/a\nb", "/a\u{7}b", ""] {
            #expect(throws: HostError.self, "\(bad.debugDescription)") {
                try OneTimeKeyLine(
                    pairingID: id, expiresAt: Date(), helperPath: bad, stateDirectory: "/s", publicKey: Self.key)
            }
        }
    }

    @Test func onlyHerdrPairLinesAreRecognised() {
        let id = PairingID.random().text
        let other = PairingID.random().text
        let notOurs = [
            "ssh-ed25519 AAAA herdr-pair:\(id)",  // no forced command
            "command=\"/bin/herdr-pair --enroll=\(other)\" ssh-ed25519 AAAA herdr-pair:\(id)",  // another id
            "command=\"/bin/herdr-pair --enroll=\(id)\" ssh-ed25519 AAAA herdr-pair:short",
            "command=\"/bin/herdr-pair --enroll=\(id)\" ssh-ed25519 AAAA someone",
            "# command=\"/bin/herdr-pair --enroll=\(id)\" ssh-ed25519 AAAA herdr-pair:\(id)",
            "",
        ]
        for line in notOurs { #expect(OneTimeKeyLineInfo(line: line) == nil, "\(line)") }
        // The original helper's line (python, other paths, no state we know) still counts.
        let original =
            "restrict,expiry-time=\"20200101000000\",from=\"100.64.0.0/10\",command=\"python3 /opt/herdr-pair.py --enroll=\(id) --state=/x/y\" ssh-ed25519 AAAA herdr-pair:\(id)"
        let info = OneTimeKeyLineInfo(line: original)
        #expect(info?.stateDirectory == "/x/y")
        #expect(info?.expiresAt == LocalTime.parseExpiryTime("20200101000000"))
    }

    @Test func authorizedKeysEntriesSplitAsSSHDSplitsThem() throws {
        let quoted = try #require(
            AuthorizedKeysEntry(
                line: #"from="10.0.0.1,10.0.0.2",command="echo \"hi, there\"",no-pty ssh-ed25519 AAAA a comment  here"#)
        )
        #expect(
            quoted.options == [
                .init(name: "from", value: "10.0.0.1,10.0.0.2"), .init(name: "command", value: "echo \"hi, there\""),
                .init(name: "no-pty", value: nil),
            ])
        #expect(quoted.keyType == "ssh-ed25519")
        #expect(quoted.keyData == "AAAA")
        #expect(quoted.comment == "a comment  here")
        let plain = try #require(AuthorizedKeysEntry(line: "  ecdsa-sha2-nistp256 BBBB\r"))
        #expect(plain.options.isEmpty)
        #expect(plain.comment == "")
        for line in [
            "", "   ", "# ssh-ed25519 AAAA", "command=\"unterminated ssh-ed25519 AAAA", "restrict",
            "a,,b ssh-ed25519 AAAA",
        ] {
            #expect(AuthorizedKeysEntry(line: line) == nil, "\(line)")
        }
    }

    @Test("a blank carrying a combining mark still separates fields, as it does for sshd")
    func blankCarryingACombiningMarkSeparatesFields() throws {
        // Found by the authorized-keys-line fuzz target
        // (Fuzz/regressions/authorized-keys-line/space-carrying-a-combining-mark): " \u{331}" is one
        // Swift Character, so a Character-wise split read "ssh-ed25519 \u{331}AAAA" as one field.
        let entry = try #require(AuthorizedKeysEntry(line: "restrict ssh-ed25519 \u{331}AAAA ho\u{301}st"))
        #expect(entry.options == [.init(name: "restrict", value: nil)])
        #expect(entry.keyType == "ssh-ed25519")
        #expect(entry.keyData == "\u{331}AAAA")
        #expect(entry.comment == "ho\u{301}st")
        let quoted = try #require(AuthorizedKeysEntry(line: "command=\"a \u{331}b\" ssh-ed25519 AAAA"))
        #expect(quoted.option("command")?.value == "a \u{331}b")
        // A quote carrying a mark still opens a quoted stretch, so a line that never closes it is refused.
        #expect(AuthorizedKeysEntry(line: "command=\"\u{301}x ssh-ed25519 AAAA") == nil)
    }

    @Test func deviceLinesNameTheDeviceSafely() {
        let cases: [(String, String)] = [
            ("James’s iPhone", "James-s-iPhone"), ("iPad Pro 13\"", "iPad-Pro-13-"), ("a.b_c@d-e", "a.b_c@d-e"),
            ("  spaced   out  ", "-spaced-out-"), ("日本語", "-"), ("x\u{202E}y", "x-y"),
        ]
        for (name, safe) in cases { #expect(DeviceKeyLine.safeName(name) == safe, "\(name)") }
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(
            DeviceKeyLine.text(key: Self.key, deviceName: "James’s iPhone", date: date)
                == "\(Self.key.openSSHString) herdr-ios:James-s-iPhone:\(LocalTime.dateString(date))")
    }

    @Test func pairingIDsAreCanonicalAndNeverStartWithADash() {
        for _ in 0..<200 {
            let id = PairingID.random()
            #expect(id.text.count == 22)
            #expect(!id.text.hasPrefix("-"))
            #expect(PairingID(text: id.text) == id)
        }
        #expect(PairingID(text: "-AECAwQFBgcICQoLDA0ODw") == nil)
        #expect(PairingID(text: "AAECAwQFBgcICQoLDA0ODx") == nil)  // not canonical (low bits set)
        #expect(PairingID(text: "AAECAwQFBgcICQoLDA0OD") == nil)
        #expect(PairingID(text: "AAECAwQFBgcICQoLDA0OD/") == nil)
    }
}
