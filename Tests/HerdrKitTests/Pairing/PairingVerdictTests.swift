import Foundation
import TestSupport
import Testing

@testable import HerdrKit

/// The helper's answer (last non-empty stdout line, token over status) and the device name rule,
/// as pure functions.
@Suite("Pairing verdict and device name")
struct PairingVerdictTests {
    typealias Verdict = Pairing.Verdict

    /// The 16 cases of the transport record's verdict table.
    static let table: [(stdout: String, status: Int?, verdict: Verdict)] = [
        ("OK\n", 0, .approved),
        ("OK\r\n", 0, .approved),  // CRLF
        ("Welcome to the computer\nOK\n", 0, .approved),  // a banner before the token
        ("OK", 0, .approved),  // no final newline
        ("OK\n", 1, .failed),  // OK needs exit 0
        ("OK\n", nil, .failed),  // OK with no exit status
        ("DENIED\n", 3, .denied),
        ("DENIED\r\n", 1, .denied),  // a PowerShell default shell turns 3 into 1
        ("EXPIRED\r\n", 1, .expired),
        ("USED\r\n", 1, .used),
        ("", 3, .denied),  // a bare status still counts
        ("", 4, .expired),
        ("", 5, .used),
        ("INVALID\n", 2, .invalid),
        ("OK\nsomething else\n", 0, .failed),  // the last line decides
        ("OK\n\n   \r\n\n", 0, .approved),  // blank lines after the token do not count
    ]

