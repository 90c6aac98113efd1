/// One line of an authorized_keys file, split as sshd splits it (sshd(8) AUTHORIZED_KEYS FILE FORMAT):
/// optional comma-separated options (values in double quotes, `\"` inside them for a quote), the key
/// type, the base64 key, and the comment.
public struct AuthorizedKeysEntry: Sendable, Equatable {
    public struct Option: Sendable, Equatable {
        /// The option name as written (sshd compares case-insensitively).
        public var name: String
        /// The unquoted value of `name="value"`, nil for a bare option like `restrict`.
        public var value: String?
    }

    public var options: [Option]
    public var keyType: String
    /// The base64 key data as written.
    public var keyData: String
    /// Everything after the key, with leading blanks dropped (empty when there is none).
    public var comment: String

    /// Splits a line; nil for blank lines, comments and lines that do not parse.
    ///
    /// The line is read scalar by scalar, as sshd reads bytes: a blank followed by a combining mark
    /// is one `Character` to Swift but still a separator to sshd.
    public init?(line: String) {
        var rest = Substring(line).unicodeScalars.drop(while: Self.isBlank)
        guard let first = rest.first, first != "#", first != "\r" else { return nil }
        guard let field = Self.nextField(&rest) else { return nil }
        var options: [Option] = []
        var keyType = field
        if !Self.looksLikeKeyType(field) {
            guard let parsed = Self.parseOptions(field), let type = Self.nextField(&rest) else { return nil }
            options = parsed
            keyType = type
        }
        guard Self.looksLikeKeyType(keyType), let data = Self.nextField(&rest) else { return nil }
        self.options = options
        self.keyType = keyType
        self.keyData = data
        var comment = rest.drop(while: Self.isBlank)
        if comment.last == "\r" { comment = comment.dropLast() }
        self.comment = String(String.UnicodeScalarView(comment))
    }

    /// The first option called `name` (case-insensitive, as sshd compares).
    public func option(_ name: String) -> Option? {
        options.first { $0.name.lowercased() == name.lowercased() }
    }

    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }

    /// The next blank-separated field, where blanks inside double quotes do not separate.
    private static func nextField(_ rest: inout Substring.UnicodeScalarView) -> String? {
        rest = rest.drop(while: isBlank)
        guard !rest.isEmpty else { return nil }
        var field = String.UnicodeScalarView()
        var quoted = false
        var escaped = false
        while let scalar = rest.first {
            if !quoted && isBlank(scalar) { break }
            rest.removeFirst()
            field.append(scalar)
            if escaped {
                escaped = false
            } else if quoted && scalar == "\\" {
                escaped = true
            } else if scalar == "\"" {
                quoted.toggle()
            }
        }
        return quoted ? nil : String(field)
    }

    private static func parseOptions(_ field: String) -> [Option]? {
        var options: [Option] = []
        var rest = Substring(field).unicodeScalars
        while !rest.isEmpty {
            let name = rest.prefix { $0 != "=" && $0 != "," }
            guard !name.isEmpty else { return nil }
            rest = rest.dropFirst(name.count)
            var value: String?
            if rest.first == "=" {
                rest.removeFirst()
                guard rest.first == "\"" else { return nil }
                rest.removeFirst()
                var text = String.UnicodeScalarView()
                var closed = false
                while let scalar = rest.first {
                    rest.removeFirst()
                    if scalar == "\\", rest.first == "\"" {
                        text.append("\"")
                        rest.removeFirst()
                    } else if scalar == "\"" {
                        closed = true
                        break
                    } else {
                        text.append(scalar)
                    }
                }
                guard closed else { return nil }
                value = String(text)
            }
            options.append(Option(name: String(String.UnicodeScalarView(name)), value: value))
            if rest.first == "," {
                rest.removeFirst()
                guard !rest.isEmpty else { return nil }
            } else if !rest.isEmpty {
                return nil
            }
        }
        return options
    }

    /// Key type names sshd knows (and their certificate and security-key forms).
    static func looksLikeKeyType(_ field: String) -> Bool {
        let scalars = field.unicodeScalars
        guard !scalars.contains(where: { $0 == "=" || $0 == "," || $0 == "\"" }) else { return false }
        return ["ssh-", "ecdsa-sha2-", "sk-", "rsa-sha2-"].contains { scalars.starts(with: $0.unicodeScalars) }
    }
}
