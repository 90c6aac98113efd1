import HerdrCrypto

/// The HandshakeState object of Noise section 5.3, with the 25519 DH functions and the cipher and
/// hash given as types: `HandshakeState<CipherChaChaPoly, HashBLAKE2s>` runs
/// `Noise_<pattern>_25519_ChaChaPoly_BLAKE2s`.
///
/// A value. WriteMessage and ReadMessage are transactions: when one throws (a tampered message, a
/// refused key, a message over the limit, a call out of turn), the state is exactly what it was
/// before the call, so a caller may drop the bad message and carry on, or give up.
public struct HandshakeState<Cipher: NoiseCipher, Hash: NoiseHash>: Sendable {
    /// What the next handshake call must be.
    public enum Turn: Sendable, Equatable {
        case write
        case read
        case finished
    }

    public let pattern: HandshakePattern
    /// initiator: true for the party that sends the first message.
    public let initiator: Bool
    public private(set) var symmetricState: SymmetricState<Cipher, Hash>
    /// s, e, rs, re: the local static and ephemeral key pairs, the remote public keys.
    private let s: KeyPair?
    private var e: KeyPair?
    private var rs: [UInt8]?
    private var re: [UInt8]?
    /// The index of the next message pattern.
    private var messageIndex = 0
    /// Split()'s two CipherStates, once the last message pattern has been processed.
    private var split: (c1: CipherState<Cipher>, c2: CipherState<Cipher>)?

    /// `Noise_<pattern>_25519_<cipher>_<hash>`.
    public static func protocolName(for pattern: HandshakePattern) -> String {
        "Noise_\(pattern.name)_\(DH25519.name)_\(Cipher.name)_\(Hash.name)"
    }

    /// Initialize(handshake_pattern, initiator, prologue, s, e, rs, re) with e and re empty: the
    /// ephemeral is generated when the pattern first sends `e`.
    ///
    /// - Parameters:
    ///   - s: this party's static key pair, required when the pattern sends or pre-messages it.
    ///   - rs: the peer's static public key, required (and only allowed) when the peer pre-messages it.
    @_specialize(exported:true,where Cipher == CipherChaChaPoly, Hash == HashBLAKE2s)
    @_specialize(exported:true,where Cipher == CipherChaChaPoly, Hash == HashSHA256)
    public init(
        pattern: HandshakePattern, initiator: Bool, prologue: [UInt8] = [], s: KeyPair? = nil, rs: [UInt8]? = nil
    )
        throws(NoiseError)
    {
        try self.init(pattern: pattern, initiator: initiator, prologue: prologue, s: s, e: nil, rs: rs, re: nil)
    }

    /// Initialize with a fixed local ephemeral key pair. **Insecure: for test vectors only.** An
    /// ephemeral reused across handshakes destroys forward secrecy and, with some patterns, lets
    /// an attacker impersonate. `re` is for patterns that pre-message the peer's ephemeral.
    public init(
        pattern: HandshakePattern, initiator: Bool, prologue: [UInt8] = [], s: KeyPair? = nil, rs: [UInt8]? = nil,
        re: [UInt8]? = nil, insecureFixedEphemeralForTestsOnly e: KeyPair?
    ) throws(NoiseError) {
        try self.init(pattern: pattern, initiator: initiator, prologue: prologue, s: s, e: e, rs: rs, re: re)
    }

