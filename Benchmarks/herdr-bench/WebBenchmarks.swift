import Foundation
import Glibc
import TestSupport

/// `herdr-bench web` (issue 43): the web client in Debian's chromium (phone emulation, Playwright),
/// on the `wan` suite's emulated network with the relay serving the client (`--web-client`), each
/// measure beside its anchor in the same run: its crypto against WebCrypto's; the page's load on a
/// 150 ms link against one `curl` of its index; its pairing against `herdr-remote pair`'s;
/// keystroke echo, Ctrl-C during `yes` and a silent path death against `connect --screen` and
/// mosh on the same link.
@MainActor
final class WebBenchmarks {
    let runs: Int
    let keystrokes: Int
    private var report = BenchReport(
        title: "Web client in Chromium (issue 43): the phone's browser on the emulated link")
    private var pairingTimes: (browser: PairingTime, cli: PairingTime)?
    private var browser: PhoneBrowser?
    private var chromiumArguments: [String] = []

    /// Seconds from opening the code to the six digits shown, and from typing them on the
    /// computer to the device saying it is paired.
    struct PairingTime {
        var toDigits: Double
        var afterTyping: Double
    }

    static let origin = "https://relay.test:8443"

    init(runs: Int, keystrokes: Int) {
        self.runs = runs
        self.keystrokes = keystrokes
    }

    func run() throws -> BenchReport {
        let root = try TemporaryDirectory(prefix: "herdr-bench-web-")
        defer { root.remove() }
        let webRoot = try Self.webRoot(in: root)
        let roads = try WanRoads(webRoot: webRoot) { [self] roads in
            try self.pairBrowserAndDevice(roads)
        }
        defer {
            browser = nil
            roads.stop()
        }
        let phases = Self.phases(ProcessInfo.processInfo.environment["HERDR_BENCH_WEB_PHASES"])
        if phases.contains("crypto") { try crypto() }
        if phases.contains("load") { try pageLoad(roads) }
        if phases.contains("pairing") { try addPairing() }
        if phases.contains("echo") { try echo(roads) }
        if phases.contains("interrupt") { try interrupt(roads) }
        if phases.contains("death") { try silentDeath(roads) }
        return report
    }

    static let allPhases = ["crypto", "load", "pairing", "echo", "interrupt", "death"]

    /// The phases HERDR_BENCH_WEB_PHASES names (a comma list of `allPhases`; empty: all).
    static func phases(_ setting: String?) -> Set<String> {
        guard let setting, !setting.isEmpty else { return Set(allPhases) }
        return Set(setting.split(separator: ",").map(String.init)).intersection(allPhases)
    }

    /// The web client as the relay serves it (this checkout's `Web/`), with the in-browser crypto
    /// benchmark (`Web/bench/browser-crypto.*`) in `cryptobench/`: the relay never serves `bench/`.
    static func webRoot(in root: TemporaryDirectory) throws -> String {
        let web = FileManager.default.currentDirectoryPath + "/Web"
        guard FileManager.default.fileExists(atPath: web + "/index.html") else {
            throw FixtureError("no web client at \(web): run herdr-bench from the checkout")
        }
        let served = root.appending("web").path
        try ProcessRunner.run(
            "/bin/sh",
            [
                "-c",
                "cp -r \"$1\" \"$2\" && mkdir \"$2/cryptobench\" && cp \"$1\"/bench/browser-crypto.html \"$1\"/bench/browser-crypto.js \"$2/cryptobench/\"",
                "sh", web, served,
            ], timeout: 30, check: true)
        return served
    }

    // MARK: - Pairing (before herdr-host run starts, on a 150 ms link)

