import AppAttest
import TestSupport
import Testing

/// The decoder reads what App Attest sends and refuses, with a reason, everything past its limits.
@Suite struct CBORDecoderTests {
    let decoder = CBORDecoder()

    @Test func decodesTheItemsAppAttestUses() throws {
        let bytes = CBOREncoder.map([
            ("fmt", .text("apple-appattest")), ("n", .unsigned(70_000)),
            ("attStmt", .map([("x5c", .array([.bytes([1, 2]), .bytes([])]))])),
        ])
        let value = try decoder.decode(bytes)
        #expect(value["fmt"]?.text == "apple-appattest")
        #expect(value["n"] == .unsigned(70_000))
        #expect(value["attStmt"]?["x5c"]?.array == [.bytes([1, 2]), .bytes([])])
        #expect(value["missing"] == nil)
        #expect(try decoder.decode([0x20]) == .negative(0))  // -1
        #expect(try decoder.decode([0xF4]) == .boolean(false))
        #expect(try decoder.decode([0xF6]) == .null)
        #expect(try decoder.decode([0x1B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .unsigned(.max))
    }

    /// Each refusal with the reason's start.
    @Test(
        arguments: [
            ([], "the input ends"),
            ([0x01, 0x02], "1 bytes after the item"),
            ([0x5F, 0xFF], "an indefinite length"),
            ([0x9F, 0xFF], "an indefinite length"),
            ([0xFF], "a break outside"),
            ([0xF9, 0x3C, 0x00], "a floating-point value"),
            ([0xC2, 0x40], "a tag"),
            ([0xF0], "simple value 16"),
            ([0x1C], "reserved additional information 28"),
            ([0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00], "a string at offset 0 claims 4294967295 bytes"),
            ([0x9B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], "an item at offset 0 claims"),
            ([0x62, 0xC3, 0x28], "a text string at offset 0 is not UTF-8"),
            ([0xA2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02], "a duplicate map key at offset 4"),
            ([0x82, 0x01], "an item at offset 0 claims 2 entries, 1 bytes are left"),
            ([0x82, 0x01, 0x18], "the input ends at offset 3"),
        ] as [([UInt8], String)])
    func refusesWhatItDoesNotRead(bytes: [UInt8], reason: String) {
        #expect {
            _ = try decoder.decode(bytes)
        } throws: { error in
            (error as? CBORError)?.message.hasPrefix(reason) == true
        }
    }

    @Test func nestingItemsAndSizeAreBounded() throws {
        // 16 arrays deep decode; 17 do not.
        let deep = [UInt8](repeating: 0x81, count: 16) + [0x00]
        #expect(throws: Never.self) { try decoder.decode(deep) }
        #expect {
            _ = try decoder.decode([0x81] + deep)
        } throws: { error in
            (error as? CBORError)?.message.hasPrefix("nested deeper than 16") == true
        }
        // 4096 items decode (an array of 4095 zeros and the array itself); 4097 do not.
        let wide = CBOREncoder.head(4, 4095) + [UInt8](repeating: 0, count: 4095)
        #expect(throws: Never.self) { try decoder.decode(wide) }
        let wider = CBOREncoder.head(4, 4096) + [UInt8](repeating: 0, count: 4096)
        #expect {
            _ = try decoder.decode(wider)
        } throws: { error in
            (error as? CBORError)?.message == "more than 4096 items"
        }
        // 64 KiB is read; a byte more is not.
        let big = CBOREncoder.head(2, 65_536 - 3) + [UInt8](repeating: 7, count: 65_536 - 3)
        #expect(big.count == 65_536)
        #expect(try decoder.decode(big).bytes?.count == 65_533)
        #expect {
            _ = try decoder.decode(big + [0])
        } throws: { error in
            (error as? CBORError)?.message == "65537 bytes is more than the 65536 read"
        }
    }
}

/// Authenticator data and the nonce extension are read exactly, with their bounds.
@Suite struct AuthenticatorDataTests {
    @Test func splitsTheFixedPartAndTheAttestedCredential() throws {
        let bytes =
            [UInt8](repeating: 0xAB, count: 32) + [0x40, 0, 0, 1, 2] + Array("appattestdevelop".utf8) + [0, 3, 9, 8, 7]
        let data = try AuthenticatorData(bytes)
        #expect(data.rpIDHash == [UInt8](repeating: 0xAB, count: 32))
        #expect(data.flags == 0x40)
        #expect(data.signCount == 258)
        let credential = try data.attestedCredential()
        #expect(credential.aaguid == Array("appattestdevelop".utf8))
        #expect(credential.credentialID == [9, 8, 7])
    }

    @Test func refusesShortLongAndTruncatedData() throws {
        #expect(throws: AppAttestFailure.self) { try AuthenticatorData([UInt8](repeating: 0, count: 36)) }
        #expect(throws: Never.self) { try AuthenticatorData([UInt8](repeating: 0, count: 37)) }
        #expect(throws: Never.self) { try AuthenticatorData([UInt8](repeating: 0, count: 4096)) }
        #expect(throws: AppAttestFailure.self) { try AuthenticatorData([UInt8](repeating: 0, count: 4097)) }
        // No attested credential after the counter, or a credential id longer than what is left.
        #expect(throws: AppAttestFailure.self) {
            try AuthenticatorData([UInt8](repeating: 0, count: 54)).attestedCredential()
        }
        let truncated = [UInt8](repeating: 0, count: 53) + [0, 4, 1, 2, 3]
        #expect {
            _ = try AuthenticatorData(truncated).attestedCredential()
        } throws: { error in
            (error as? AppAttestFailure)?.message == "the credential id claims 4 bytes, 3 are left"
        }
    }

    @Test func theNonceExtensionIsExactlyApplesStructure() throws {
        let nonce = [UInt8](0..<32)
        #expect(
            try AppleNonceExtension.nonce(fromExtensionValue: [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce) == nonce)
        let refused: [[UInt8]] = [
            [],
            [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce + [0],  // trailing
            [0x30, 0x23, 0xA1, 0x21, 0x04, 0x1F] + nonce.dropLast(),  // 31 bytes
            [0x30, 0x24, 0xA0, 0x22, 0x04, 0x20] + nonce,  // [0], not [1]
            [0x30, 0x80, 0xA1, 0x22, 0x04, 0x20] + nonce,  // indefinite
            [0x30, 0x81, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce,  // a long form DER forbids
            [0x30, 0x30, 0xA1, 0x22, 0x04, 0x20] + nonce,  // longer than the input
            [UInt8](repeating: 0x30, count: 257),
        ]
        for value in refused {
            #expect(throws: AppAttestFailure.self, "\(value.prefix(8))") {
                try AppleNonceExtension.nonce(fromExtensionValue: value)
            }
        }
    }
}
