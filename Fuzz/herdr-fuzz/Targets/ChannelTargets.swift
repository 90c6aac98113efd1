extension FuzzTargets {
    /// The channel parsers' targets.
    static let channel: [FuzzTarget] = [
        noiseHandshake, secureChannel, noiseTransport, sessionMessage, companionMessage, companionCode,
        pairingPayload, aeadDifferential, agentBoardMessage, herdrLines,
    ]
}
