/// A token of a handshake pattern (Noise section 7.1). PSK tokens are not supported.
public enum Token: String, Sendable, Hashable, CaseIterable {
    case e
    case s
    case ee
    case es
    case se
    case ss
}

/// One message pattern: who sends it and its tokens, in order.
public struct MessagePattern: Sendable, Hashable, CustomStringConvertible {
    public enum Direction: Sendable, Hashable {
        /// `->`
        case initiatorToResponder
        /// `<-`
        case responderToInitiator
    }

    public let direction: Direction
    public let tokens: [Token]

    public init(_ direction: Direction, _ tokens: [Token]) {
        self.direction = direction
        self.tokens = tokens
    }

    public var description: String {
        (direction == .initiatorToResponder ? "-> " : "<- ") + tokens.map(\.rawValue).joined(separator: ", ")
    }
}

/// A handshake pattern as data (Noise section 7): pre-messages and message patterns. The token
/// interpreter in HandshakeState runs any valid pattern; the named ones are those of sections
/// 7.4 (one-way) and 7.5 (interactive).
public struct HandshakePattern: Sendable, Hashable, CustomStringConvertible {
    /// The name in protocol names, e.g. `XK`.
    public let name: String
    /// The initiator's pre-message (`-> s` before `...`): empty, `e`, `s`, or `e, s`.
    public let initiatorPreMessage: [Token]
    /// The responder's pre-message (`<- s` before `...`).
    public let responderPreMessage: [Token]
    public let messagePatterns: [MessagePattern]

    /// A checked pattern. Throws `.invalidPattern` unless: pre-messages hold only `e` and `s`,
    /// each at most once; there is at least one message and none is empty; directions alternate
    /// starting with the initiator; no party sends `e` or `s` twice; and every DH token names keys
    /// that exist by then (section 7.3's first two validity rules).
    public init(
        name: String, initiatorPreMessage: [Token] = [], responderPreMessage: [Token] = [],
        messagePatterns: [MessagePattern]
    ) throws(NoiseError) {
        self.init(unchecked: name, initiatorPreMessage, responderPreMessage, messagePatterns)
        try validate()
    }

    private init(unchecked name: String, _ initiator: [Token], _ responder: [Token], _ messages: [MessagePattern]) {
        self.name = name
        self.initiatorPreMessage = initiator
        self.responderPreMessage = responder
        self.messagePatterns = messages
    }

    /// True when the pattern has one message (N, K, X): after it only initiator → responder
    /// transport messages are allowed.
    public var isOneWay: Bool { messagePatterns.count == 1 }

    public var description: String {
        var lines: [String] = []
        if !initiatorPreMessage.isEmpty {
            lines.append("-> " + initiatorPreMessage.map(\.rawValue).joined(separator: ", "))
        }
        if !responderPreMessage.isEmpty {
            lines.append("<- " + responderPreMessage.map(\.rawValue).joined(separator: ", "))
        }
        if !lines.isEmpty { lines.append("...") }
        return "\(name):\n" + (lines + messagePatterns.map(\.description)).map { "  " + $0 }.joined(separator: "\n")
    }

    private func validate() throws(NoiseError) {
        func fail(_ why: String) -> NoiseError { NoiseError(.invalidPattern, "\(name): \(why)") }
        for pre in [initiatorPreMessage, responderPreMessage] {
            guard pre.allSatisfy({ $0 == .e || $0 == .s }), Set(pre).count == pre.count else {
                throw fail("pre-messages may hold only e and s, each once")
            }
        }
        guard !messagePatterns.isEmpty else { throw fail("no message patterns") }
        // Keys each side holds so far: [initiator, responder] × [e, s].
        var hasE = [initiatorPreMessage.contains(.e), responderPreMessage.contains(.e)]
        var hasS = [initiatorPreMessage.contains(.s), responderPreMessage.contains(.s)]
        for (index, message) in messagePatterns.enumerated() {
            let expected: MessagePattern.Direction = index % 2 == 0 ? .initiatorToResponder : .responderToInitiator
            guard message.direction == expected else { throw fail("message \(index + 1) breaks the -> <- alternation") }
            guard !message.tokens.isEmpty else { throw fail("message \(index + 1) is empty") }
            let sender = index % 2
            for token in message.tokens {
                switch token {
                case .e:
                    guard !hasE[sender] else { throw fail("a party sends e twice") }
                    hasE[sender] = true
                case .s:
                    guard !hasS[sender] else { throw fail("a party sends s twice") }
                    hasS[sender] = true
                case .ee:
                    guard hasE[0], hasE[1] else { throw fail("ee before both ephemerals exist") }
                case .es:
                    guard hasE[0], hasS[1] else {
                        throw fail("es before the initiator's e and the responder's s exist")
                    }
                case .se:
                    guard hasS[0], hasE[1] else {
                        throw fail("se before the initiator's s and the responder's e exist")
                    }
                case .ss:
                    guard hasS[0], hasS[1] else { throw fail("ss before both statics exist") }
                }
            }
        }
    }

