import Foundation
import Glibc
import HerdrKit

/// The stalled-consumer scenario, run as a child process so its peak RSS is measured alone:
/// a TerminalSession whose first onOutput blocks 3 s while the host writes 64 MiB.
@MainActor
enum StallChild {
    static func run() async -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        guard let host = environment["HERDR_BENCH_HOST"], let port = Int(environment["HERDR_BENCH_PORT"] ?? ""),
            let user = environment["HERDR_BENCH_USER"], let config = environment["HERDR_BENCH_CONFIG"]
        else {
            FileHandle.standardError.write(Data("stall-child needs HERDR_BENCH_HOST/PORT/USER/CONFIG\n".utf8))
            return 64
        }
        let store = HostStore(directory: ConfigDirectory(url: URL(fileURLWithPath: config)))
        let total = SSHBenchmarks.stallBytes
        let profile = HostProfile(
            name: "stall", hostname: host, port: port, username: user,
            remoteCommand: "head -c \(total) /dev/zero; sleep 1")
        let session = TerminalSession(profile: profile, store: store, options: TerminalSessionOptions()) { _ in false }
        let baseline = peakRSSKiB()
        var received = 0
        var stalled = false
        session.onOutput = { bytes in
            received += bytes.count
            if !stalled {
                stalled = true
                usleep(3_000_000)
            }
        }
        await session.connect(cols: 80, rows: 24)
        while received < total && !session.state.isFinal {
            try? await Task.sleep(for: .milliseconds(10))
        }
        session.disconnect()
        guard received == total else {
            print("received \(received) of \(total): \(session.state)")
            return 1
        }
        print("peak_kib=\(peakRSSKiB()) baseline_kib=\(baseline)")
        return 0
    }
}