    private func pairBrowserAndDevice(_ roads: WanRoads) throws -> Int {
        try roads.setPath(rtt: 150, loss: 0)
        defer { try? roads.setPath(rtt: 0, loss: 0) }
        let spki = try ProcessRunner.run(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
                "sh", roads.relayCertificate,
            ], timeout: 20, check: true
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // The test CA's relay, trusted by its key alone: the page stays a secure context.
        chromiumArguments = ["--ignore-certificate-errors-spki-list=\(spki)"]
        let phone = try PhoneBrowser(
            namespace: try roads.network.namespace("device"), chromiumArguments: chromiumArguments)
        browser = phone
        let browserTime = try pairBrowser(phone, roads)
        let cliTime = try pairCommandLine(roads, device: "phone-timed")
        pairingTimes = (browserTime, cliTime)
        return 2
    }

    private func startHostPair(_ roads: WanRoads, web: Bool) throws -> (InteractiveProcess, String) {
        let host = try roads.network.interactive(
            in: "computer", BuiltProgram.path("herdr-host"),
            ["pair", "--relay", Self.origin, "--name", "wan"] + (web ? ["--web"] : []),
            environment: roads.hostEnvironment)
        guard let code = host.waitForCompanionCode(), host.waitFor("waiting for a device") else {
            throw FixtureError("herdr-host pair showed no code: \(host.stdout) \(host.stderr)")
        }
        return (host, code)
    }

    private func pairBrowser(_ phone: PhoneBrowser, _ roads: WanRoads) throws -> PairingTime {
        let (host, code) = try startHostPair(roads, web: true)
        let opened = now()
        try phone.open(code)
        try phone.waitUntil("() => /\\d{3}\\s\\d{3}/.test(document.querySelector('#pairing-code')?.textContent ?? '')")
        let shown = now()
        let digits = String(try phone.text("#pairing-code").filter(\.isASCII).filter(\.isNumber))
        guard host.waitFor("Type the code it shows") else { throw FixtureError("not asked: \(host.stdout)") }
        let typed = now()
        host.writeLine(digits)
        try phone.waitFor("#pairing-state", text: "Paired with wan", visible: false, timeout: 60)
        let paired = now()
        guard host.wait(timeout: 30) == 0 else { throw FixtureError("herdr-host pair failed: \(host.stdout)") }
        return PairingTime(toDigits: shown - opened, afterTyping: paired - typed)
    }

    private func pairCommandLine(_ roads: WanRoads, device: String) throws -> PairingTime {
        let (host, code) = try startHostPair(roads, web: false)
        let opened = now()
        let remote = try roads.network.interactive(
            in: "device", BuiltProgram.path("herdr-remote"), ["pair", code, "--yes", "--no-connect", "--name", device],
            environment: roads.deviceEnvironment(device))
        guard let digits = remote.waitForMatch(#"Type this code on [^:]+: (\d{3} \d{3})"#) else {
            throw FixtureError("herdr-remote pair showed no code: \(remote.stderr)")
        }
        let shown = now()
        guard host.waitFor("Type the code it shows") else { throw FixtureError("not asked: \(host.stdout)") }
        let typed = now()
        host.writeLine(digits)
        guard remote.wait(timeout: 60) == 0 else { throw FixtureError("herdr-remote pair failed: \(remote.stderr)") }
        let paired = now()
        guard host.wait(timeout: 30) == 0 else { throw FixtureError("herdr-host pair failed: \(host.stdout)") }
        return PairingTime(toDigits: shown - opened, afterTyping: paired - typed)
    }

    private func addPairing() throws {
        guard let (browser, cli) = pairingTimes else { return }
        report.add(
            "pairing, RTT 150 ms: the code opened → six digits shown", ours: "\(format(browser.toDigits * 1000, 0)) ms",
            anchor: "\(format(cli.toDigits * 1000, 0)) ms (herdr-remote pair)",
            ratio: "\(format(browser.toDigits / cli.toDigits))×", target: "< 3 s")
        report.add(
            "pairing, RTT 150 ms: the digits typed on the computer → paired",
            ours: "\(format(browser.afterTyping * 1000, 0)) ms",
            anchor: "\(format(cli.afterTyping * 1000, 0)) ms (herdr-remote pair)",
            ratio: "\(format(browser.afterTyping / cli.afterTyping))×", target: "≤ 1.25×")
    }