    private init(
        pattern: HandshakePattern, initiator: Bool, prologue: [UInt8], s: KeyPair?, e: KeyPair?, rs: [UInt8]?,
        re: [UInt8]?
    ) throws(NoiseError) {
        let localPre = initiator ? pattern.initiatorPreMessage : pattern.responderPreMessage
        let remotePre = initiator ? pattern.responderPreMessage : pattern.initiatorPreMessage
        let localDirection: MessagePattern.Direction = initiator ? .initiatorToResponder : .responderToInitiator
        let sendsStatic = pattern.messagePatterns.contains { $0.direction == localDirection && $0.tokens.contains(.s) }
        let role = initiator ? "initiator" : "responder"
        if (localPre.contains(.s) || sendsStatic) && s == nil {
            throw NoiseError(.missingKey, "\(pattern.name) needs the \(role)'s static key pair s")
        }
        if localPre.contains(.e) && e == nil {
            throw NoiseError(.missingKey, "\(pattern.name) pre-messages the \(role)'s ephemeral e")
        }
        for (token, key, name) in [(Token.s, rs, "rs"), (Token.e, re, "re")] {
            if remotePre.contains(token) {
                guard let key else {
                    throw NoiseError(.missingKey, "\(pattern.name) needs the peer's \(name) before the handshake")
                }
                guard key.count == DH25519.dhLength else {
                    throw NoiseError(.invalidKey, "\(name) is 32 bytes, got \(key.count)")
                }
            } else if key != nil {
                throw NoiseError(.invalidKey, "\(name) was given but \(pattern.name) does not pre-message it")
            }
        }

        self.pattern = pattern
        self.initiator = initiator
        self.s = s
        self.e = e
        self.rs = rs
        self.re = re
        symmetricState = SymmetricState(protocolName: Self.protocolName(for: pattern))
        symmetricState.mixHash(prologue)
        // The pre-messages' public keys, the initiator's first (section 5.3).
        for (preMessage, isLocal) in [
            (pattern.initiatorPreMessage, initiator), (pattern.responderPreMessage, !initiator),
        ] {
            for token in preMessage {
                let key = token == .s ? (isLocal ? s?.publicKey : rs) : (isLocal ? e?.publicKey : re)
                symmetricState.mixHash(key!)
            }
        }
    }

    /// `Noise_<pattern>_25519_<cipher>_<hash>` for this state.
    public var protocolName: String { Self.protocolName(for: pattern) }

    /// Whether the next call is WriteMessage or ReadMessage, or the handshake is over.
    public var turn: Turn {
        guard messageIndex < pattern.messagePatterns.count else { return .finished }
        let direction = pattern.messagePatterns[messageIndex].direction
        return (direction == .initiatorToResponder) == initiator ? .write : .read
    }

    public var isHandshakeComplete: Bool { turn == .finished }

    /// GetHandshakeHash(): h, which commits to everything so far. Final once the handshake is
    /// complete; what SAS and channel binding derive from.
    public func getHandshakeHash() -> [UInt8] { symmetricState.getHandshakeHash() }

    public var handshakeHash: [UInt8] { symmetricState.getHandshakeHash() }

    /// rs: the peer's static public key, once known (pre-message or received).
    public var remoteStaticPublicKey: [UInt8]? { rs }
    /// re: the peer's ephemeral public key, once received.
    public var remoteEphemeralPublicKey: [UInt8]? { re }
    public var localStaticPublicKey: [UInt8]? { s?.publicKey }
    public var localEphemeralPublicKey: [UInt8]? { e?.publicKey }

    /// WriteMessage(payload, message_buffer): the next handshake message, carrying `payload`.
    /// After the last message pattern, Split() has run: see `splitCipherStates()`.
    @_specialize(exported:true,where Cipher == CipherChaChaPoly, Hash == HashBLAKE2s)
    @_specialize(exported:true,where Cipher == CipherChaChaPoly, Hash == HashSHA256)
    public mutating func writeMessage(_ payload: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        var next = self
        let message = try next.performWrite(payload)
        self = next
        return message
    }

