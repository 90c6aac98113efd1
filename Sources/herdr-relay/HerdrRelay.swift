import CLISupport

/// The command line of `herdr-relay`: the end-to-end relay server and a probe for relays.
enum HerdrRelay {
    static let exitCodes: [ExitCode] = [
        .success, .failure,
        ExitCode(3, meaning: "probe: the relay misbehaved; import-original: some rooms were refused."),
        .usage, .noInput, .unavailable,
    ]

    static let spec = CommandSpec(
        name: "herdr-relay",
        abstract:
            "The relay of herdr-remote's relay road: devices and computers meet in rooms; it sees only ciphertext.",
        discussion: """
            herdr-host parks in a room for each device paired with it, the device joins that room, and the \
            relay splices the two: what crosses is their end-to-end encrypted channel. It speaks the iTerm2 \
            companion relay protocol v1, so iTerm2's own clients can use it too ("Bring Your Own Relay"). \
            A relay for herdr-remote runs with ATTEST_REQUIRED=false (herdr-remote cannot do App Attest).

            Examples:
              herdr-relay serve --origin https://relay.example.com --listen 0.0.0.0:443 \\
                  --tls-cert fullchain.pem --tls-key privkey.pem
              ATTEST_REQUIRED=false herdr-relay serve --origin https://relay.example.com
              herdr-relay probe https://relay.example.com
              herdr-relay import-original /var/lib/iterm2-companion-relay/relay.db --dry-run
            """,
        version: "0.1.0",
        subcommands: [ServeCommand.spec, ProbeCommand.spec, ImportOriginalCommand.spec],
        exitCodes: exitCodes)
}
