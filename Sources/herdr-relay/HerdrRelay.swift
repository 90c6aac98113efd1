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
        abstract: "The end-to-end encrypted relay: phones and computers meet in rooms; it sees only ciphertext.",
        discussion: """
            Speaks the iTerm2 companion relay protocol v1, so iTerm2's own clients can use it \
            ("Bring Your Own Relay") as well as herdr-remote's.

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