    // MARK: - Crypto in the page

    private func crypto() throws {
        guard let phone = browser else { return }
        try phone.open(Self.origin + "/cryptobench/browser-crypto.html")
        let seconds = 0.5
        guard
            let result = try phone.evaluate(
                "async () => await globalThis.runCryptoBench(\(seconds))", timeout: 300) as? [String: Any],
            let rows = result["rows"] as? [[String: Any]]
        else { throw FixtureError("the crypto benchmark gave no rows") }
        for row in rows {
            guard let name = row["name"] as? String, let ours = row["ours"] as? Double,
                let anchor = row["anchor"] as? Double, let unit = row["unit"] as? String
            else { continue }
            let anchorName = row["anchorName"] as? String ?? "WebCrypto"
            report.add(
                "in Chromium: \(name)", ours: "\(format(ours, 1)) \(unit)",
                anchor: "\(format(anchor, 1)) \(unit) (\(anchorName))",
                ratio: "\(format(ours / anchor))×", target: "report")
        }
        if let agent = result["userAgent"] as? String { report.notes.append("Browser: \(agent).") }
    }

    // MARK: - The page's load

    private func pageLoad(_ roads: WanRoads) throws {
        try roads.setPath(rtt: 150, loss: 0)
        defer { try? roads.setPath(rtt: 0, loss: 0) }
        let loader = try PhoneBrowser(
            namespace: try roads.network.namespace("device"), chromiumArguments: chromiumArguments)
        var ready: [Double] = []
        var loaded: [Double] = []
        var transferred = 0
        var files = 0
        for _ in 0..<runs {
            try loader.startAfresh()
            let start = now()
            try loader.open(Self.origin + "/")
            try loader.waitFor("#board .empty", timeout: 60)
            ready.append(now() - start)
            guard
                let timing = try loader.evaluate(
                    """
                    () => {
                      const navigation = performance.getEntriesByType('navigation')[0];
                      const resources = performance.getEntriesByType('resource');
                      return { load: navigation.loadEventEnd, files: resources.length + 1,
                        bytes: resources.reduce((sum, entry) => sum + entry.transferSize, navigation.transferSize) };
                    }
                    """) as? [String: Any]
            else { throw FixtureError("no navigation timing") }
            loaded.append((timing["load"] as? Double ?? 0) / 1000)
            transferred = timing["bytes"] as? Int ?? Int(timing["bytes"] as? Double ?? 0)
            files = timing["files"] as? Int ?? 0
        }
        var fetches: [Double] = []
        var indexBytes = 0
        for _ in 0..<runs {
            let result = try roads.network.run(
                in: "device", "curl",
                [
                    "-s", "-o", "/dev/null", "--cacert", roads.deviceEnvironment()["SSL_CERT_FILE"] ?? "", "-w",
                    "%{time_total} %{size_download}", Self.origin + "/",
                ], timeout: 30)
            let parts = result.stdout.split(separator: " ")
            guard result.status == 0, parts.count == 2, let seconds = Double(parts[0]) else {
                throw FixtureError("curl failed: \(result.stdout) \(result.stderr)")
            }
            fetches.append(seconds)
            indexBytes = Int(parts[1]) ?? 0
        }
        let anchor = median(fetches)
        report.add(
            "page load, RTT 150 ms, cold cache: address → load event", ours: "\(format(median(loaded) * 1000, 0)) ms",
            anchor: "\(format(anchor * 1000, 0)) ms (curl of its index.html alone: TCP, TLS, one GET)",
            ratio: "\(format(median(loaded) / anchor))×", target: "report")
        report.add(
            "page load, RTT 150 ms, cold cache: address → the board drawn",
            ours: "\(format(median(ready) * 1000, 0)) ms",
            anchor: "\(format(anchor * 1000, 0)) ms (curl of its index.html)",
            ratio: "\(format(median(ready) / anchor))×",
            target: "< 2 s")
        report.add(
            "page transferred, cold cache", ours: "\(transferred / 1024) KiB in \(files) files",
            anchor: "\(indexBytes) bytes (index.html)", ratio: "—", target: "report")
    }

