import Foundation
import HerdrCrypto
import Plumbing
import RelayProtocol

/// What `herdr-relay probe URL` does: checks a relay end to end as a client sees it, in fresh
/// random rooms, and says whether it behaves as a protocol v1 relay should.
///
/// Blocking (a few seconds at most per step, `timeout` each): run it on a thread of its own.
public struct RelayProbe: Sendable {
    public struct Step: Hashable, Sendable {
        public let name: String
        public let ok: Bool
        public let detail: String

        public init(name: String, ok: Bool, detail: String) {
            self.name = name
            self.ok = ok
            self.detail = detail
        }
    }

    public enum Verdict: Hashable, Sendable {
        /// Every step passed.
        case allGood
        /// The relay answered, but not as it should.
        case misbehaves
        /// Nothing answered.
        case unreachable
    }

    /// Whether phones must attest before pairing.
    public enum Mode: Hashable, Sendable {
        case open
        case attestationRequired
    }

    public struct Report: Hashable, Sendable {
        public let steps: [Step]
        public let verdict: Verdict
        /// Nil when the probe did not get that far.
        public let mode: Mode?
    }

    public let endpoint: RelayEndpoint
    /// Seconds for each request and each connection.
    public var timeout: Double

    public init(endpoint: RelayEndpoint, timeout: Double = 10) {
        self.endpoint = endpoint
        self.timeout = timeout
    }

    /// Runs every step in order, reporting each to `progress` as it completes.
    public func run(progress: (Step) -> Void = { _ in }) -> Report {
        var steps: [Step] = []
        func record(_ name: String, _ ok: Bool, _ detail: String) {
            let step = Step(name: name, ok: ok, detail: detail)
            steps.append(step)
            progress(step)
        }
        let http = RelayHTTPClient(endpoint: endpoint, timeout: timeout)

        // 1. Health. Nothing answering here means unreachable; the rest would only repeat it.
        do {
            try http.healthz()
            record("healthz", true, "")
        } catch {
            record("healthz", false, error.message)
            return Report(steps: steps, verdict: error.isUnreachable ? .unreachable : .misbehaves, mode: nil)
        }

        // 2. A challenge for a random room.
        var challenge: [UInt8]?
        do {
            challenge = try http.attestChallenge(room: Self.randomRoom())
            record("attest challenge", true, "32-byte challenge")
        } catch {
            record("attest challenge", false, error.message)
        }

        // 3. Attestation mode, from the answer to a dummy attestation.
        var mode: Mode?
        do {
            let body =
                "{\"challenge\":\"\(Data(challenge ?? SecureRandom.bytes(32)).base64EncodedString())\",\"attestationObject\":\"cHJvYmU=\"}"
            let response = try http.post("/attest", room: Self.randomRoom(), body: Array(body.utf8))
            if response.status == 400 && response.errorText == "attestation disabled" {
                mode = .open
                record("attestation mode", true, "open mode (attestation disabled)")
            } else if response.status == 400 || response.status == 403 {
                mode = .attestationRequired
                record("attestation mode", true, "attestation required (\(response.summary))")
            } else {
                record("attestation mode", false, "unexpected answer to a dummy attestation: \(response.summary)")
            }
        } catch {
            record("attestation mode", false, error.message)
        }

        // 4. A Mac parks in a fresh pairing room, then a phone joins.
        let room = Self.randomRoom()
        var options = RelayConnection.Options()
        options.connectTimeout = timeout
        options.admissionTimeout = timeout
        var mac: RelayConnection?
        do {
            let connection = try RelayConnection.connect(
                to: endpoint, room: room, role: .computer, credential: .none, options: options)
            if connection.registrationToken == nil {
                record("admission as mac", true, "parked in a fresh room")
            } else {
                record("admission as mac", false, "a mac was given a registration token")
            }
            mac = connection
        } catch {
            record("admission as mac", false, error.message)
        }
        defer {
            mac?.close()
            mac?.waitUntilEnded(timeout: 2)
        }

        if let mac {
            do {
                let phone = try RelayConnection.connect(
                    to: endpoint, room: room, role: .device, credential: .none, options: options)
                defer {
                    phone.close()
                    phone.waitUntilEnded(timeout: 2)
                }
                if mode == .attestationRequired {
                    record("admission as phone", false, "admitted without a ticket, though attestation is required")
                } else if phone.registrationToken?.count == RelayLimits.tokenSize {
                    record("admission as phone", true, "24-byte registration token")
                    let step = Self.splice(mac: mac, phone: phone, timeout: timeout)
                    record(step.name, step.ok, step.detail)
                } else {
                    record("admission as phone", false, "no 24-byte registration token")
                }
            } catch {
                if mode == .attestationRequired, error.serverError == AdmissionError.ticketRequired.rawValue {
                    record("admission as phone", true, "refused without a ticket: ticket required")
                } else {
                    record("admission as phone", false, error.message)
                }
            }
        }

        // 5. The guards: an Origin header (a browser) and a malformed room.
        var originOptions = options
        originOptions.extraHeaders = [("Origin", "https://probe.invalid")]
        do {
            let connection = try RelayConnection.connect(
                to: endpoint, room: Self.randomRoom(), role: .computer, credential: .none, options: originOptions)
            connection.close()
            record("origin header refused", false, "a WebSocket upgrade with an Origin header was accepted")
        } catch {
            if error.kind == .httpStatus && error.status == 403 {
                record("origin header refused", true, "403 \(error.serverError ?? "")")
            } else {
                record("origin header refused", false, "expected 403, got: \(error.message)")
            }
        }
        do {
            let response = try http.post("/attest/challenge", room: "not-a-room")
            if response.status == 400 {
                record("bad room refused", true, response.summary)
            } else {
                record("bad room refused", false, "expected 400 bad room, got \(response.summary)")
            }
        } catch {
            record("bad room refused", false, error.message)
        }

        return Report(steps: steps, verdict: steps.allSatisfy(\.ok) ? .allGood : .misbehaves, mode: mode)
    }

    /// A 64-byte frame each way, and the round trip (mac → phone, the phone answers at once).
    static func splice(mac: RelayConnection, phone: RelayConnection, timeout: Double) -> Step {
        func fail(_ detail: String) -> Step { Step(name: "splice", ok: false, detail: detail) }
        let out = SecureRandom.bytes(64)
        let back = SecureRandom.bytes(64)
        let start = MonotonicClock.now
        do {
            try mac.send(out)
        } catch {
            return fail("mac could not send: \(error.message)")
        }
        guard case .message(let received)? = phone.receive(timeout: timeout) else {
            return fail("the phone got nothing within \(ConnectionWorker.seconds(timeout))")
        }
        guard received == out else { return fail("the phone got other bytes than the mac sent") }
        do {
            try phone.send(back)
        } catch {
            return fail("phone could not send: \(error.message)")
        }
        guard case .message(let answer)? = mac.receive(timeout: timeout) else {
            return fail("the mac got nothing back within \(ConnectionWorker.seconds(timeout))")
        }
        guard answer == back else { return fail("the mac got other bytes than the phone sent") }
        let milliseconds = (MonotonicClock.now - start) * 1000
        return Step(
            name: "splice", ok: true,
            detail: "64 bytes each way, round trip \(String(format: "%.1f", milliseconds)) ms")
    }

    static func randomRoom() -> String { Hex.encode(SecureRandom.bytes(32)) }
}
