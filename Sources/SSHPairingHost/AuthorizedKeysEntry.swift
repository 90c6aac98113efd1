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
    public init?(line: String) {
        var rest = Substring(line).drop { $0 == " " || $0 == "\t" }
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
        var comment = rest.drop { $0 == " " || $0 == "\t" }
        if comment.last == "\r" { comment = comment.dropLast() }
        self.comment = String(comment)
    }

    /// The first option called `name` (case-insensitive, as sshd compares).
    public func option(_ name: String) -> Option? {
        options.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The next blank-separated field, where blanks inside double quotes do not separate.
    private static func nextField(_ rest: inout Substring) -> String? {
        rest = rest.drop { $0 == " " || $0 == "\t" }
        guard !rest.isEmpty else { return nil }
        var field = ""
        var quoted = false
        var escaped = false
        while let character = rest.first {
            if !quoted && (character == " " || character == "\t") { break }
            rest.removeFirst()
            field.append(character)
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            }
        }
        return quoted ? nil : field
    }

    private static func parseOptions(_ field: String) -> [Option]? {
        var options: [Option] = []
        var rest = Substring(field)
        while !rest.isEmpty {
            let name = rest.prefix { $0 != "=" && $0 != "," }
            guard !name.isEmpty else { return nil }
            rest = rest.dropFirst(name.count)
            var value: String?
            if rest.first == "=" {
                rest.removeFirst()
                guard rest.first == "\"" else { return nil }
                rest.removeFirst()
                var text = ""
                var closed = false
                while let character = rest.first {
                    rest.removeFirst()
                    if character == "\\", rest.first == "\"" {
                        text.append("\"")
                        rest.removeFirst()
                    } else if character == "\"" {
                        closed = true
                        break
                    } else {
                        text.append(character)
                    }
                }
                guard closed else { return nil }
                value = text
            }
            options.append(Option(name: String(name), value: value))
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
        guard !field.contains("="), !field.contains(","), !field.contains("\"") else { return false }
        return field.hasPrefix("ssh-") || field.hasPrefix("ecdsa-sha2-") || field.hasPrefix("sk-")
            || field.hasPrefix("rsa-sha2-")
    }
}
