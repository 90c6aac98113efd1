import Foundation
import RelayProtocol

extension FuzzTargets {
    /// The relay's admission frames (RelayProtocol), the input read as each of them: a Hello,
    /// Challenge or Result that parses gives JSON (`.json`) that parses back to itself; a Proof's
    /// presented fields, made back into a Proof, present the same fields; the two JSON readers
    /// agree on what is an object; and the encoders' JSON for any text (a refusal, a ticket) or
    /// bytes (a nonce, a signature, a token) parses back to the value.
    static let relayAdmission = FuzzTarget("relay-admission", "RelayProtocol: Hello, Proof, Challenge, Result frames") {
        data in
        let text = String(decoding: data, as: UTF8.self)
        let value = RelayJSON.value(text)
        if RelayJSON.object(text) != nil {
            if case .object = value {} else { FuzzCheck.expect(false, "an object that value() does not call one") }
        }
        switch RelayHello.read(text) {
        case .hello(let hello):
            FuzzCheck.expect(RelayHello.read(hello.json) == .hello(hello), "a Hello's JSON reads differently")
        case .null:
            if case .null = value {} else { FuzzCheck.expect(false, "a null Hello that is not null") }
        case .malformed:
            FuzzCheck.expect(RelayHello.parse(text) == nil, "parse and read disagree")
        }
        if let challenge = RelayChallenge.parse(text) {
            FuzzCheck.expect(challenge.nonce.count == RelayLimits.nonceSize, "a nonce of another size")
            FuzzCheck.expect(RelayChallenge.parse(challenge.json) == challenge, "a Challenge's JSON parses differently")
        }
        switch RelayProof.presented(text) {
        case .fields(let signature, let ticket):
            if let ticket {
                FuzzCheck.expect(
                    RelayProof.presented(RelayProof.ticket(ticket).json) == .fields(signature: nil, ticket: ticket),
                    "a ticket Proof's JSON presents differently")
            }
            if let signature, let bytes = Data(base64Encoded: signature) {
                let again = RelayProof.presented(RelayProof.signature(Array(bytes)).json)
                FuzzCheck.expect(
                    again == .fields(signature: bytes.base64EncodedString(), ticket: nil),
                    "a signature Proof's JSON presents differently")
            }
        case .null:
            if case .null = value {} else { FuzzCheck.expect(false, "a null Proof that is not null") }
        case .unparseable:
            if case .invalid = value {} else { FuzzCheck.expect(false, "an unparseable Proof that is JSON") }
        }
        FuzzCheck.expect(
            RelayProof.presented(RelayProof.empty.json) == .fields(signature: nil, ticket: nil), "{} presents fields")
        if let result = RelayResult.parse(text) {
            FuzzCheck.expect(RelayResult.parse(result.json) == result, "a Result's JSON parses differently")
        }
        // The encoders, on text and bytes from the input.
        let refused = RelayResult.refused(text)
        FuzzCheck.expect(
            RelayResult.parse(refused.json) == refused, "a refusal's JSON parses differently: \(refused.json)")
        FuzzCheck.expect(
            RelayProof.presented(RelayProof.ticket(text).json) == .fields(signature: nil, ticket: text),
            "a ticket's JSON presents differently")
        let admitted = RelayResult.admitted(registrationToken: data)
        FuzzCheck.expect(RelayResult.parse(admitted.json) == admitted, "a token's JSON parses differently")
        if data.count >= RelayLimits.nonceSize {
            let challenge = RelayChallenge(nonce: Array(data.prefix(RelayLimits.nonceSize)))
            FuzzCheck.expect(RelayChallenge.parse(challenge.json) == challenge, "a nonce's JSON parses differently")
        }
        for role in RelayRole.allCases {
            for nonDisplacing in [false, true] {
                let hello = RelayHello(role: role, nonDisplacing: nonDisplacing)
                FuzzCheck.expect(RelayHello.parse(hello.json) == hello, "a Hello's JSON parses differently")
            }
        }
    }
}
