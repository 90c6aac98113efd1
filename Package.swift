// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "herdr-remote",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "HerdrKit", targets: ["HerdrKit", "HerdrBase"]),
        .executable(name: "herdr-remote", targets: ["herdr-remote"]),
    ],
    targets: [
        // C libraries from Debian, imported as-is through thin module maps.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibSSH2", pkgConfig: "libssh2", providers: [.apt(["libssh2-1-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CZBar", pkgConfig: "zbar", providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CLibPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM refuses; the header is in /usr/include.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "CVTerm", pkgConfig: "vterm", providers: [.apt(["libvterm-dev"])]),

        // MARK: Primitives: system calls, crypto, Noise, shared storage, the command line, addresses.
        // Linux calls Swift's Glibc module does not import (pipe2, eventfd, spawn closefrom).
        .target(name: "CSystem"),
        // Crypto primitives over OpenSSL 3.
        .target(name: "HerdrCrypto", dependencies: ["COpenSSL"]),
        // The Noise Protocol Framework (revision 34): CipherState, SymmetricState, HandshakeState, patterns as data.
        .target(name: "Noise", dependencies: ["HerdrCrypto"]),
        // What every herdr library shares: atomic files and locks, the config directory, herdr:// links
        // and their rules, herdr session names. HerdrKit re-exports it.
        .target(name: "HerdrBase", dependencies: ["HerdrCrypto"]),
        // What every command-line program of the project shares: arguments, raw terminal, prompts.
        .target(name: "CLISupport"),
        // What a peer address is (loopback, home, tailnet, public…), the policies on it, a home door's
        // address. Pure, no I/O.
        .target(name: "PeerGate"),
        // The TCP listener every server of the project uses: the peer policy before any byte, GET /status.
        .target(name: "PeerGateListener", dependencies: ["PeerGate", "CSystem"]),

        // MARK: Under the roads: the network under a connection, road-neutral plumbing, the wire codecs.
        // What the network does under a connection: its ends still carried, the kernel's news.
        .target(name: "NetworkPath", dependencies: ["PeerGate", "PeerGateListener", "CSystem"]),
        // Road-neutral plumbing: the frame pipe both Noise roads carry the channel on (its events,
        // its end, its errors), the monotonic clock and deadlines, the queues threads hand work on.
        .target(name: "Plumbing", dependencies: ["NetworkPath", "RelayProtocol"]),
        // HTTP/1.1 upgrade and RFC 6455 WebSocket framing, both roles. Pure codecs, no I/O.
        .target(name: "WebWire", dependencies: ["HerdrCrypto", "PeerGateListener"]),
        // TLS over non-blocking sockets with OpenSSL 3, for event loops (server and client).
        .target(name: "TLS", dependencies: ["COpenSSL"]),
        // A QR code for the terminal (libqrencode, drawn in half blocks): herdr-pair's and herdr-host's codes.
        .target(name: "TerminalQR", dependencies: ["CQREncode"]),
        // `herdr-remote pair --image`'s reader: a PNG (libpng) to the text of its QR codes (zbar).
        .target(name: "PairImage", dependencies: ["CZBar", "CLibPNG"]),

        // MARK: The roads: the relay protocol and its client, the home road's pipe.
        // What the relay and its clients share: canonical encoding, room names, transcripts, the join key.
        .target(name: "RelayProtocol", dependencies: ["HerdrCrypto"]),
        // The relay protocol's client side: admission as the computer or the device, splice, keepalive,
        // reconnect, HTTP endpoints.
        .target(
            name: "RelayClient",
            dependencies: ["RelayProtocol", "WebWire", "TLS", "HerdrCrypto", "CSystem", "NetworkPath", "Plumbing"]),
        // The home road's pipe: length-prefixed Noise messages over TCP (HomeConnection).
        .target(
            name: "HomeRoad", dependencies: ["Plumbing", "PeerGate", "PeerGateListener", "CSystem", "NetworkPath"]),

        // MARK: The companion channel over the Noise roads: the channel, what crosses it, pairing,
        // the roads as a device takes them, the device's connection.
        // The companion channel, end to end on both Noise roads: the XK handshake and its profile
        // (prologue, SAS), chunked transport with fatal AEAD failure, framed over a FramePipe, the
        // device's static key file.
        .target(name: "EndToEndChannel", dependencies: ["Noise", "HerdrCrypto", "HerdrBase", "Plumbing"]),
        // What crosses the channel: the control messages (`{"ping":7}`, `{"status":…}`), the
        // session protocol's messages and the one rule telling control, session and agents
        // messages apart; flow and credit; both sides' session state (the device's
        // `DeviceSession`, the computer's `HostSessionTable`). Pure, no I/O.
        .target(
            name: "SessionProtocol",
            dependencies: [
                "EndToEndChannel", "HerdrAgents", "HerdrBase", "HerdrCrypto", "PeerGate", "RelayProtocol",
                "ScreenModel",
            ]),
        // Pairing over the Noise roads: the companion code (QR), both sides' pairing confirmation
        // machines, and the device's runner of a pairing through the relay or the home network.
        .target(
            name: "CompanionPairing",
            dependencies: [
                "EndToEndChannel", "SessionProtocol", "HerdrBase", "HerdrCrypto", "HomeRoad", "Noise", "PeerGate",
                "Plumbing", "RelayClient", "RelayProtocol",
            ]),
        // The Noise roads as a paired device takes them: the home addresses and the relay raced
        // (`DeviceRoads`), the relay road's signed join, the greeting on either road (handshake,
        // status, ack), an attempt's handle to call it off.
        .target(
            name: "NoiseRoads",
            dependencies: [
                "EndToEndChannel", "SessionProtocol", "HerdrCrypto", "HomeRoad", "NetworkPath", "Noise", "PeerGate",
                "Plumbing", "RelayClient", "RelayProtocol",
            ]),
        // The device's connection to its computer: `DeviceConnectionMachine` (pure, injected
        // clock: reconnecting, racing, the home probe, liveness, the frame budget, the window,
        // input resent, the agents board) and `DeviceConnection`, the thin shell that runs it.
        .target(
            name: "CompanionDevice",
            dependencies: [
                "NoiseRoads", "EndToEndChannel", "SessionProtocol", "HerdrAgents", "NetworkPath", "PeerGate",
                "Plumbing", "RelayClient", "ScreenModel",
            ]),

        // MARK: Screen sessions: the terminal's screen kept on the computer.
        // A terminal's screen as values both sides share: cells (text, width, colours, attributes),
        // the cursor, the modes, the title. Pure, no C.
        .target(name: "ScreenModel"),
        // A terminal emulator (libvterm) per screen session: the program's output in, the screen
        // out, with the bell and a bounded scrollback.
        .target(name: "TerminalScreen", dependencies: ["CVTerm", "ScreenModel"]),

        // MARK: herdr's agents: the board, and herdr-host's reader of herdr.
        // herdr's agents as a board: statuses, sessions, the agents family's messages in the
        // companion channel, herdr's own JSON. Pure, no I/O.
        .target(name: "HerdrAgents", dependencies: ["HerdrBase", "RelayProtocol"]),
        // herdr-host's reader of herdr's socket API: the watcher's state machine (pure, injected
        // clock), herdr's directory, the socket client with its time limits, the threads around them.
        .target(name: "HerdrWatch", dependencies: ["HerdrAgents", "HerdrBase", "RelayProtocol", "Plumbing"]),

        // MARK: The device: the SSH road's client, the client core, `herdr-remote`.
        // An SSH client connection over libssh2, on a thread of its own.
        .target(name: "SSHClient", dependencies: ["CLibSSH2", "CSystem", "HerdrCrypto", "NetworkPath"]),
        // The client core: profiles, stores, keys, pins, terminal sessions on both roads.
        .target(
            name: "HerdrKit",
            dependencies: [
                "HerdrBase", "HerdrCrypto", "SSHClient", "PeerGate", "CompanionDevice", "EndToEndChannel", "NoiseRoads",
                "RelayClient", "RelayProtocol",
                "HomeRoad", "HerdrAgents", "NetworkPath", "Plumbing", "ScreenModel", "SessionProtocol",
            ]),
        .executableTarget(
            name: "herdr-remote",
            dependencies: [
                "HerdrKit", "CompanionPairing", "EndToEndChannel", "NoiseRoads", "PeerGate", "RelayClient", "HomeRoad",
                "CLISupport", "PairImage", "HerdrAgents",
                "Plumbing", "ScreenModel", "SessionProtocol",
            ]),

        // MARK: The computer: `herdr-pair` (the SSH road's pairing), `herdr-host` (the Noise roads).
        // herdr-pair's library, the computer side of SSH pairing: authorized_keys editing, the
        // enroll exchange, its state and sweep.
        .target(name: "SSHPairingHost", dependencies: ["HerdrKit", "HerdrCrypto", "CSystem", "CLISupport"]),
        .executableTarget(
            name: "herdr-pair", dependencies: ["SSHPairingHost", "TerminalQR", "HerdrKit", "HerdrCrypto", "CLISupport"]),
        // herdr-host's library, the computer's agent for the Noise roads: its channel table (one
        // record per channel on either road, pure), the rooms it parks in, the home door, the
        // PTYs, the paired devices, the pairing confirmation's I/O.
        .target(
            name: "HerdrHostAgent",
            dependencies: [
                "CompanionPairing", "EndToEndChannel", "SessionProtocol", "RelayClient", "RelayProtocol", "HerdrKit",
                "HerdrCrypto", "Noise", "CLISupport",
                "HomeRoad", "PeerGate", "PeerGateListener", "NetworkPath", "HerdrAgents", "HerdrWatch", "Plumbing",
                "ScreenModel", "TerminalScreen",
            ]),
        .executableTarget(
            name: "herdr-host",
            dependencies: [
                "HerdrHostAgent", "CompanionPairing", "EndToEndChannel", "PeerGate", "RelayClient", "RelayProtocol",
                "TerminalQR", "HerdrKit", "Noise",
                "CLISupport", "HomeRoad", "PeerGateListener", "Plumbing", "WebClient",
            ]),

        // MARK: The relay: `herdr-relay`.
        // The web client's static files as a relay serves them and as herdr-host pair checks them:
        // which files, their hashes and the manifest's. Pure but for the loader.
        .target(name: "WebClient", dependencies: ["HerdrCrypto", "PeerGateListener"]),
        // What the relay keeps across restarts (rooms, verifiers, quotas, tickets): SQLite, Redis or memory.
        .target(name: "RelayStorage", dependencies: ["CSQLite", "CHiredis", "HerdrCrypto", "RelayProtocol"]),
        // App Attest evidence checked as Apple documents it: CBOR, authenticator data, the X.509 chain, assertions.
        .target(name: "AppAttest", dependencies: ["COpenSSL", "HerdrCrypto"]),
        // herdr-relay's state machines (pure, injected clock) and its epoll I/O shell.
        .target(
            name: "RelayServer",
            dependencies: [
                "RelayProtocol", "RelayStorage", "WebWire", "TLS", "PeerGate", "PeerGateListener", "HerdrCrypto",
                "AppAttest", "WebClient",
                "CSystem",
            ]),
        // herdr-relay serve's command line: its spec, its settings from flags and environment. Pure.
        .target(
            name: "RelayCommandLine",
            dependencies: [
                "CLISupport", "PeerGate", "RelayClient", "RelayProtocol", "RelayServer", "RelayStorage", "AppAttest",
                "Plumbing", "WebClient",
            ]),
        .executableTarget(
            name: "herdr-relay",
            dependencies: [
                "RelayServer", "RelayStorage", "RelayClient", "CLISupport", "HerdrCrypto", "RelayCommandLine",
                "WebClient",
            ]),
        // Performance targets beside their anchors (OpenSSH, openssl speed, raw sockets): `make bench`.
        .executableTarget(

            // MARK: Benchmarks, fuzzing, the link emulator, test support.
            name: "herdr-bench",
            dependencies: [
                "HerdrKit", "SSHClient", "TestSupport", "Noise", "CompanionDevice", "EndToEndChannel", "RelayServer",
                "RelayStorage",
                "RelayProtocol", "AppAttest", "HerdrCrypto",
                "CSystem",
            ],
            path: "Benchmarks/herdr-bench"),
        // Every parser under libFuzzer (`make fuzz`); built without the fuzzer it replays inputs
        // (the committed corpus, the regression inputs) for `make test`.
        .target(name: "CFuzzDriver", path: "Fuzz/CFuzzDriver"),
        .executableTarget(
            name: "herdr-fuzz",
            dependencies: [
                "CFuzzDriver", "HomeRoad", "RelayStorage", "RelayProtocol", "RelayServer", "WebWire", "PeerGate",
                "PeerGateListener", "CompanionPairing", "EndToEndChannel", "SessionProtocol", "ScreenModel", "Noise",
                "HerdrBase",
                "HerdrKit", "HerdrCrypto", "SSHPairingHost",
                "CLISupport", "RelayCommandLine", "PairImage", "AppAttest", "HerdrAgents", "HerdrWatch", "WebClient",
            ],
            path: "Fuzz/herdr-fuzz",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        // The link emulator's model for tests and benchmarks: delay, jitter, loss, bursts, rate
        // limits and link states, a router between links. Pure: the clock and randomness come in.
        .target(name: "LinkEmulator"),
        // The link emulator's I/O shell: TUN devices in network namespaces, one epoll loop, a
        // control channel on stdin. A test and benchmark tool, not installed.
        .executableTarget(name: "herdr-link", dependencies: ["LinkEmulator", "CSystem"], path: "Tools/herdr-link"),
        // Real peers for tests and benchmarks: sshd, tmux, temporary directories, processes.
        .target(
            name: "TestSupport", dependencies: ["CSystem", "CSQLite", "HerdrCrypto", "LinkEmulator"],
            path: "Tests/TestSupport", exclude: ["HerdrStandIn", "PhoneBrowser"]),
        .testTarget(

            // MARK: Tests.
            name: "LinkEmulatorTests", dependencies: ["LinkEmulator", "herdr-link", "herdr-relay", "TestSupport"],
            exclude: ["Peers"]),
        .testTarget(name: "SSHClientTests", dependencies: ["SSHClient", "TestSupport"]),
        .testTarget(
            name: "HerdrKitTests",
            dependencies: ["HerdrKit", "HerdrAgents", "TestSupport", "ScreenModel", "TerminalScreen"]),
        .testTarget(name: "CLISupportTests", dependencies: ["CLISupport", "TestSupport"]),
        .testTarget(name: "HerdrCryptoTests", dependencies: ["HerdrCrypto"]),
        .testTarget(name: "TerminalScreenTests", dependencies: ["TerminalScreen", "ScreenModel", "TestSupport"]),
        .testTarget(name: "HerdrAgentsTests", dependencies: ["HerdrAgents"]),
        .testTarget(name: "HerdrWatchTests", dependencies: ["HerdrWatch", "HerdrAgents", "TestSupport"]),
        .testTarget(
            name: "NoiseTests",
            dependencies: ["Noise", "EndToEndChannel", "RelayProtocol", "HerdrCrypto", "TestSupport"],
            exclude: ["Peers", "Vectors"]),
        .testTarget(name: "FuzzReplayTests", dependencies: ["herdr-fuzz", "TestSupport"]),
        .testTarget(name: "PlumbingTests", dependencies: ["Plumbing"]),
        .testTarget(name: "NetworkPathTests", dependencies: ["NetworkPath", "PeerGateListener", "TestSupport"]),
        .testTarget(name: "HomeRoadTests", dependencies: ["HomeRoad", "PeerGate", "Plumbing"]),
        .testTarget(name: "PeerGateTests", dependencies: ["PeerGate", "PeerGateListener", "TestSupport"]),
        .testTarget(name: "HerdrRemoteTests", dependencies: ["herdr-remote", "HerdrKit", "TestSupport"]),
        // What `make install` ships: the programs' completion scripts and man pages, scripts/install.sh.
        .testTarget(
            name: "PackagingTests",
            dependencies: ["herdr-remote", "herdr-pair", "herdr-host", "herdr-relay", "TestSupport"]),
        .testTarget(
            name: "SSHPairingHostTests",
            dependencies: ["SSHPairingHost", "HerdrKit", "HerdrCrypto", "CLISupport", "TestSupport"]),
        .testTarget(name: "TerminalQRTests", dependencies: ["TerminalQR", "TestSupport"]),
        .testTarget(name: "HerdrPairTests", dependencies: ["herdr-pair", "SSHPairingHost", "HerdrKit", "TestSupport"]),
        .testTarget(name: "WebWireTests", dependencies: ["WebWire", "PeerGateListener"]),
        .testTarget(name: "TLSTests", dependencies: ["TLS", "TestSupport", "Plumbing"]),
        .testTarget(name: "RelayStorageTests", dependencies: ["RelayStorage", "TestSupport"]),
        .testTarget(name: "AppAttestTests", dependencies: ["AppAttest", "HerdrCrypto", "TestSupport"]),
        .testTarget(
            name: "RelayServerTests",
            dependencies: [
                "RelayServer", "RelayStorage", "RelayProtocol", "WebWire", "HerdrCrypto", "AppAttest", "TestSupport",
                "WebClient",
            ]),
        .testTarget(
            name: "RelayClientTests",
            dependencies: ["RelayClient", "RelayServer", "RelayStorage", "RelayProtocol", "TestSupport", "Plumbing"]),
        .testTarget(
            name: "HerdrRelayTests",
            dependencies: [
                "herdr-relay", "herdr-host", "herdr-remote", "HerdrCrypto", "RelayProtocol", "RelayClient",
                "TestSupport", "Plumbing",
            ]),
        .testTarget(
            name: "CompanionTests",
            dependencies: [
                "CompanionDevice", "CompanionPairing", "EndToEndChannel", "NoiseRoads", "PeerGate", "SessionProtocol",
                "HerdrKit", "RelayClient", "RelayProtocol", "HerdrCrypto", "Noise", "TestSupport",
                "HomeRoad", "NetworkPath", "HerdrAgents", "Plumbing", "ScreenModel", "TerminalScreen", "LinkEmulator",
            ]),
        .testTarget(
            name: "HerdrHostAgentTests",
            dependencies: [
                "herdr-host", "herdr-remote", "herdr-relay", "HerdrHostAgent", "CompanionPairing", "EndToEndChannel",
                "NoiseRoads", "SessionProtocol", "HerdrKit", "RelayClient",
                "RelayServer", "RelayStorage", "RelayProtocol", "WebWire", "HerdrCrypto", "Noise", "TestSupport",
                "HomeRoad", "PeerGate", "PeerGateListener", "CSystem", "Plumbing",
            ],
            exclude: ["Peers"]),
    ]
)

// Release builds specialize and inline across modules: a keystroke on the Noise roads crosses
// half a dozen of them (HomeRoad, Companion, Noise, HerdrCrypto, the agent), and unspecialized
// generics there cost a runtime metadata lookup per call.
for target in package.targets where target.type != .system && !target.name.hasPrefix("C") {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]
}
