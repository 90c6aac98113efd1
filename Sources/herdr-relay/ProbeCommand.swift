import CLISupport

/// `herdr-relay probe URL`: checks a relay end to end.
enum ProbeCommand {
    static let spec = CommandSpec(
        name: "probe",
        abstract: "Check that a relay speaks protocol v1: health, challenge, admission, splice.",
        arguments: [PositionalSpec("url", help: "The relay's origin, https://host[:port].")],
        exitCodes: [.success, .failure, .usage, .unavailable],
        handler: { _ in .failure })
}
