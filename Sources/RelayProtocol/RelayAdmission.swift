import Foundation

/// The client's first frame: `{"v":1,"role":"mac"|"phone"[,"nonDisplacing":true]}`.
public struct RelayHello: Hashable, Sendable {
    /// The only admission version there is.
    public static let version = 1

    public var role: RelayRole
    /// Asks to be refused with `slot occupied` rather than displace the slot's holder.
    public var nonDisplacing: Bool

    public init(role: RelayRole, nonDisplacing: Bool = false) {
        self.role = role
        self.nonDisplacing = nonDisplacing
    }

    public var json: String {
        "{\"v\":1,\"role\":\"\(role.rawValue)\"" + (nonDisplacing ? ",\"nonDisplacing\":true}" : "}")
    }

    /// What a relay makes of a Hello frame, as the original relay reads it: `v` must be exactly the
    /// number 1 and `role` a known role; other fields are ignored, and `nonDisplacing` counts only
    /// when it is exactly `true`.
    public enum Reading: Hashable, Sendable {
        case hello(RelayHello)
        /// Not JSON, or JSON without a valid `v` and `role` (`bad hello`).
        case malformed
        /// The JSON `null`, on which the original relay's handler fails (`internal error`).
        case null
    }

    public static func read(_ text: String) -> Reading {
        switch RelayJSON.value(text) {
        case .invalid: return .malformed
        case .null: return .null
        case .other: return .malformed
        case .object(let object):
            guard RelayJSON.integer(object["v"]) == version, let roleText = object["role"] as? String,
                let role = RelayRole(rawValue: roleText)
            else { return .malformed }
            return .hello(RelayHello(role: role, nonDisplacing: RelayJSON.boolean(object["nonDisplacing"]) == true))
        }
    }

    /// The Hello in `text`, or nil for anything `read` does not call a Hello.
    public static func parse(_ text: String) -> RelayHello? {
        if case .hello(let hello) = read(text) { return hello }
        return nil
    }
}

/// The relay's answer to every Hello, whatever the room's state: `{"nonce":"<b64 32 bytes>"}`.
public struct RelayChallenge: Hashable, Sendable {
    public var nonce: [UInt8]
    public init(nonce: [UInt8]) { self.nonce = nonce }

    public var json: String { "{\"nonce\":\"\(Data(nonce).base64EncodedString())\"}" }

    public static func parse(_ text: String) -> RelayChallenge? {
        guard let object = RelayJSON.object(text), let nonce = RelayJSON.bytes(object["nonce"]),
            nonce.count == RelayLimits.nonceSize
        else { return nil }
        return RelayChallenge(nonce: nonce)
    }
}

/// The client's credential: `{}`, `{"sig":"<b64>"}` or `{"ticket":"…"}`.
public enum RelayProof: Hashable, Sendable {
    /// Open mode, or a Mac parking in a pairing room.
    case empty
    /// An Ed25519 signature over the join transcript.
    case signature([UInt8])
    /// A pairing-room ticket from `/attest`, as text.
    case ticket(String)

    public var json: String {
        switch self {
        case .empty: "{}"
        case .signature(let signature): "{\"sig\":\"\(Data(signature).base64EncodedString())\"}"
        case .ticket(let ticket): "{\"ticket\":\(RelayJSON.quoted(ticket))}"
        }
    }

    /// A Proof as the relay receives it: which credential fields it carries, read as the original
    /// relay reads them (a field counts only when it is a string; anything else is as if absent).
    public enum Presented: Hashable, Sendable {
        /// Not JSON (`bad proof`).
        case unparseable
        /// The JSON `null`, on which the original relay's handler fails wherever it reads a field.
        case null
        /// Any other JSON value; non-objects carry no fields.
        case fields(signature: String?, ticket: String?)
    }

    public static func presented(_ text: String) -> Presented {
        switch RelayJSON.value(text) {
        case .invalid: .unparseable
        case .null: .null
        case .other: .fields(signature: nil, ticket: nil)
        case .object(let object): .fields(signature: object["sig"] as? String, ticket: object["ticket"] as? String)
        }
    }
}

/// The relay's verdict: `{"ok":true}`, `{"ok":true,"registrationToken":"<b64>"}` (phones) or
/// `{"ok":false,"error":X}` (then close 1008 X).
public enum RelayResult: Hashable, Sendable {
    case admitted(registrationToken: [UInt8]?)
    case refused(String)

    public var json: String {
        switch self {
        case .admitted(nil): "{\"ok\":true}"
        case .admitted(let token?): "{\"ok\":true,\"registrationToken\":\"\(Data(token).base64EncodedString())\"}"
        case .refused(let error): "{\"ok\":false,\"error\":\(RelayJSON.quoted(error))}"
        }
    }

    public static func parse(_ text: String) -> RelayResult? {
        guard let object = RelayJSON.object(text), let ok = RelayJSON.boolean(object["ok"]) else { return nil }
        if ok {
            guard let token = object["registrationToken"] else { return .admitted(registrationToken: nil) }
            guard let bytes = RelayJSON.bytes(token) else { return nil }
            return .admitted(registrationToken: bytes)
        }
        return .refused(object["error"] as? String ?? "")
    }
}

/// The small JSON vocabulary of the admission frames and HTTP bodies, strict about types.
public enum RelayJSON {
    /// A JSON text, as far as the relay's readers care.
    public enum Value {
        case invalid
        case null
        case object([String: Any])
        /// An array, string, number or boolean.
        case other
    }

    /// Any JSON text, scalars included.
    public static func value(_ text: String) -> Value { value(Array(text.utf8)) }

    public static func value(_ bytes: [UInt8]) -> Value {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
            return .invalid
        }
        if value is NSNull { return .null }
        if let object = value as? [String: Any] { return .object(object) }
        return .other
    }

    /// The JSON object in `text`, or nil for anything else (arrays, scalars, bad JSON).
    public static func object(_ text: String) -> [String: Any]? {
        object(Array(text.utf8))
    }

    public static func object(_ bytes: [UInt8]) -> [String: Any]? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: []) else { return nil }
        return value as? [String: Any]
    }

    /// The decoded value of a JSON text whatever it is (a string, number, object…), nil when the
    /// text is not JSON.
    public static func decoded(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// An integer that is not a boolean. (Foundation bridges JSON booleans to NSNumber too; they
    /// are the ones whose Objective-C type is `c`.)
    public static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        let double = number.doubleValue
        guard double.rounded() == double, abs(double) < 1e15 else { return nil }
        return Int(double)
    }

    /// A JSON `true` or `false`, not a number.
    public static func boolean(_ value: Any?) -> Bool? {
        guard let number = value as? NSNumber, isBoolean(number) else { return nil }
        return number.boolValue
    }

    /// Standard base64 text decoded, or nil.
    public static func bytes(_ value: Any?) -> [UInt8]? {
        guard let text = value as? String, let data = Data(base64Encoded: text) else { return nil }
        return Array(data)
    }

    /// `text` as a JSON string literal.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}
