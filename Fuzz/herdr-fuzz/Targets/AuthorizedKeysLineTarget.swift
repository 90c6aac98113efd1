import SSHPairingHost

extension FuzzTargets {
    /// authorized_keys lines as sshd splits them (`AuthorizedKeysEntry(line:)`), one per input line:
    /// a parsed entry has a key type sshd knows, key data without blanks, non-empty option names
    /// and a comment without leading blanks; written again (options quoted, type, data, comment) it
    /// parses back to the same entry, when its values hold no quote or backslash to escape.
    static let authorizedKeysLine = FuzzTarget("authorized-keys-line", "SSHPairingHost: authorized_keys entries") {
        data in
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let entry = AuthorizedKeysEntry(line: String(line)) else { continue }
            FuzzCheck.expect(
                !entry.keyType.isEmpty && !entry.keyType.unicodeScalars.contains { $0 == " " || $0 == "," },
                "a key type sshd would not read: \(entry.keyType)")
            FuzzCheck.expect(!entry.keyData.isEmpty, "empty key data")
            FuzzCheck.expect(entry.options.allSatisfy { !$0.name.isEmpty }, "an option without a name")
            FuzzCheck.expect(
                entry.comment.first != " " && entry.comment.first != "\t", "a comment starting with a blank")
            // sshd matches option names without regard to ASCII case; beyond ASCII, case mapping
            // does not round-trip (ϐ uppercases to Β, which lowercases to β), so only ASCII names
            // are looked up in another case.
            for option in entry.options where option.name.allSatisfy(\.isASCII) {
                FuzzCheck.expect(entry.option(option.name.uppercased()) != nil, "an option not found by its name")
            }
            // Scalar by scalar, as the parser reads: a quote carrying a combining mark is still a quote.
            func holds(_ text: String, anyOf special: String) -> Bool {
                text.unicodeScalars.contains { special.unicodeScalars.contains($0) }
            }
            let plain = entry.options.allSatisfy { option in
                !holds(option.name, anyOf: "\"\\ \t") && !holds(option.value ?? "", anyOf: "\"\\")
            }
            guard plain, !holds(entry.keyData, anyOf: "\""), entry.comment.unicodeScalars.last != "\r" else {
                continue
            }
            var written = entry.options.map { option in option.value.map { "\(option.name)=\"\($0)\"" } ?? option.name }
                .joined(separator: ",")
            if !written.isEmpty { written += " " }
            written += entry.keyType + " " + entry.keyData
            if !entry.comment.isEmpty { written += " " + entry.comment }
            FuzzCheck.expect(
                AuthorizedKeysEntry(line: written) == entry, "written again it parses otherwise: \(written)")
        }
    }
}
