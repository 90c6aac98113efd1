import Foundation
import PeerGateListener
import RelayProtocol
import RelayServer
import RelayStorage

extension FuzzTargets {
    /// The relay's POST bodies through `RelayCore` (memory store, manual clock, a fixed random
    /// source): the first byte picks the path (`/attest/challenge`, `/attest`, `/register`,
    /// `/delete`) and whether attestation is required; the rest is the body. The head with a valid
    /// room passes `checkRequest`; the answer is a known status with a reason, JSON or plain text
    /// as the relay sends them, never a 500 except for the JSON `null` body, and the same body
    /// sent again to a fresh core gives the same answer. Attestation evidence meets the real
    /// verifier (Apple's root): the app-attest targets fuzz it with a chain it trusts.
    static let relayHTTPBody = FuzzTarget(
        "relay-http-body", "RelayServer: POST /attest/challenge, /attest, /register, /delete bodies"
    ) { data in
        guard let first = data.first else { return }
        let paths = ["/attest/challenge", "/attest", "/register", "/delete"]
        let path = paths[Int(first & 3)]
        let attestationRequired = first & 4 != 0
        let body = Array(data.dropFirst())
        func answer() -> HTTPResponse {
            let configuration = RelayConfiguration(
                origin: "https://relay.test", attestationRequired: attestationRequired)
            var counter: UInt8 = 0
            let core = RelayCore(
                configuration: configuration, store: MemoryRelayStore(), clock: ManualRelayClock(),
                random: { count in
                    counter &+= 1
                    return [UInt8](repeating: counter, count: count)
                })
            let room = String(repeating: "ab", count: 32)
            let head = HTTPRequestHead(
                method: "POST", target: path, version: "HTTP/1.1",
                headers: [
                    ("Host", "relay.test"), ("User-Agent", RelayLimits.userAgent), (RelayLimits.roomHeader, room),
                ])
            let refusal = core.checkRequest(head, address: "198.51.100.7")
            FuzzCheck.expect(refusal == nil, "a valid head refused: \(refusal?.status ?? 0)")
            return core.respond(to: head, body: body, address: "198.51.100.7", peerIsLoopback: false)
        }
        let response = answer()
        let known: Set<Int> = [200, 400, 401, 403, 404, 409, 410, 413, 429, 500, 503]
        FuzzCheck.expect(known.contains(response.status), "an odd status \(response.status)")
        FuzzCheck.expect(!response.reason.isEmpty, "a status without a reason")
        if response.status == 500 {
            if case .null = RelayJSON.value(body) {
            } else {
                FuzzCheck.expect(false, "a 500 for a body that is not null")
            }
        }
        if response.contentType == "application/json" {
            FuzzCheck.expect(RelayJSON.object(response.body) != nil, "a JSON answer that is not a JSON object")
        }
        let again = answer()
        FuzzCheck.expect(
            again.status == response.status && again.body == response.body, "the same body answered differently")
    }
}
