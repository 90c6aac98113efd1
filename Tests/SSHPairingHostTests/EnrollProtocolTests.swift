import Foundation
import HerdrCrypto
import HerdrKit
import Testing

@testable import SSHPairingHost

@Suite struct EnrollProtocolTests {
    static let key = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey)

    @Test func tokensAndStatusesAreTheInteropTable() {
        #expect(
            EnrollOutcome.allCases.map { "\($0.token) \($0.exitStatus)" } == [
                "OK 0", "INVALID 2", "DENIED 3", "EXPIRED 4", "USED 5",
            ])
    }

    @Test func aGoodRequestParses() throws {
        let request = try EnrollRequest(keyLine: Self.key.openSSHString, nameLine: "James’s iPhone")
        #expect(request.deviceKey == Self.key)
        #expect(request.deviceKey.blob.count == EnrollRequest.keyBlobSize)
        #expect(try EnrollRequest(text: request.text) == request)
        // A comment after the key is ignored.
        #expect(try EnrollRequest(keyLine: Self.key.openSSHString + " phone@home", nameLine: "x").deviceKey == Self.key)
    }

    @Test func keysOtherThanA51ByteEd25519BlobAreRefused() throws {
        let blob = Self.key.blob
        let encoded = Data(blob).base64EncodedString()
        var wrongInner = blob
        wrongInner[14] = UInt8(ascii: "X")  // "ssh-ed2551X"
        let bad = [
            "", "ssh-ed25519", "ssh-ed25519 ", "ssh-rsa \(encoded)",
            "ssh-ed25519 \(Data(blob.dropLast()).base64EncodedString())",
            "ssh-ed25519 \(Data(blob + [0]).base64EncodedString())", "ssh-ed25519 \(encoded.dropLast())",
            "ssh-ed25519 \(Data(wrongInner).base64EncodedString())", "ssh-ed25519 \(encoded)=",
            "ssh-ed25519 !\(encoded.dropFirst())", " ssh-ed25519\t\(encoded)", "SSH-ED25519 \(encoded)",
        ]
        for line in bad {
            #expect(throws: EnrollRequestError.self, "\(line)") { try EnrollRequest(keyLine: line, nameLine: "n") }
        }
    }

    @Test func namesAreOneTo64PrintableCharacters() {
        let good = [
            "a", "James’s iPhone", String(repeating: "x", count: 64), String(repeating: "é", count: 64), "日本語のiPad",
            "a b",
        ]
        for name in good { #expect(EnrollRequest.isAcceptableName(name), "\(name)") }
        let bad = [
            "", " ", "   ", String(repeating: "x", count: 65), "tab\there", "bell\u{7}", "nul\u{0}", "rtl\u{202E}x",
            "zw\u{200B}j",
            "line\u{2028}sep", "\u{E000}private", "del\u{7F}", "no\u{A0}break",
            String(repeating: "e\u{301}", count: 33),  // 33 characters, 66 code points
        ]
        for name in bad { #expect(!EnrollRequest.isAcceptableName(name), "\(name.debugDescription)") }
    }

    @Test func theLineReaderTakesTwoBoundedLines() {
        var reader = EnrollLineReader()
        #expect(reader.append(Array("ssh-ed25519 AAAA\r".utf8)) == .needMore)
        #expect(reader.append(Array("\nna".utf8)) == .needMore)
        #expect(reader.append(Array("me\nextra bytes are ignored\n".utf8)) == .complete(["ssh-ed25519 AAAA", "name"]))

        var exact = EnrollLineReader()
        let full = String(repeating: "k", count: 1024)
        #expect(exact.append(Array("\(full)\n\(full)\n".utf8)) == .complete([full, full]))

        var long = EnrollLineReader()
        guard case .invalid = long.append(Array((String(repeating: "k", count: 1025) + "\n").utf8)) else {
            Issue.record("a 1025-byte line was accepted")
            return
        }
        var endless = EnrollLineReader()
        guard case .invalid = endless.append([UInt8](repeating: 0x41, count: 5000)) else {
            Issue.record("5000 bytes without a newline were buffered")
            return
        }
        var unterminated = EnrollLineReader()
        _ = unterminated.append(Array("key\nname".utf8))
        #expect(unterminated.finish() == .complete(["key", "name"]))
        var short = EnrollLineReader()
        _ = short.append(Array("key\n".utf8))
        guard case .invalid = short.finish() else {
            Issue.record("one line was accepted")
            return
        }
        var notUTF8 = EnrollLineReader()
        guard case .invalid = notUTF8.append([0xFF, 0x0A, 0x41, 0x0A]) else {
            Issue.record("invalid UTF-8 was accepted")
            return
        }
    }
}