    @Test("the 16-case verdict table", arguments: 0..<16)
    func verdictTable(row: Int) {
        let (stdout, status, expected) = Self.table[row]
        #expect(
            Verdict.decide(stdout: Array(stdout.utf8), status: status) == expected,
            "\(stdout.debugDescription) status \(String(describing: status))")
    }

    @Test("more edges of the rule")
    func moreEdges() {
        let cases: [(String, Int?, Verdict)] = [
            ("", 0, .failed), ("", 1, .failed), ("", 2, .failed), ("", nil, .failed), ("", 130, .failed),
            ("ok\n", 0, .failed), ("Ok\n", 0, .failed), ("OK.\n", 0, .failed), ("  OK  \n", 0, .approved),
            ("\tDENIED\t\r\n", 0, .denied), ("EXPIRED", 0, .expired), ("DENIED\nOK\n", 0, .approved),
            ("OK\nDENIED\n", 0, .denied), ("garbage\n", 3, .denied), ("garbage\n", 4, .expired),
            ("INVALID\n", 0, .invalid), ("INVALID\n", 3, .invalid), ("USED\n", 0, .used), ("\u{FF}\u{FE}\n", 5, .used),
            ("OK\r", 0, .approved), ("OK\r\nOK\r\n", 0, .approved),
        ]
        for (stdout, status, expected) in cases {
            #expect(
                Verdict.decide(stdout: Array(stdout.utf8), status: status) == expected,
                "\(stdout.debugDescription) \(String(describing: status))")
        }
        // Not valid UTF-8 is not a token.
        #expect(Verdict.decide(stdout: [0x4F, 0x4B, 0xFF, 0x0A], status: 0) == .failed)
    }

    // MARK: Device name

    @Test(
        "the device name: printable code points, plain spaces, at most 64",
        arguments: [
            ("Jane's iPhone", "Jane's iPhone"),
            ("Jane\u{00A0}Doe\u{2003}phone", "Jane Doe phone"),  // other spaces become a plain space
            ("tab\there\nnew\rline", "tabherenewline"),  // control characters are dropped
            ("\u{202E}evil\u{200F}\u{200B}\u{FEFF}name\u{2066}", "evilname"),  // format characters are dropped
            ("a\u{2028}b\u{2029}c", "a b c"),  // line and paragraph separators are spaces
            ("nul\u{0}esc\u{1B}[31mbel\u{7}del\u{7F}", "nulesc[31mbeldel"),
            ("c1\u{85}\u{9B}x", "c1x"),
            ("private\u{E000}unassigned\u{0378}", "privateunassigned"),
            ("  padded  ", "padded"),
            ("e\u{301}", "e\u{301}"),  // combining marks stay
            ("👩‍💻 laptop", "👩💻 laptop"),  // the zero-width joiner is a format character
            ("", Pairing.fallbackDeviceName),
            ("\u{202E}\u{0}\u{200B}", Pairing.fallbackDeviceName),
            ("   ", Pairing.fallbackDeviceName),
        ])
    func deviceName(raw: String, expected: String) {
        #expect(Pairing.sanitizedDeviceName(raw) == expected)
    }

    @Test("a name left as a space carrying a combining mark is blank to the computer: the fallback is sent")
    func deviceNameBlankWithCombiningMark() {
        // Found by the enroll-lines fuzz target (Fuzz/regressions/enroll-lines/space-combining-mark):
        // the spaces around U+05BA were trimmed but the space it sits on is one character with it,
        // which the computer's rule counts as blank and answers INVALID.
        let raw = String(repeating: " ", count: 35) + "\u{05BA}\u{00A0}" + String(repeating: " ", count: 15)
        #expect(Pairing.sanitizedDeviceName(raw) == Pairing.fallbackDeviceName)
        #expect(Pairing.sanitizedDeviceName(" \u{301}") == Pairing.fallbackDeviceName)
        #expect(Pairing.sanitizedDeviceName(" \u{301}x") == " \u{301}x")
    }

    @Test("the device name is cut at 64 code points after dropping")
    func deviceNameLength() {
        #expect(Pairing.sanitizedDeviceName(String(repeating: "a", count: 70)) == String(repeating: "a", count: 64))
        #expect(Pairing.sanitizedDeviceName(String(repeating: "a", count: 64)) == String(repeating: "a", count: 64))
        let computers = String(repeating: "💻", count: 80)
        #expect(Pairing.sanitizedDeviceName(computers).unicodeScalars.count == 64)
        // Dropped characters do not count toward the limit.
        #expect(Pairing.sanitizedDeviceName(String(repeating: "\u{200B}", count: 100) + "phone") == "phone")
        // Flags are two code points each: 32 of them fit.
        let flags = String(repeating: "🇨🇭", count: 40)
        #expect(Pairing.sanitizedDeviceName(flags).unicodeScalars.count == 64)
        #expect(Pairing.sanitizedDeviceName(flags).count == 32)
    }

    @Test("every sanitized name passes the computer's rule (Python str.isprintable, 1-64 code points)")
    func printableForThePythonHelper() throws {
        let hostile = [
            "Jane\u{00A0}Doe", "\u{202E}evil", "a\u{2028}b", "nul\u{0}x", "\u{E000}pua", "\u{0378}x", "👩‍💻",
            String(repeating: "é", count: 100), "x\u{3000}y", "\u{1680}ogham", "a\u{200D}b", "c1\u{85}x", "\u{D7FF}",
            "\u{10FFFD}plane16", "\u{F0000}x", "",
        ]
        let names = hostile.map(Pairing.sanitizedDeviceName)
        let script = """
            import sys, json
            names = json.load(sys.stdin)
            bad = [n for n in names if not (n.isprintable() and 1 <= len(n) <= 64)]
            print(json.dumps(bad))
            """
        let input = try JSONEncoder().encode(names)
        let result = try ProcessRunner.run("python3", ["-c", script], input: [UInt8](input), timeout: 20)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }

    @Test("error text is ready for a person")
    func errorDescriptions() {
        let errors: [PairingError] = [
            .linkExpired, .conflictingPin(hostname: "100.64.0.1", port: 22),
            .hostKeyMismatch(hostname: "box", fingerprint: "SHA256:x"),
            .unreachable("Could not resolve host box"), .notOnTailnet(hostname: "box", address: "127.0.0.1"),
            .pairingKeyRejected,
            .denied(output: "DENIED"), .expired(output: ""), .used(output: ""), .failed(status: 2, output: "INVALID"),
            .failed(status: nil, output: ""), .cancelled,
        ]
        for error in errors {
            let text = error.errorDescription ?? ""
            #expect(!text.isEmpty)
            #expect(text == error.description)
            #expect(text.first?.isUppercase == true || text.first?.isNumber == true || text.hasPrefix("box"), "\(text)")
        }
        #expect(PairingError.notOnTailnet(hostname: "box", address: "127.0.0.1").description.contains("127.0.0.1"))
        #expect(
            PairingError.conflictingPin(hostname: "fd7a:115c:a1e0::1", port: 22).description.contains(
                "[fd7a:115c:a1e0::1]:22"))
        #expect(PairingError.failed(status: 2, output: "INVALID").description.contains("status 2"))
        #expect(
            PairingError.hostKeyMismatch(hostname: "box", fingerprint: "SHA256:abc").description.contains("SHA256:abc"))
    }
}
