import PeerGate

extension FuzzTargets {
    /// PeerGate's address texts (`PeerAddress.parse`, `PeerKind(peer:)`, `IPAddress(numeric:)`,
    /// `CIDRBlock(parsing:)`): a parsed peer's canonical text parses back to the same peer and
    /// the same kind; malformed text is `.malformed`, anything else never is; classification
    /// agrees with the range table and with the unwrapped address; a parsed block's text parses
    /// back to the same block, which holds its network and has no host bits; the length limits
    /// hold.
    static let peerAddress = FuzzTarget("peer-address", "PeerGate: peer text, IP addresses, CIDR blocks") { data in
        let text = String(decoding: data, as: UTF8.self)
        let kind = PeerKind(peer: text)
        switch PeerAddress.parse(text) {
        case .success(let peer):
            FuzzCheck.expect(text.utf8.count <= PeerAddress.maximumTextLength, "a peer text past the limit")
            FuzzCheck.expect(kind != .malformed, "a parsed peer classified malformed")
            FuzzCheck.expect(kind == PeerKind(peer.address), "the kind is not the address's")
            FuzzCheck.expect(!peer.wasIPv4Mapped || peer.address.family == .ipv4, "a mapped peer kept IPv6")
            FuzzCheck.expect(!peer.address.isIPv4Mapped, "a mapped address not unwrapped")
            let again = PeerAddress.parse(peer.description)
            if case .success(let reparsed) = again {
                FuzzCheck.expect(
                    reparsed.address == peer.address && reparsed.scope == peer.scope, "the text parses to another peer")
            } else {
                FuzzCheck.expect(false, "the canonical text \(peer.description) does not parse")
            }
            FuzzCheck.expect(PeerKind(peer: peer.description) == kind, "the canonical text classifies differently")
            FuzzCheck.expect(
                IPAddress(numeric: peer.address.description) == peer.address, "the address text parses elsewhere")
        case .failure(let malformed):
            FuzzCheck.expect(kind == .malformed, "refused text classified \(kind)")
            FuzzCheck.expect(!malformed.reason.isEmpty, "a refusal without a reason")
        }
        if let address = IPAddress(numeric: text) {
            FuzzCheck.expect(address.bytes.count == 4 || address.bytes.count == 16, "an address of odd size")
            FuzzCheck.expect(IPAddress(numeric: address.description) == address, "the address text parses elsewhere")
            FuzzCheck.expect(PeerKind(address) == PeerKind(address.unwrappingIPv4Mapped), "mapping changed the kind")
        }
        do throws(CIDRError) {
            let block = try CIDRBlock(parsing: text)
            FuzzCheck.expect(text.utf8.count <= CIDRBlock.maximumTextLength, "a block text past the limit")
            FuzzCheck.expect(
                block.prefixLength >= 0 && block.prefixLength <= block.network.bytes.count * 8, "odd length")
            FuzzCheck.expect(block.contains(block.network), "a block without its network")
            FuzzCheck.expect(
                CIDRBlock(holding: block.network, prefixLength: block.prefixLength) == block, "host bits set")
            let again = try? CIDRBlock(parsing: block.description)
            FuzzCheck.expect(again == block, "the block text \(block.description) parses differently")
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a refusal without a reason")
        }
    }
}
