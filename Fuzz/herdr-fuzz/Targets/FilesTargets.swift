extension FuzzTargets {
    /// The files parsers' targets.
    static let files: [FuzzTarget] = [
        enrollLines, authorizedKeysLine, knownHosts, publicKeyFile, privateKeyFile, relaySettings, pairImage, sshConfig,
    ]
}
