import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import TestSupport
import Testing

@testable import SSHPairingHost

@Suite struct DiscoveryAndQRTests {
    // MARK: tailscale status --json

    @Test func tailscaleNamesComeFQDNThenAddressThenShortName() throws {
        let json = """
            {"BackendState":"Running","Self":{"HostName":"James's Mac Studio","DNSName":"Studio.Tail1234.ts.net.",
             "TailscaleIPs":["fd7a:115c:a1e0::6b01:6667","100.101.102.103"]},"Peer":{}}
            """
        let status = try TailscaleStatus(json: Array(json.utf8))
        #expect(status.isRunning)
        #expect(status.pairingHostnames == ["studio.tail1234.ts.net", "100.101.102.103", "studio"])
        #expect(status.computerName == "James's Mac Studio")
    }

    @Test func namesThePhoneWouldRefuseAreLeftOut() throws {
        let custom = TailscaleStatus(
            backendState: "Running", dnsName: "box.example.com.", hostName: "box", addresses: ["100.64.0.9"])
        #expect(custom.pairingHostnames == ["100.64.0.9", "box"])
        let bare = TailscaleStatus(backendState: "Running", dnsName: nil, hostName: "My Box", addresses: ["10.0.0.1"])
        #expect(bare.pairingHostnames.isEmpty)
        #expect(bare.computerName == "My Box")
        let stopped = try TailscaleStatus(json: Array(#"{"BackendState":"Stopped","Self":null}"#.utf8))
        #expect(!stopped.isRunning)
        #expect(throws: HostError.self) { try TailscaleStatus(json: Array("not json".utf8)) }
    }

    @Test func hostNamesFollowThePhonesRule() {
        for name in ["studio", "studio.tail1234.ts.net", "100.64.0.1", "100.127.255.254", "fd7a:115c:a1e0::1"] {
            #expect(PairingHostNames.isAcceptable(name), "\(name)")
        }
        for name in [
            "", "127.0.0.1", "100.128.0.1", "10.1.2.3", "a.b", "x.example.com", "-bad", "has space", "a,b",
            "FD7A:115C:A1E0::1",
        ] {
            #expect(!PairingHostNames.isAcceptable(name), "\(name)")
        }
        #expect(PairingHostNames.canonical(" Studio.Tail1234.TS.NET. ") == "studio.tail1234.ts.net")
    }

    // MARK: sshd -T

    @Test func sshdTestOutputGivesPortsKeysAndAuthorizedKeys() {
        let output = """
            port 2222
            port 22
            addressfamily any
            hostkey /etc/ssh/ssh_host_rsa_key
            hostkey /etc/ssh/ssh_host_ed25519_key
            authorizedkeysfile .ssh/authorized_keys .ssh/authorized_keys2
            """
        let settings = SSHDSettings(testOutput: output)
        #expect(settings.ports == [2222, 22])
        #expect(settings.hostKeyFiles == ["/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ed25519_key"])
        #expect(settings.authorizedKeysPath(user: "j", home: "/home/j", uid: 1000) == "/home/j/.ssh/authorized_keys")
        #expect(
            SSHDSettings.expand("/etc/ssh/keys/%u.%U", user: "j", home: "/home/j", uid: 1000) == "/etc/ssh/keys/j.1000")
        #expect(SSHDSettings.expand("%h/.ssh/keys%%", user: "j", home: "/home/j", uid: 7) == "/home/j/.ssh/keys%")
        #expect(
            SSHDSettings(testOutput: "authorizedkeysfile none").authorizedKeysPath(user: "j", home: "/h", uid: 1) == nil
        )
    }

    @Test func sshdIsQueriedAsRoot() throws {
        guard ExternalCommand.find("sshd", extraDirectories: ["/usr/sbin"]) != nil else { return }
        // As root `sshd -T` runs directly; as any other user it needs the throwaway key (the
        // program-level test in HerdrPairTests runs that path as the test user). Either way sshd
        // wants its privilege separation directory, which a machine running sshd has and a fresh
        // container gets only when an sshd fixture has run first: made here, so order cannot matter.
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        let settings = try #require(SSHDSettings.query(user: "root", host: "studio", address: "100.64.0.1"))
        #expect(!settings.ports.isEmpty)
        #expect(!settings.hostKeyFiles.isEmpty)
        #expect(!settings.authorizedKeysFiles.isEmpty)
    }

    @Test func hostKeyFingerprintsAreEd25519AndECDSAOnly() throws {
        let directory = try TemporaryDirectory()
        for type in ["ed25519", "ecdsa", "rsa"] {
            try sshKeygen(["-q", "-t", type, "-N", "", "-f", directory.file(type).path])
        }
        let prints = HostKeyFingerprints.fingerprints(
            ofPublicKeyFiles: ["rsa", "ed25519", "missing", "ecdsa", "ed25519"].map { directory.file($0).path + ".pub" }
        )
        #expect(prints.count == 2)
        for (index, type) in ["ed25519", "ecdsa"].enumerated() {
            let listed = try sshKeygen(["-l", "-E", "sha256", "-f", directory.file(type).path + ".pub"]).stdout
            #expect(listed.split(separator: " ")[1] == Substring(prints[index]))
        }
        #expect(try HostKeyFingerprints.key(inPublicKeyFile: directory.file("rsa").path + ".pub") == nil)
        #expect(throws: HostError.self) { try HostKeyFingerprints.key(inPublicKeyFile: directory.file("rsa").path) }
    }
}
