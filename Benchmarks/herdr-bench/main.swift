import Foundation
import Glibc

// herdr-bench: performance targets, measured beside their anchors in the same run.
//   herdr-bench [ssh] [auth] [noise] [attest] [pair] [relay] [cluster] [companion] [terminal] [home] [host-memory] [idle]
//              [wan] [agents] [web]
//              run the suites (default: all), print Markdown; `wan` through the link emulator, its knobs
//              HERDR_BENCH_WAN_RTTS, _LOSSES, _ROADS, _PHASES, _KEYSTROKES, _RUNS (WanBenchmarks.swift)
//   herdr-bench terminal-keys  the relay road's keystroke phase alone (not in the default list)
//   herdr-bench wan-report [FILE]  the wan suite's Markdown from the results it saved (.build/bench/wan.json)
//   herdr-bench cluster-failover  the cluster's node-death phase alone (not in the default list)
//   herdr-bench stall-child   internal: the stalled-consumer scenario in a process of its own
//   herdr-bench splice-child [--forward PORT]  internal: the TCP splice anchor (a forwarder to PORT)
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "wan-report" {
    // The wan suite's Markdown again, from the results a run saved.
    let file = arguments.dropFirst().first ?? ".build/bench/wan.json"
    do {
        print(WanReport(results: try WanResults(contentsOf: URL(fileURLWithPath: file))).report(file: file).markdown)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("error: cannot read \(file): \(error)\n".utf8))
        exit(66)
    }
}
if arguments.first == "stall-child" {
    exit(await StallChild.run())
}
if arguments.first == "relay-child", arguments.count >= 3, let established = Int(arguments[2]) {
    exit(
        RelayBenchChildren.runRelay(
            database: arguments[1], established: established, proxied: arguments.dropFirst(3).first == "proxied"))
}
if arguments.first == "splice-child" {
    guard arguments.count == 1 || (arguments.count == 3 && arguments[1] == "--forward" && UInt16(arguments[2]) != nil)
    else {
        FileHandle.standardError.write(Data("usage: herdr-bench splice-child [--forward PORT]\n".utf8))
        exit(64)
    }
    exit(RelayBenchChildren.runSplice(forwardPort: arguments.count == 3 ? UInt16(arguments[2]) : nil))
}
let suites =
    arguments.isEmpty
    ? [
        "ssh", "auth", "noise", "attest", "pair", "relay", "cluster", "companion", "terminal", "home", "host-memory",
        "idle", "wan", "agents", "web",
    ]
    : arguments
let environment = ProcessInfo.processInfo.environment
let runs = Int(environment["HERDR_BENCH_RUNS"] ?? "") ?? 3
let keystrokes = Int(environment["HERDR_BENCH_KEYSTROKES"] ?? "") ?? 1000