    /// ReadMessage(message, payload_buffer): processes the peer's next handshake message and
    /// returns its payload. On any error this state is left unchanged.
    @_specialize(exported:true,where Cipher == CipherChaChaPoly, Hash == HashBLAKE2s)
    @_specialize(exported:true,where Cipher == CipherChaChaPoly, Hash == HashSHA256)
    public mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        var next = self
        let payload = try next.performRead(message)
        self = next
        return payload
    }

    /// The two CipherStates of Split(): c1 encrypts initiator → responder, c2 responder →
    /// initiator. With a one-way pattern only c1 may be used.
    public func splitCipherStates() throws(NoiseError) -> (c1: CipherState<Cipher>, c2: CipherState<Cipher>) {
        guard let split else {
            throw NoiseError(.handshakeNotFinished, "Split() happens after the last handshake message")
        }
        return split
    }

    /// This party's transport pair from Split(): what it sends with and what it receives with.
    public func transportCipherStates() throws(NoiseError) -> (send: CipherState<Cipher>, receive: CipherState<Cipher>)
    {
        let (c1, c2) = try splitCipherStates()
        return initiator ? (c1, c2) : (c2, c1)
    }

    // MARK: - The token interpreter

    private mutating func performWrite(_ payload: [UInt8]) throws(NoiseError) -> [UInt8] {
        let tokens = try tokensForCall(.write)
        var message: [UInt8] = []
        message.reserveCapacity(
            tokens.count * (DH25519.dhLength + NoiseLimits.tagLength) + payload.count + NoiseLimits.tagLength)
        for token in tokens {
            switch token {
            case .e:
                let ephemeral = e ?? DH25519.generateKeyPair()
                e = ephemeral
                message += ephemeral.publicKey
                symmetricState.mixHash(ephemeral.publicKey)
            case .s:
                message += try symmetricState.encryptAndHash(try required(s, "s").publicKey)
            case .ee, .es, .se, .ss:
                try mixDH(token)
            }
        }
        message += try symmetricState.encryptAndHash(payload)
        guard message.count <= NoiseLimits.maximumMessageLength else {
            throw NoiseError(
                .messageTooLong, "handshake message of \(message.count) bytes is over the 65535-byte limit")
        }
        try finishMessage()
        return message
    }

    private mutating func performRead(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard message.count <= NoiseLimits.maximumMessageLength else {
            throw NoiseError(
                .messageTooLong, "handshake message of \(message.count) bytes is over the 65535-byte limit")
        }
        let tokens = try tokensForCall(.read)
        var offset = 0
        func take(_ count: Int, for token: Token) throws(NoiseError) -> [UInt8] {
            guard message.count - offset >= count else {
                throw NoiseError(
                    .messageTooShort, "message ends inside token \(token.rawValue) (\(message.count) bytes)")
            }
            defer { offset += count }
            return Array(message[offset..<offset + count])
        }
        for token in tokens {
            switch token {
            case .e:
                let key = try take(DH25519.dhLength, for: .e)
                re = key
                symmetricState.mixHash(key)
            case .s:
                let length = DH25519.dhLength + (symmetricState.cipherState.hasKey ? NoiseLimits.tagLength : 0)
                rs = try symmetricState.decryptAndHash(try take(length, for: .s))
            case .ee, .es, .se, .ss:
                try mixDH(token)
            }
        }
        let payload = try symmetricState.decryptAndHash(Array(message[offset...]))
        try finishMessage()
        return payload
    }

    /// The tokens of the current message pattern, checking that it is this call's turn.
    private func tokensForCall(_ call: Turn) throws(NoiseError) -> [Token] {
        switch turn {
        case .finished:
            throw NoiseError(.handshakeFinished, "the handshake is complete; use the transport CipherStates")
        case call:
            return pattern.messagePatterns[messageIndex].tokens
        default:
            throw NoiseError(
                .wrongTurn, call == .write ? "a message from the peer must be read first" : "this party must write next"
            )
        }
    }

    /// MixKey(DH(...)) for a DH token, choosing keys by role as section 5.3 says.
    private mutating func mixDH(_ token: Token) throws(NoiseError) {
        let output: [UInt8]
        switch (token, initiator) {
        case (.ee, _): output = try DH25519.dh(required(e, "e"), required(re, "re"))
        case (.es, true): output = try DH25519.dh(required(e, "e"), required(rs, "rs"))
        case (.es, false): output = try DH25519.dh(required(s, "s"), required(re, "re"))
        case (.se, true): output = try DH25519.dh(required(s, "s"), required(re, "re"))
        case (.se, false): output = try DH25519.dh(required(e, "e"), required(rs, "rs"))
        case (.ss, _): output = try DH25519.dh(required(s, "s"), required(rs, "rs"))
        case (.e, _), (.s, _): preconditionFailure("not a DH token: \(token)")
        }
        try symmetricState.mixKey(output)
    }

    private mutating func finishMessage() throws(NoiseError) {
        messageIndex += 1
        if messageIndex == pattern.messagePatterns.count {
            let (c1, c2) = try symmetricState.split()
            split = (c1, c2)
        }
    }

    private func required<T>(_ key: T?, _ name: String) throws(NoiseError) -> T {
        guard let key else { throw NoiseError(.missingKey, "\(pattern.name) needs \(name) here but it is empty") }
        return key
    }
}
