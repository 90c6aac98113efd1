import Foundation
import Glibc
import HerdrAgents
import TestSupport
import Testing

@testable import HerdrWatch

/// herdr's directory as the watcher reads it, on a real file system.
@Suite struct HerdrScanTests {
    static func makeSocket(_ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw FixtureError("bind \(path): \(errno)") }
    }

    @Test func noProgramAndNoDirectoryIsNotInstalled() throws {
        let home = try TemporaryDirectory(prefix: "herdr-scan-")
        let scan = HerdrScan.read(HerdrLocation(home: home.path))
        #expect(
            scan
                == HerdrScan(herdr: HerdrAvailability(.notInstalled, detail: "no herdr on PATH and no ~/.config/herdr"))
        )
        // A herdr program but no directory yet: herdr is there, its default session not running.
        let bin = home.appending("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try writeText("#!/bin/sh\n", to: bin.appendingPathComponent("herdr"))
        chmod(bin.appendingPathComponent("herdr").path, 0o755)
        let installed = HerdrScan.read(HerdrLocation(home: home.path, programDirectories: [bin.path]))
        #expect(installed.herdr == .ready)
        #expect(installed.sessions.map(\.name) == ["default"])
        #expect(installed.sessions.first?.file == nil)
    }

    @Test func theDefaultSessionComesFirstThenNamedSessionsByNameWithTheirSockets() throws {
        let home = try TemporaryDirectory(prefix: "herdr-scan-")
        let location = HerdrLocation(home: home.path)
        try Self.makeSocket(location.socket(session: "default", isDefault: true))
        try Self.makeSocket(location.socket(session: "work", isDefault: false))
        for name in ["alpha", "..hidden-is-fine", "bad name", "default"] {
            try FileManager.default.createDirectory(
                atPath: location.sessionsDirectory + "/" + name, withIntermediateDirectories: true)
        }
        try writeText("not a session", to: URL(fileURLWithPath: location.sessionsDirectory + "/file"))
        let scan = HerdrScan.read(location)
        #expect(scan.herdr == .ready)
        #expect(scan.sessions.map(\.name) == ["default", "..hidden-is-fine", "alpha", "work"])
        #expect(scan.sessions.map { $0.file != nil } == [true, false, false, true])
        #expect(scan.sessions.last?.socket == home.path + "/.config/herdr/sessions/work/herdr.sock")
    }

    @Test func aSocketMadeAgainHasAnotherIdentityAndTheOverrideNamesTheDefaultsSocket() throws {
        let home = try TemporaryDirectory(prefix: "herdr-scan-")
        let override = home.file("elsewhere.sock").path
        let location = HerdrLocation(home: home.path, socketOverride: override)
        try Self.makeSocket(override)
        let first = HerdrScan.read(location)
        #expect(first.herdr == .ready, "an override is herdr enough")
        #expect(first.sessions.first?.socket == override)
        let before = try #require(first.sessions.first?.file)
        unlink(override)
        try Self.makeSocket(override)
        #expect(HerdrScan.read(location).sessions.first?.file != before)
    }

    @Test func aConfigDirectoryThatIsAFileIsFailing() throws {
        let home = try TemporaryDirectory(prefix: "herdr-scan-")
        try FileManager.default.createDirectory(at: home.appending(".config"), withIntermediateDirectories: true)
        try writeText("x", to: home.appending(".config/herdr"))
        let scan = HerdrScan.read(HerdrLocation(home: home.path))
        #expect(scan.herdr == HerdrAvailability(.failing, detail: "~/.config/herdr is not a directory"))
    }

    @Test func theEnvironmentGivesHomeOverrideAndProgramDirectories() {
        let location = HerdrLocation(environment: [
            "HOME": "/home/u", "HERDR_SOCKET_PATH": "/run/h.sock", "PATH": "/a:/b",
        ])
        #expect(location.home == "/home/u")
        #expect(location.socketOverride == "/run/h.sock")
        #expect(location.programDirectories == ["/a", "/b", "/home/u/.cargo/bin", "/home/u/.local/bin"])
        #expect(HerdrLocation(environment: ["HOME": "/h", "HERDR_SOCKET_PATH": ""]).socketOverride == nil)
    }
}