var markdown = ""
for suite in suites {
    switch suite {
    case "ssh":
        print("SSH road: bulk throughput, keystroke round trip, memory under a stalled consumer")
        do {
            let bench = try SSHBenchmarks(runs: runs, keystrokes: keystrokes)
            defer { bench.destroy() }
            markdown += try await bench.run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: ssh benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "auth":
        print("Logins by key source: device key, key file, ssh-agent, beside ssh with the same keys")
        do {
            let bench = try AuthBenchmarks(runs: max(runs, 20))
            defer { bench.destroy() }
            markdown += try await bench.run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: auth benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "noise":
        print("Noise roads: XK handshakes per core, 64 KiB transport throughput, beside openssl speed")
        do {
            markdown += try NoiseBenchmarks(runs: runs).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: noise benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "attest":
        print("App Attest: attestations and assertions verified per second, beside openssl speed ecdsap384/ecdsap256")
        do {
            markdown += try AppAttestBenchmarks(runs: runs).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: attest benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "pair":
        print("QR pairing: herdr-remote pair to the first screen, beside ssh attaching to the same session")
        do {
            markdown += try PairBenchmarks(runs: max(runs, 5)).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: pair benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "relay":
        print("Relay: splice throughput, 64-byte round trips, parked rooms, signed joins, beside a TCP splice")
        do {
            let parked = Int(environment["HERDR_BENCH_PARKED"] ?? "") ?? 100_000
            markdown += try RelayBenchmarks(runs: runs, parkedRooms: parked, seconds: 5).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: relay benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "cluster", "cluster-failover":
        let failoverOnly = suite == "cluster-failover"
        print(
            failoverOnly
                ? "Relay cluster: a node killed under a live session, beside one reconnect"
                : "Relay cluster: a node's death, signed joins on Redis beside SQLite, splices through HAProxy, rooms over three nodes"
        )
        do {
            let parked = Int(environment["HERDR_BENCH_CLUSTER_PARKED"] ?? "") ?? 6000
            markdown += try ClusterBenchmarks(runs: runs, parkedRooms: parked, seconds: 5).run(
                failoverOnly: failoverOnly
            ).markdown
        } catch {
            FileHandle.standardError.write(Data("error: cluster benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "companion":
        print("Relay road: pairing to the room established, and the agent's re-park after a relay restart")
        do {
            markdown += try CompanionBenchmarks(runs: max(runs, 5)).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: companion benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "terminal", "terminal-keys":
        let keysOnly = suite == "terminal-keys"
        print(
            keysOnly
                ? "Relay road terminal: keystrokes alone, beside ssh -tt"
                : "Relay road terminal: keystrokes, cat 256 MiB, resume, memory, beside ssh -tt")
        do {
            let ssh = try SSHBenchmarks(runs: runs, keystrokes: keystrokes)
            defer { ssh.destroy() }
            markdown += try RelayTerminalBenchmarks(ssh: ssh, runs: runs, keystrokes: keystrokes).run(
                keystrokesOnly: keysOnly
            ).markdown
        } catch {
            FileHandle.standardError.write(Data("error: terminal benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "home":
        print("Home road terminal: keystrokes beside ssh -tt, and the switch to the relay when the home link dies")
        do {
            let ssh = try SSHBenchmarks(runs: runs, keystrokes: keystrokes)
            defer { ssh.destroy() }
            markdown += try HomeTerminalBenchmarks(ssh: ssh, runs: runs, keystrokes: keystrokes).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: home benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "idle":
        let seconds = max(5, Double(environment["HERDR_BENCH_IDLE_SECONDS"] ?? "") ?? 60)
        print("Idle connection: CPU and bytes per hour of liveness pings, beside ssh -tt's keepalives")
        do {
            let ssh = try SSHBenchmarks(runs: runs, keystrokes: keystrokes)
            defer { ssh.destroy() }
            markdown += try IdleBenchmarks(ssh: ssh, seconds: seconds).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: idle benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "wan":
        print(
            "Wide-area roads: keystrokes, Ctrl-C, cat, silent path death and network change, beside ssh -tt and mosh, through the link emulator"
        )
        do {
            markdown += try WanBenchmarks(environment: environment).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: wan benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "host-memory":
        let sessions = max(1, Int(environment["HERDR_BENCH_SESSIONS"] ?? "") ?? 300)
        print("herdr-host memory: RSS after 1, 100 and \(sessions) ended sessions of 16.9 MB, beside its idle RSS")
        do {
            markdown += try HostMemoryBenchmarks(sessions: sessions).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: host-memory benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "web":
        print("The web client in Chromium: crypto, page load, pairing, echo, Ctrl-C, a silent path death")
        do {
            markdown += try WebBenchmarks(runs: runs, keystrokes: keystrokes).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: web benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    case "agents":
        let changes = max(2, Int(environment["HERDR_BENCH_AGENT_CHANGES"] ?? "") ?? 50)
        let seconds = max(5, Double(environment["HERDR_BENCH_AGENTS_SECONDS"] ?? "") ?? 60)
        print(
            "herdr's agents: a status change to watch, agents across 3 computers, herdr-host's CPU with 100 idle agents"
        )
        do {
            markdown += try AgentsBenchmarks(changes: changes, idleSeconds: seconds, runs: runs).run().markdown
        } catch {
            FileHandle.standardError.write(Data("error: agents benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    default:
        FileHandle.standardError.write(
            Data(
                "error: unknown suite '\(suite)' (known: ssh, auth, noise, attest, pair, relay, cluster, cluster-failover, companion, terminal, terminal-keys, home, host-memory, idle, wan, agents)\n"
                    .utf8))
        exit(64)
    }
}
print("\n" + markdown)
let resultsDirectory = URL(fileURLWithPath: ".build/bench", isDirectory: true)
try? FileManager.default.createDirectory(at: resultsDirectory, withIntermediateDirectories: true)
try? Data(markdown.utf8).write(to: resultsDirectory.appendingPathComponent("latest.md"))
print("Results also written to .build/bench/latest.md; copy them into docs/benchmarks.md.")
