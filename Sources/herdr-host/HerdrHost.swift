import CLISupport

/// The command line of `herdr-host`: this computer's agent for herdr-remote's Noise roads.
enum HerdrHost {
    static let notRunning = ExitCode(3, meaning: "status: the agent is not running.")

    static let spec = CommandSpec(
        name: "herdr-host",
        abstract:
            "This computer's agent for herdr-remote's end-to-end roads (relay, home network): pairing, terminal sessions.",
        discussion: """
            Pair a device with `herdr-host pair`: it shows a herdr://companion code (a QR and a line of \
            text) that herdr-remote scans; the device then shows a 6-digit code, which you type here. \
            `herdr-host run` keeps this computer reachable: it parks in every paired device's room on \
            the relay, reconnects by itself, listens for devices on the home network (home peers only), \
            and serves each device's terminal sessions (`herdr-remote connect` lands in herdr here, as \
            over SSH; `herdr-host config` changes what sessions run and where the home door listens). \
            Run it as a systemd user service:

              systemctl --user enable --now herdr-host

            State lives in $XDG_CONFIG_HOME/herdr-host (or ~/.config/herdr-host), every file 0600: the \
            computer's Noise static key, the paired devices and their room secrets. Nothing secret is \
            ever printed or logged.

            Examples:
              herdr-host pair --relay https://relay.example.com
              herdr-host devices
              herdr-host unpair phone
              herdr-host status
              herdr-host config session-command 'tmux new-session -A -s main'
            """,
        version: "0.1.0",
        subcommands: [
            PairCommand.spec, RunCommand.spec, DeviceCommands.devices, DeviceCommands.unpair, DeviceCommands.status,
            ConfigCommand.spec,
        ],
        exitCodes: [.success, .failure, notRunning, .usage, .unavailable, .hangup, .interrupted, .terminated])
}
