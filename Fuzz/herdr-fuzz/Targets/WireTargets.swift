extension FuzzTargets {
    /// The wire parsers' targets.
    static let wire: [FuzzTarget] = [
        httpRequestHead, httpResponseHead, webSocketFrame, webSocketStream, webSocketDifferential, relayAdmission,
        relayHTTPBody, relayWebRequest, peerAddress,
    ]
}