    // MARK: - The terminal

    /// Opens the computer's terminal on the board (the session command the roads set), once the
    /// page says it goes through the relay.
    private func openTerminal(_ phone: PhoneBrowser, predict: String) throws {
        try phone.open(Self.origin + "/")
        try phone.evaluate("() => localStorage.setItem('herdr.predict', \(WebPageProbe.jsString(predict)))")
        try phone.reload()
        try phone.waitFor(".computer", text: "wan", timeout: 60)
        try phone.tap("button.open-terminal")
        try phone.waitFor("#road", text: "through relay.test", timeout: 60)
    }

    private func echo(_ roads: WanRoads) throws {
        guard let phone = browser else { return }
        let count = max(20, keystrokes / 10)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        for rtt in [50.0, 150.0] {
            try roads.setPath(rtt: rtt, loss: 0)
            var browserSamples: [String: [Double]] = [:]
            for predict in ["adaptive", "never"] {
                try roads.useSessionCommand(SSHBenchmarks.echoCommand)
                try openTerminal(phone, predict: predict)
                _ = try phone.evaluate(WebPageProbe.installEcho)
                var samples: [Double] = []
                for index in 0..<count {
                    try phone.type(String(letters[index % letters.count]))
                    let ms = try phone.evaluate(WebPageProbe.echoResult(index + 1, seconds: 10), timeout: 15)
                    guard let ms = ms as? Double else { throw FixtureError("no echo time") }
                    // The first keys teach the adaptive predictor the path's echo time.
                    if index >= 5 { samples.append(ms / 1000) }
                    usleep(20_000)
                }
                browserSamples[predict] = samples
            }
            try phone.open("about:blank")
            let anchors = try WanPhases(roads: roads).keystrokes(
                [.relayScreen, .relayScreenEcho, .mosh, .moshPredicted], count: count)
            for (predict, cli, mosh) in [
                ("adaptive", WanProgram.relayScreen, WanProgram.moshPredicted),
                ("never", .relayScreenEcho, .mosh),
            ] {
                let ours = browserSamples[predict] ?? []
                let theirs = anchors[cli] ?? []
                let moshSamples = anchors[mosh] ?? []
                guard !ours.isEmpty, !theirs.isEmpty else { continue }
                report.add(
                    "keystroke echo shown p50 / p99, RTT \(format(rtt, 0)) ms, prediction \(predict)",
                    ours: "\(ms(percentile(ours, 0.5))) / \(ms(percentile(ours, 0.99)))",
                    anchor:
                        "\(ms(percentile(theirs, 0.5))) / \(ms(percentile(theirs, 0.99))) (connect --screen); mosh \(moshSamples.isEmpty ? "—" : "\(ms(percentile(moshSamples, 0.5))) / \(ms(percentile(moshSamples, 0.99)))")",
                    ratio: "\(format(percentile(ours, 0.5) / percentile(theirs, 0.5)))× p50",
                    target: predict == "never" ? "≤ CLI + 5 ms" : "within a frame (17 ms)")
            }
        }
        try roads.setPath(rtt: 0, loss: 0)
    }

