import CLISupport
import Glibc
import HerdrCrypto

// Before anything touches OpenSSL: no exit-time cleanup racing a connection thread.
OpenSSLRuntime.prepare()

// A closed stdout must end writes with EPIPE, not kill the process before the terminal is restored.
signal(SIGPIPE, SIG_IGN)

let herdrRemote = CommandSpec(
    name: "herdr-remote",
    abstract:
        "Reach a live herdr or tmux session on your own computers over SSH, through a relay, or on the home network.",
    discussion: """
        Three roads. SSH, usually on a tailnet such as Tailscale: add the host, or pair from the QR code \
        herdr-pair shows on the computer. End to end encrypted to herdr-host on the computer: pair from \
        the code herdr-host pair shows; connect then goes straight to the computer on the home network, \
        or through a relay (herdr-relay) from anywhere, and a session resumes where it was after a drop.

        Over SSH:
          herdr-remote key                      # add this line to the host's ~/.ssh/authorized_keys
          herdr-remote add studio --host studio.tail1234.ts.net --session work
          herdr-remote connect studio

        From the code herdr-pair or herdr-host pair shows:
          herdr-remote pair --image qr.png      # or: herdr-remote pair 'herdr://...'

        Files live in $XDG_CONFIG_HOME/herdr-remote (or ~/.config/herdr-remote): hosts.json, secrets.json \
        (passwords and room secrets, 0600), known_hosts (pinned SSH host keys, readable with ssh-keygen \
        -F), id_ed25519 (this device's SSH key, 0600), companion_key (its key for the end-to-end roads, 0600).
        """,
    version: "0.1.0",
    subcommands: [
        HostCommands.hosts, HostCommands.add, SSHConfigImport.importCommand, HostCommands.remove, ConnectCommand.spec,
        SessionsCommand.spec, AgentsCommand.spec, WatchCommand.spec, PairCommand.spec,
        KeyCommands.key, KeyCommands.forgetHostKey, HostCommands.password,
    ],
    exitCodes: RemoteExitCode.allCodes)

await CommandLineTool.main(herdrRemote)
