/// The expansions ssh applies to HostName and IdentityFile: misc.c `tilde_expand` and
/// `vdollar_percent_expand`, on bytes.
enum SSHConfigExpansion {
    /// Why a value cannot be expanded.
    enum Failure: Error, Equatable {
        /// `%x` with no meaning here.
        case unknownToken(UInt8)
        /// `%` as the last byte.
        case trailingPercent
        /// A token ssh knows and the resolver does not expand.
        case unsupportedToken(UInt8)
        /// `${NAME}` with no such variable.
        case missingVariable(String)
        /// `${` with no `}`, or `${}`.
        case badVariable
        /// `~name/` for an account whose home is not known.
        case unknownUser(String)
        /// Longer than allowed once expanded.
        case tooLong
    }

    /// `text` with `%c` replaced from `tokens` (`%%` is `%`) and, when `variables` is given,
    /// `${NAME}` from it. Stops as soon as the result passes `limit` bytes, so `%h%h%h…` cannot
    /// grow without bound.
    static func expand(
        _ text: [UInt8], tokens: [UInt8: [UInt8]], unsupported: Set<UInt8> = [], variables: [String: String]? = nil,
        limit: Int
    ) throws(Failure) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        func append<S: Collection>(_ bytes: S) throws(Failure) where S.Element == UInt8 {
            result.append(contentsOf: bytes)
            if result.count > limit { throw .tooLong }
        }
        while index < text.count {
            let byte = text[index]
            if let variables, byte == UInt8(ascii: "$"), index + 1 < text.count, text[index + 1] == UInt8(ascii: "{") {
                let start = index + 2
                guard let end = text[start...].firstIndex(of: UInt8(ascii: "}")), end > start else {
                    throw .badVariable
                }
                let name = String(decoding: text[start..<end], as: UTF8.self)
                guard let value = variables[name] else { throw .missingVariable(name) }
                try append(value.utf8)
                index = end + 1
                continue
            }
            guard byte == UInt8(ascii: "%") else {
                try append(CollectionOfOne(byte))
                index += 1
                continue
            }
            guard index + 1 < text.count else { throw .trailingPercent }
            let token = text[index + 1]
            if token == UInt8(ascii: "%") {
                try append(CollectionOfOne(token))
            } else if let replacement = tokens[token] {
                try append(replacement)
            } else if unsupported.contains(token) {
                throw .unsupportedToken(token)
            } else {
                throw .unknownToken(token)
            }
            index += 2
        }
        return result
    }

    /// `~`, `~/path` and `~name/path` as ssh's tilde_expand reads them for IdentityFile: the home
    /// always gets one `/` after it (`~` alone is `HOME/`); other paths stay as they are.
    static func expandTilde(
        _ text: [UInt8], localUser: String, home: String, homeOfUser: ((String) -> String?)?
    ) throws(Failure) -> [UInt8] {
        guard text.first == UInt8(ascii: "~") else { return text }
        let slash = UInt8(ascii: "/")
        var rest = text.dropFirst()
        var directory = home
        if let first = rest.first, first != slash {
            let end = rest.firstIndex(of: slash) ?? rest.endIndex
            let name = String(decoding: rest[rest.startIndex..<end], as: UTF8.self)
            if name != localUser {
                guard let other = homeOfUser?(name) else { throw .unknownUser(name) }
                directory = other
            }
            rest = rest[end...]
        }
        let path = rest.drop { $0 == slash }
        var result = Array(directory.utf8)
        if result.last != slash { result.append(slash) }
        return result + path
    }

    /// An Include pattern's `~` as glob(3)'s GLOB_TILDE reads it: the home replaces `~` (or
    /// `~name`) and the rest follows unchanged. Nil for another account whose home is not known.
    static func expandIncludeTilde(
        _ text: [UInt8], localUser: String, home: String, homeOfUser: ((String) -> String?)?
    ) -> [UInt8]? {
        guard text.first == UInt8(ascii: "~") else { return text }
        let rest = text.dropFirst()
        let end = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let name = String(decoding: rest[rest.startIndex..<end], as: UTF8.self)
        var directory = home
        if !name.isEmpty && name != localUser {
            guard let other = homeOfUser?(name) else { return nil }
            directory = other
        }
        return Array(directory.utf8) + rest[end...]
    }
}
