import HerdrCrypto

/// The bytes of a hex literal from an RFC; a malformed literal is a bug in the test itself.
func hex(_ text: String) -> [UInt8] {
    guard let bytes = Hex.decode(text) else { preconditionFailure("bad hex literal in test: \(text)") }
    return bytes
}
