import Foundation
import Glibc
import HerdrKit
import SSHPairingHost
import TestSupport
import Testing

/// The program's options, host discovery through a recorded `tailscale status --json`, the QR code it
/// draws, and the enroll mode's refusal to be pointed anywhere else.
@Suite(.serialized) struct CommandLineTests {
    // MARK: Usage errors (64)

    @Test func testModeNeedsTheEnvironmentVariable() throws {
        let fixture = try PairFixture()
        var environment = fixture.environment()
        environment["HERDR_PAIR_TEST_MODE"] = nil
        let result = try fixture.runProgram(["--test-mode", "--host", "studio"], environment: environment)
        #expect(result.status == 64)
        #expect(result.stderr.contains("HERDR_PAIR_TEST_MODE=1"))
        environment["HERDR_PAIR_TEST_MODE"] = "yes"
        #expect(try fixture.runProgram(["--test-mode", "--host", "studio"], environment: environment).status == 64)
        #expect(try fixture.contents() == PairFixture.baseline)
    }

    @Test func badOptionsAreUsageErrors() throws {
        let fixture = try PairFixture()
        let rsa = fixture.scratch.file("rsa_host_key")
        try sshKeygen(["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", rsa.path])
        chmod(fixture.scratch.path, 0o755)
        let cases: [([String], String)] = [
            (["--host", "127.0.0.1"], "--host '127.0.0.1'"),
            (["--host", "my mac"], "--host 'my mac'"),
            (["--host", "studio.example.com"], "studio.example.com"),
            (["--host", "a", "--host", "b", "--host", "c", "--host", "d", "--host", "e"], "at most 4"),
            (["--host", "studio", "--lifetime", "601"], "--lifetime"),
            (["--host", "studio", "--lifetime", "2"], "--lifetime"),
            (["--host", "studio", "--session", "a b"], "--session"),
            (["--host", "studio", "--port", "0"], "--port"),
            (["--host", "studio", "--host-key", rsa.path + ".pub"], "not an Ed25519 or ECDSA key"),
            (["--host", "studio", "--host-key", "/nonexistent.pub"], "--host-key /nonexistent.pub"),
            (["--host", "studio", "--test-approval-timeout", "5"], "needs --test-mode"),
            (["--enroll", "AAAAAAAAAAAAAAAAAAAAAA"], "go together"),
            (["--state", "/tmp"], "go together"),
            (["--enroll", "AAAAAAAAAAAAAAAAAAAAAA", "--state", "/tmp", "--host", "x"], "cannot be combined"),
            // herdr-pair has no subcommands: a word is refused beside --help as alone.
            (["agents"], "error: unexpected argument 'agents'. See 'herdr-pair --help'."),
            (["agents", "--help"], "error: unexpected argument 'agents'. See 'herdr-pair --help'."),
        ]
        for (arguments, message) in cases {
            let result = try fixture.runProgram(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(try fixture.contents() == PairFixture.baseline)
        #expect(fixture.stateEntries().isEmpty)
    }

    @Test func withoutTailscaleAHostIsRequired() throws {
        let fixture = try PairFixture()
        let result = try fixture.runProgram(["--test-mode", "--authorized-keys", fixture.authorizedKeys.path])
        #expect(result.status == 64)
        #expect(result.stderr.contains("tailscale is not installed"))
        #expect(result.stderr.contains("--host"))
        #expect(try fixture.contents() == PairFixture.baseline)
    }

    // MARK: tailscale

    static let recordedStatus = """
        {
          "Version": "1.76.6-t8c6f5dcd3-g7ea2ff5cd",
          "TUN": true,
          "BackendState": "Running",
          "HaveNodeKey": true,
          "AuthURL": "",
          "TailscaleIPs": ["100.101.102.103", "fd7a:115c:a1e0::6b01:6667"],
          "Self": {
            "ID": "nTx7Q2CNTRL",
            "PublicKey": "nodekey:5c1f0e8f4bd2a1f1bb0e0d8f7e9b2f4a1c3d5e7f9a0b2c4d6e8f0a1b3c5d7e9f",
            "HostName": "James's Mac Studio",
            "DNSName": "Studio.tail1234.ts.net.",
            "OS": "macOS",
            "UserID": 123456789,
            "TailscaleIPs": ["100.101.102.103", "fd7a:115c:a1e0::6b01:6667"],
            "AllowedIPs": ["100.101.102.103/32", "fd7a:115c:a1e0::6b01:6667/128"],
            "Addrs": ["192.168.1.20:41641"],
            "Online": true,
            "ExitNode": false,
            "Active": true
          },
          "Health": [],
          "MagicDNSSuffix": "tail1234.ts.net",
          "CurrentTailnet": {"Name": "james@example.com", "MagicDNSSuffix": "tail1234.ts.net", "MagicDNSEnabled": true},
          "Peer": {
            "nodekey:aa": {"HostName": "iphone", "DNSName": "iphone.tail1234.ts.net.", "TailscaleIPs": ["100.64.1.2"]}
          }
        }
        """

    /// A directory the test user can search, holding a `tailscale` that prints `json` for `status --json`.
    static func fakeTailscale(printing json: String, exitStatus: Int = 0) throws -> TemporaryDirectory {
        let bin = try TemporaryDirectory(prefix: "herdr-fake-tailscale-", mode: 0o755)
        let script = """
            #!/bin/sh
            if [ "$1" = status ] && [ "$2" = --json ]; then
            cat <<'JSON'
            \(json)
            JSON
            exit \(exitStatus)
            fi
            echo "fake tailscale: unexpected arguments: $*" >&2
            exit 2

            """
        try writeText(script, to: bin.file("tailscale"))
        chmod(bin.file("tailscale").path, 0o755)
        return bin
    }

    @Test func hostNamesComeFromTailscale() throws {
        let fixture = try PairFixture()
        let bin = try Self.fakeTailscale(printing: Self.recordedStatus)
        let helper = try fixture.startHelper(hosts: [], path: "\(bin.path):/usr/bin:/bin")
        let payload = try helper.ready()
        #expect(payload.hostnames == ["studio.tail1234.ts.net", "100.101.102.103", "studio"])
        #expect(payload.computerName == "James's Mac Studio")
        helper.signal(SIGINT)
        #expect(try helper.exitStatus() == 130)
        #expect(try fixture.contents() == PairFixture.baseline)
    }

    @Test func explicitHostsWinOverTailscale() throws {
        let fixture = try PairFixture()
        let bin = try Self.fakeTailscale(printing: Self.recordedStatus)
        let helper = try fixture.startHelper(
            hosts: ["100.64.0.7", "Mac.Tail1234.TS.net."], path: "\(bin.path):/usr/bin:/bin")
        let payload = try helper.ready()
        #expect(payload.hostnames == ["100.64.0.7", "mac.tail1234.ts.net"])
        helper.signal(SIGTERM)
        #expect(try helper.exitStatus() == 143)
    }

    @Test func aStoppedOrFailingTailscaleIsAUsageError() throws {
        let fixture = try PairFixture()
        let stopped = try Self.fakeTailscale(printing: #"{"BackendState": "Stopped", "Self": {"DNSName": ""}}"#)
        let result = try fixture.runProgram(
            ["--test-mode", "--authorized-keys", fixture.authorizedKeys.path],
            environment: fixture.environment(path: "\(stopped.path):/usr/bin:/bin"))
        #expect(result.status == 64)
        #expect(result.stderr.contains("Tailscale is Stopped"))
        let failing = try Self.fakeTailscale(printing: "", exitStatus: 1)
        let failed = try fixture.runProgram(
            ["--test-mode", "--authorized-keys", fixture.authorizedKeys.path],
            environment: fixture.environment(path: "\(failing.path):/usr/bin:/bin"))
        #expect(failed.status == 64)
        #expect(failed.stderr.contains("tailscale status failed"))
        #expect(try fixture.contents() == PairFixture.baseline)
    }

    // MARK: The QR code

    @Test func theQRCodeDecodesToExactlyTheURL() throws {
        let fixture = try PairFixture()
        let helper = try fixture.startHelper(["--lifetime", "3", "--session", "herdr-ios-test"])
        let readyLine = try helper.nextLine()
        #expect(try helper.exitStatus(timeout: 15) == 4)
        let url = String(readyLine.dropFirst("READY ".count))
        let image = fixture.scratch.file("code.pgm")
        let size = try QRText.writePGM(fromStderr: helper.stderrText(), to: image)
        #expect(size.modules >= 21 + 8)
        let decoded = try ProcessRunner.run("zbarimg", ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", image.path], timeout: 30)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdout.trimmingCharacters(in: .newlines) == url)
    }

    // MARK: Enroll mode cannot be pointed elsewhere

    @Test func enrollModeRefusesStateOutsideItsOwnDirectories() throws {
        let fixture = try PairFixture()
        let id = PairingID.random().text
        let home = fixture.server.homeDirectory.path
        let victim = try TemporaryDirectory(prefix: "herdr-victim-", mode: 0o777)
        try FileManager.default.createDirectory(
            atPath: victim.path + "/herdr-pair/" + id, withIntermediateDirectories: true)
        _ = try ProcessRunner.run("chown", ["-R", "\(fixture.user.uid):\(fixture.user.gid)", victim.path], check: true)
        chmod(victim.path + "/herdr-pair", 0o700)
        chmod(victim.path + "/herdr-pair/" + id, 0o700)

        // A real helper's directory, to misuse below.
        let helper = try fixture.startHelper()
        let code = try helper.ready()
        let realDirectory = fixture.stateBase + "/" + code.pairingIDText
        let link = fixture.stateBase + "/" + id
        guard symlink(realDirectory, link) == 0 else { throw FixtureError("symlink failed") }
        lchown(link, fixture.user.uid, fixture.user.gid)

        let refused: [(String, String)] = [
            ("-rf", realDirectory),
            (id, victim.path + "/herdr-pair/" + id),  // the right shape, outside the user's state directory
            (id, "/tmp/" + id),
            (id, fixture.stateBase + "/../herdr-pair/" + id),
            (id, "herdr-pair/" + id),
            (id, link),  // a symlink to another pairing's directory
            (id, realDirectory),  // another pairing's directory under this id
            (code.pairingIDText, realDirectory + "/"),
            (code.pairingIDText + "A", realDirectory + "A"),
        ]
        for (enrollID, state) in refused {
            let before = try listing(victim.path) + listing(fixture.stateBase)
            let result = try fixture.runProgram(
                ["--enroll=\(enrollID)", "--state=\(state)"], input: TestDevice().requestInput)
            #expect(result.stdout == "INVALID\n", "\(enrollID) \(state): \(result.stderr)")
            #expect(result.status == 2)
            #expect(try listing(victim.path) + listing(fixture.stateBase) == before)
        }
        // A state directory that is gone means the pairing is over.
        let gone = try fixture.runProgram(
            ["--enroll=\(id)", "--state=\(home)/.local/state/herdr-pair/\(id)x"], input: "")
        #expect(gone.stdout == "INVALID\n")
        unlink(link)
        let over = try fixture.runProgram(["--enroll=\(id)", "--state=\(fixture.stateBase)/\(id)"], input: "")
        #expect(over.stdout == "EXPIRED\n")
        #expect(over.status == 4)

        // A directory with a wider mode is refused even in the right place.
        chmod(realDirectory, 0o755)
        let wide = try fixture.runProgram(
            ["--enroll=\(code.pairingIDText)", "--state=\(realDirectory)"], input: TestDevice().requestInput)
        #expect(wide.stdout == "INVALID\n")
        chmod(realDirectory, 0o700)
        helper.signal(SIGINT)
        #expect(try helper.exitStatus() == 130)
        #expect(try fixture.contents() == PairFixture.baseline)
    }

    private func listing(_ path: String) throws -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
        return enumerator.compactMap { $0 as? String }.sorted()
    }
}

/// Turns the half-block QR text a helper printed into a grayscale image zbarimg can read.
enum QRText {
    /// Finds the block of lines made only of ` ▀▄█`, draws light modules white and dark ones black
    /// (the terminal convention: blocks are the light foreground), 8 pixels per module.
    static func writePGM(fromStderr text: String, to url: URL, scale: Int = 8) throws -> (modules: Int, rows: Int) {
        let glyphs: Set<Character> = [" ", "▀", "▄", "█"]
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.firstIndex(where: { !$0.isEmpty && $0.allSatisfy(glyphs.contains) && $0.contains("█") })
        else {
            throw FixtureError("no QR code in the helper's stderr")
        }
        let block = lines[first...].prefix { !$0.isEmpty && $0.allSatisfy(glyphs.contains) }
        var rows: [[Bool]] = []
        for line in block {
            var top: [Bool] = []
            var bottom: [Bool] = []
            for glyph in line {
                top.append(glyph == "█" || glyph == "▀")
                bottom.append(glyph == "█" || glyph == "▄")
            }
            rows += [top, bottom]
        }
        let width = rows[0].count
        guard rows.allSatisfy({ $0.count == width }) else { throw FixtureError("ragged QR lines") }
        var bytes = Array("P5 \(width * scale) \(rows.count * scale) 255\n".utf8)
        for row in rows {
            let pixels = row.flatMap { light in [UInt8](repeating: light ? 255 : 0, count: scale) }
            for _ in 0..<scale { bytes += pixels }
        }
        try Data(bytes).write(to: url)
        return (width, rows.count)
    }
}

/// Without `--authorized-keys`, `--port` or `--host-key`, the helper asks the system's sshd (`sshd -T`
/// run as the test user, which needs the throwaway host key) and falls back to /etc/ssh's keys.
@Suite(.serialized) struct SSHDDiscoveryTests {
    @Test func sshdSettingsAreFoundWithoutRoot() throws {
        let fixture = try PairFixture()
        let sshdConfig = try readText(URL(fileURLWithPath: "/etc/ssh/sshd_config"))
        let configuredPort =
            sshdConfig.split(separator: "\n").first { $0.hasPrefix("Port ") }.flatMap { Int($0.dropFirst(5)) } ?? 22
        let helper = try Helper(
            fixture: fixture, arguments: ["--test-mode", "--host", "studio", "--lifetime", "3"], path: nil)
        let payload = try helper.ready()
        #expect(payload.port == configuredPort)
        let expected = HostKeyFingerprints.fingerprints(ofPublicKeyFiles: HostKeyFingerprints.defaultPublicKeyFiles)
        #expect(payload.hostKeyFingerprints == expected)
        // Debian's AuthorizedKeysFile is .ssh/authorized_keys under HOME: made 0700/0600 for the line.
        let ssh = fixture.server.homeDirectory.path + "/.ssh"
        #expect(try fileMode(ssh) == 0o700)
        #expect(try fileMode(ssh + "/authorized_keys") == 0o600)
        #expect(
            try readText(URL(fileURLWithPath: ssh + "/authorized_keys")).contains("herdr-pair:\(payload.pairingIDText)")
        )
        #expect(try helper.exitStatus(timeout: 15) == 4)
        #expect(try readText(URL(fileURLWithPath: ssh + "/authorized_keys")) == "")
        #expect(try fixture.contents() == PairFixture.baseline)
        let leftovers =
            (try? FileManager.default.contentsOfDirectory(atPath: "/tmp"))?.filter { $0.hasPrefix("herdr-pair-sshd-") }
            ?? []
        #expect(leftovers.isEmpty)
    }
}