    private static func make(
        _ name: String, _ initiatorPre: [Token] = [], _ responderPre: [Token] = [], _ messages: [MessagePattern]
    ) -> HandshakePattern {
        HandshakePattern(unchecked: name, initiatorPre, responderPre, messages)
    }

    // One-way patterns (section 7.4).
    public static let n = make("N", [], [.s], [MessagePattern(.initiatorToResponder, [.e, .es])])
    public static let k = make("K", [.s], [.s], [MessagePattern(.initiatorToResponder, [.e, .es, .ss])])
    public static let x = make("X", [], [.s], [MessagePattern(.initiatorToResponder, [.e, .es, .s, .ss])])

    // Interactive patterns (section 7.5).
    public static let nn = make(
        "NN", [], [], [MessagePattern(.initiatorToResponder, [.e]), MessagePattern(.responderToInitiator, [.e, .ee])])
    public static let nk = make(
        "NK", [], [.s],
        [MessagePattern(.initiatorToResponder, [.e, .es]), MessagePattern(.responderToInitiator, [.e, .ee])])
    public static let nx = make(
        "NX", [], [],
        [MessagePattern(.initiatorToResponder, [.e]), MessagePattern(.responderToInitiator, [.e, .ee, .s, .es])])
    public static let kn = make(
        "KN", [.s], [],
        [MessagePattern(.initiatorToResponder, [.e]), MessagePattern(.responderToInitiator, [.e, .ee, .se])])
    public static let kk = make(
        "KK", [.s], [.s],
        [
            MessagePattern(.initiatorToResponder, [.e, .es, .ss]),
            MessagePattern(.responderToInitiator, [.e, .ee, .se]),
        ])
    public static let kx = make(
        "KX", [.s], [],
        [MessagePattern(.initiatorToResponder, [.e]), MessagePattern(.responderToInitiator, [.e, .ee, .se, .s, .es])])
    public static let xn = make(
        "XN", [], [],
        [
            MessagePattern(.initiatorToResponder, [.e]), MessagePattern(.responderToInitiator, [.e, .ee]),
            MessagePattern(.initiatorToResponder, [.s, .se]),
        ])
    public static let xk = make(
        "XK", [], [.s],
        [
            MessagePattern(.initiatorToResponder, [.e, .es]), MessagePattern(.responderToInitiator, [.e, .ee]),
            MessagePattern(.initiatorToResponder, [.s, .se]),
        ])
    public static let xx = make(
        "XX", [], [],
        [
            MessagePattern(.initiatorToResponder, [.e]), MessagePattern(.responderToInitiator, [.e, .ee, .s, .es]),
            MessagePattern(.initiatorToResponder, [.s, .se]),
        ])
    public static let `in` = make(
        "IN", [], [],
        [MessagePattern(.initiatorToResponder, [.e, .s]), MessagePattern(.responderToInitiator, [.e, .ee, .se])])
    public static let ik = make(
        "IK", [], [.s],
        [
            MessagePattern(.initiatorToResponder, [.e, .es, .s, .ss]),
            MessagePattern(.responderToInitiator, [.e, .ee, .se]),
        ])
    public static let ix = make(
        "IX", [], [],
        [
            MessagePattern(.initiatorToResponder, [.e, .s]),
            MessagePattern(.responderToInitiator, [.e, .ee, .se, .s, .es]),
        ])

    /// Every named pattern.
    public static let all: [HandshakePattern] = [n, k, x, nn, nk, nx, kn, kk, kx, xn, xk, xx, `in`, ik, ix]

    /// The named pattern called `name` (`XK`, `NN`, …), or nil.
    public static func named(_ name: String) -> HandshakePattern? { all.first { $0.name == name } }
}
