import CLISupport

/// The command line of `herdr-host`: this computer's agent for herdr-remote's Noise roads.
enum HerdrHost {
    static let notRunning = ExitCode(3, meaning: "status: the agent is not running.")

    static let spec = CommandSpec(
        name: "herdr-host",
        abstract:
            "The computer's end of herdr-remote's end-to-end roads (relay, home network): pairs devices, serves sessions.",
        discussion: """
            A paired device reaches this computer through a relay (herdr-relay) from anywhere, or \
            straight on the home network, over an encrypted channel only the two ends can read.

            Pair a device with `herdr-host pair`: it shows a herdr://companion code (a QR and a line of \
            text) for herdr-remote pair; the device then shows a 6-digit code, which you type here. \
            `herdr-host run` keeps this computer reachable: it parks in each paired device's relay room, \
            reconnects by itself, listens for devices on the home network (home peers only), and runs each \
            device's sessions in herdr, as over SSH (`herdr-host config` changes what they run). Run it \
            as a systemd user service:

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
