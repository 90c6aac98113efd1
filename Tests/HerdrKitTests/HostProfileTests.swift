import Foundation
import TestSupport
import Testing

@testable import HerdrKit

@Suite struct HostProfileTests {
    @Test func initDefaults() {
        let profile = HostProfile(name: "Mac", hostname: "mac.ts.net", username: "me")
        #expect(profile.port == 22)
        #expect(profile.platform == .unix)
        #expect(profile.herdrSession == nil)
        #expect(profile.remoteCommand == nil)
        #expect(profile.id != HostProfile(name: "Mac", hostname: "mac.ts.net", username: "me").id)
    }

    @Test func roundTripsThroughJSON() throws {
        let profile = HostProfile(
            name: "PC", hostname: "100.64.0.9", port: 2222, username: "jv", platform: .windows,
            herdrSession: "work", remoteCommand: "tmux new -A -s x")
        let decoded = try JSONDecoder().decode(HostProfile.self, from: JSONEncoder().encode(profile))
        #expect(decoded == profile)
    }

    @Test func missingOptionalKeysTakeDefaults() throws {
        let json = #"{"id":"4F2D2F36-0D5A-4C8E-9B7E-2A1C3E4F5A6B","name":"Mac","hostname":"mac","username":"me"}"#
        let decoded = try JSONDecoder().decode(HostProfile.self, from: Data(json.utf8))
        #expect(decoded.port == 22)
        #expect(decoded.platform == .unix)
        #expect(decoded.herdrSession == nil)
        #expect(decoded.remoteCommand == nil)
        #expect(decoded.id.uuidString == "4F2D2F36-0D5A-4C8E-9B7E-2A1C3E4F5A6B")
    }

    @Test func requiredKeysAndBadValuesStillFail() {
        let noHostname = #"{"id":"4F2D2F36-0D5A-4C8E-9B7E-2A1C3E4F5A6B","name":"Mac","username":"me"}"#
        let badPlatform =
            #"{"id":"4F2D2F36-0D5A-4C8E-9B7E-2A1C3E4F5A6B","name":"M","hostname":"h","username":"u","platform":"vms"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(HostProfile.self, from: Data(noHostname.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(HostProfile.self, from: Data(badPlatform.utf8)) }
    }
}