    private func interrupt(_ roads: WanRoads) throws {
        guard let phone = browser else { return }
        try roads.setPath(rtt: 100, loss: 0, rate: "20mbit")
        defer { try? roads.setPath(rtt: 0, loss: 0) }
        let command = "exec env PS1='\(WanPhases.prompt)' /bin/sh -i"
        var ours: [Double] = []
        for _ in 0..<runs {
            try roads.useSessionCommand(command)
            try openTerminal(phone, predict: "adaptive")
            try phone.waitFor("#term .screen", text: "wan$", timeout: 60)
            try phone.type("yes")
            try phone.press("Enter")
            Thread.sleep(forTimeInterval: 3)
            _ = try phone.evaluate(WebPageProbe.installChanges)
            try phone.press("Control+c")
            guard
                let times = try phone.evaluate(WebPageProbe.promptAfterInterrupt("wan$", seconds: 60), timeout: 70)
                    as? [Double], times.count == 2
            else { throw FixtureError("no prompt after Ctrl-C") }
            ours.append(times[1] / 1000)
            // The session ends with the shell: the next run starts a fresh one.
            try phone.type("exit")
            try phone.press("Enter")
            try phone.open("about:blank")
        }
        let phases = WanPhases(roads: roads)
        let cli = try (0..<runs).compactMap { _ in try phases.interrupt(.relayScreen) }
        let mosh = try (0..<runs).compactMap { _ in try phases.interrupt(.mosh) }
        guard !ours.isEmpty, !cli.isEmpty else { return }
        report.add(
            "Ctrl-C during `yes`, 20 Mbit/s, RTT 100 ms → prompt, screen still (median of \(runs))",
            ours: "\(format(median(ours), 2)) s",
            anchor:
                "\(format(median(cli), 2)) s (connect --screen); mosh \(mosh.isEmpty ? "—" : "\(format(median(mosh), 2)) s")",
            ratio: "\(format(median(ours) / median(cli)))×", target: "≤ mosh")
    }

    private func silentDeath(_ roads: WanRoads) throws {
        guard let phone = browser else { return }
        let rtt = 50.0
        let limit = 30.0
        try roads.setPath(rtt: rtt, loss: 0)
        defer { try? roads.setPath(rtt: 0, loss: 0) }
        let network = roads.network
        var ours: [Double] = []
        for _ in 0..<runs {
            try roads.useSessionCommand(NumberedLines.command(tick: WanRecovery.tick, limit: Int(limit) + 90))
            try openTerminal(phone, predict: "adaptive")
            try phone.waitFor("#term .screen", text: "L0000", timeout: 60)
            // Past the time after which a dropped road is tried again at once, as in the wan suite.
            Thread.sleep(forTimeInterval: 2.5)
            _ = try phone.evaluate(WebPageProbe.installChanges)
            _ = try phone.evaluate(WebPageProbe.markCut)
            try network.setState("wifi", .cut)
            try phone.type("k")
            let after = rtt / 2 + WanRecovery.tick * 1000 + 50
            let ms = try phone.evaluate(WebPageProbe.changeAfterCut(after: after, seconds: limit), timeout: limit + 10)
            try network.setState("wifi", .up)
            guard let ms = ms as? Double else { throw FixtureError("no screen after the cut") }
            ours.append(ms / 1000)
            try phone.open("about:blank")
        }
        let recovery = WanRecovery(roads: roads, limit: limit)
        let cli = try (0..<runs).compactMap { _ in try recovery.measure(.relayScreen, .owed, rtt: rtt, loss: 0).seconds
        }
        let mosh = try (0..<runs).compactMap { _ in try recovery.measure(.mosh, .owed, rtt: rtt, loss: 0).seconds }
        guard !ours.isEmpty, !cli.isEmpty else { return }
        report.add(
            "a path's silent death, a key waiting → the screen moves again, RTT 50 ms (median of \(runs))",
            ours: "\(format(median(ours), 2)) s",
            anchor:
                "\(format(median(cli), 2)) s (connect --screen); mosh \(mosh.isEmpty ? "—" : "\(format(median(mosh), 2)) s")",
            ratio: "\(format(median(ours) / median(cli)))×", target: "≤ 2 s")
    }

    private func ms(_ seconds: Double) -> String { "\(format(seconds * 1000, 1)) ms" }
}
