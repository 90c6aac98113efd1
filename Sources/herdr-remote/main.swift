import CLISupport
import Glibc
import HerdrCrypto

// Before anything touches OpenSSL: no exit-time cleanup racing a connection thread.
OpenSSLRuntime.prepare()

// A closed stdout must end writes with EPIPE, not kill the process before the terminal is restored.
signal(SIGPIPE, SIG_IGN)

let herdrRemote = CommandSpec(
    name: "herdr-remote",
    abstract: "Reach a live herdr or tmux session on your computers over SSH.",
    discussion: """
        Files live in $XDG_CONFIG_HOME/herdr-remote (or ~/.config/herdr-remote): hosts.json, secrets.json \
        (passwords, 0600), known_hosts (pinned host keys, readable with ssh-keygen -F), id_ed25519 (this \
        device's key, 0600).

        Quick start:
          herdr-remote key                      # add this line to the host's ~/.ssh/authorized_keys
          herdr-remote add studio --host studio.tail1234.ts.net --session work
          herdr-remote connect studio

        Or pair from the QR code `herdr-pair` shows on the computer:
          herdr-remote pair --image qr.png      # or: herdr-remote pair 'herdr://pair?...'
        """,
    version: "0.1.0",
    subcommands: [
        HostCommands.hosts, HostCommands.add, SSHConfigImport.importCommand, HostCommands.remove, ConnectCommand.spec,
        PairCommand.spec,
        KeyCommands.key, KeyCommands.forgetHostKey, HostCommands.password,
    ],
    exitCodes: RemoteExitCode.allCodes)

await CommandLineTool.main(herdrRemote)
