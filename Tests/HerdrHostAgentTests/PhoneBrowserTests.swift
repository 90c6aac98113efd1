import Foundation
import Glibc
import HerdrHostAgent
import TestSupport
import Testing

/// The web client in a phone's browser (issue 43), all real: Debian's chromium in a 390×844 touch
/// screen's emulation (Playwright for Python), the page served by herdr-relay with `--web-client`
/// from this checkout's `Web/`, herdr-host with the herdr stand-in behind it. The phone pairs
/// with the code `herdr-host pair --web` shows (the 6-digit code typed on the computer), lists
/// the blocked agent first, opens its pane, types, interrupts, lives through a relay restart and
/// unpairs.
@Suite(.serialized) struct PhoneBrowserTests {
    /// This checkout's web client.
    static var webRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Web").path
    }

    /// Where the docs keep the phone's screenshots (written when HERDR_WRITE_SCREENSHOTS is set).
    static var docs: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs")
    }

    /// Pairs the browser with the computer configured by `environment`: `herdr-host pair --web`
    /// shows its code, the browser opens it and shows six digits, which are typed on the computer.
    static func pair(
        _ phone: PhoneBrowser, road: RelayRoadFixture, name: String, environment: [String: String]
    ) throws {
        let host = try InteractiveProcess(
            BuiltProgram.path("herdr-host"), ["pair", "--relay", road.origin, "--name", name, "--web"],
            environment: environment)
        guard let code = host.waitForCompanionCode(), host.waitFor("waiting for a device") else {
            throw FixtureError("herdr-host pair --web showed no code: \(host.stdout) \(host.stderr)")
        }
        #expect(code.hasPrefix(road.origin + "/#v=1&"), "\(code)")
        try phone.open(code)
        try phone.waitFor("#pairing-title", text: "Pairing with \(name)")
        var digits = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, digits.count != 6 {
            digits = String(try phone.text("#pairing-code").filter(\.isASCII).filter(\.isNumber))
            if digits.count != 6 { usleep(100_000) }
        }
        #expect(digits.count == 6, "the page shows six digits")
        #expect(try phone.text("#pairing-state").contains("Type this code on \(name)"))
        guard host.waitFor("Type the code it shows") else { throw FixtureError("not asked: \(host.stdout)") }
        host.writeLine(digits)
        #expect(host.wait(timeout: 30) == 0, "\(host.stdout) \(host.stderr)")
        try phone.waitFor("#pairing-state", text: "Paired with \(name)", visible: false)
        #expect(try phone.evaluate("location.hash") as? String == "", "the code is gone from the address")
    }

    /// Starts `herdr-host run` with `environment`, once it says it parks: the phone's board may
    /// join at once, so the agent's status may never show the room parked.
    static func startAgent(_ road: RelayRoadFixture, environment: [String: String]) throws -> InteractiveProcess {
        let agent = try road.launch(BuiltProgram.path("herdr-host"), ["run"], computer: true, environment: environment)
        guard agent.waitFor("parking in its room") else {
            agent.signal(SIGTERM)
            throw FixtureError("herdr-host run did not park: \(agent.stderr)")
        }
        return agent
    }

    /// The visible controls (buttons, fields, links) without an accessible name: a label, their
    /// text or a `<label>`.
    static let unnamedControls = """
        () => Array.from(document.querySelectorAll('button, input, textarea, select, a[href], [role="button"]'))
          .filter((control) => control.checkVisibility() && !(control.getAttribute('aria-label')?.trim()
            || control.textContent.trim() || control.labels?.length))
          .map((control) => control.outerHTML.slice(0, 120))
        """

    /// At twice the text size (a phone's large text) the page still fits its width: nothing runs
    /// off the side but the key row and the terminal, which scroll; then the text size goes back.
    static func checkLargeText(_ phone: PhoneBrowser, _ what: String) throws {
        try phone.evaluate("() => { document.documentElement.style.fontSize = '200%'; return true; }")
        let overflowing =
            try phone.evaluate(
                """
                () => Array.from(document.querySelectorAll('body *')).filter((element) => element.checkVisibility()
                    && !element.closest('.keys, .scroller') && element.getBoundingClientRect().right > innerWidth + 1)
                  .map((element) => element.tagName + '.' + element.className)
                """) as? [String]
        #expect(overflowing == [], "at twice the text size, \(what) fits the phone's width")
        try phone.evaluate("() => { document.documentElement.style.fontSize = ''; return true; }")
    }

    @Test func aPhonePairsByTheCameraListsTheBlockedAgentFirstAndWorksInItsPane() throws {
        let road = try RelayRoadFixture(relayArguments: ["--web-client", "--web-root", Self.webRoot])
        let herdr = try road.useHerdrStandIn()
        try herdr.startSession()
        try herdr.addAgent(pane: "w1:p1", name: "claude-1", status: .idle)
        try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .blocked, title: "Allow edit of main.swift?")
        let phone = try PhoneBrowser()
        try Self.pair(phone, road: road, name: "studio", environment: road.hostEnvironment)
        #expect(try road.registry.devices().map(\.name) == ["browser on Android phone"])
        let agent = try Self.startAgent(road, environment: road.hostEnvironment)
        defer { agent.signal(SIGTERM) }

        // The board: the blocked agent first, in words.
        try phone.waitFor(".agent", text: "claude-1")
        #expect(try phone.text(".agent").contains("claude-2"), "the blocked agent first")
        #expect(try phone.text(".agent").contains("needs you"))
        #expect(try phone.attribute(".agent", "aria-label") == "claude-2, needs you: open its pane")
        #expect(try phone.text(".computer .state").contains("connected through 127.0.0.1"))
        let screenshots = try TemporaryDirectory(prefix: "phone-")
        try phone.screenshot(screenshots.file("board.png").path)
        #expect(try phone.evaluate(Self.unnamedControls) as? [String] == [], "every control on the board has a name")
        try Self.checkLargeText(phone, "the board")

        // Its pane, as a screen session: typed into, interrupted.
        try phone.tap(".agent")
        try phone.waitFor("#terminal")
        #expect(agent.waitFor("started a screen session"), "\(agent.stderr)")
        try phone.type("echo web-$((6*7))\n")
        try phone.waitFor(".screen", text: "web-42")
        #expect(try phone.evaluate(Self.unnamedControls) as? [String] == [], "every control on the terminal has a name")
        try Self.checkLargeText(phone, "the terminal")
        #expect(herdr.attachedClients() == ["w1:p2"], "the agent's pane alone is attached")
        try phone.type("sleep 60\n")
        try phone.tap("[aria-label='Control C, interrupt']")
        try phone.type("echo after-$((2*3))\n")
        try phone.waitFor(".screen", text: "after-6")
        try phone.screenshot(screenshots.file("terminal.png").path)

        // The relay restarts under the session: the page reconnects and the screen goes on.
        try road.restartRelay()
        try phone.type("echo back-$((5*5))\n")
        try phone.waitFor(".screen", text: "back-25", timeout: 60)

        // Back to the board, then unpair (twice: the first tap asks).
        try phone.tap("#back")
        try phone.waitFor(".agent", text: "claude-2")
        try phone.tap("[aria-label='Unpair studio']")
        try phone.waitFor(".computer .state", text: "tap Unpair again")
        try phone.tap("[aria-label='Unpair studio']")
        try phone.waitFor(".empty", text: "No computer is paired yet")
        #expect(try phone.text("#road").contains("the relay room was deleted"))
        #expect(
            agent.waitFor("the pairing was removed on the device (or expired); pair again with: herdr-host pair"),
            "\(agent.stderr)")

        if ProcessInfo.processInfo.environment["HERDR_WRITE_SCREENSHOTS"] != nil {
            for name in ["board", "terminal"] {
                let target = Self.docs.appendingPathComponent("web-\(name).png")
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(at: screenshots.file("\(name).png"), to: target)
            }
        }
    }

    /// Two computers on one phone, each in its own words (the second has no herdr), and a page
    /// back from the background moving its session to a fresh connection.
    @Test func aSecondComputerAndAPageBackFromTheBackground() throws {
        let road = try RelayRoadFixture(relayArguments: ["--web-client", "--web-root", Self.webRoot])
        let herdr = try road.useHerdrStandIn()
        try herdr.startSession()
        try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .working)
        let phone = try PhoneBrowser()
        try Self.pair(phone, road: road, name: "studio", environment: road.hostEnvironment)
        let studio = try Self.startAgent(road, environment: road.hostEnvironment)
        defer { studio.signal(SIGTERM) }
        try phone.waitFor(".agent", text: "claude-2")
        let laptopConfiguration = road.directory.appending("host-laptop")
        var settings = AgentSettings()
        settings.homeListen = "off"
        try settings.save(road.agentDirectory(home: laptopConfiguration))
        let laptopHome = road.directory.appending("laptop-home")
        try FileManager.default.createDirectory(at: laptopHome, withIntermediateDirectories: true)
        var laptop = road.hostEnvironment(home: laptopConfiguration)
        laptop["HOME"] = laptopHome.path
        try Self.pair(phone, road: road, name: "laptop", environment: laptop)
        let other = try Self.startAgent(road, environment: laptop)
        defer { other.signal(SIGTERM) }
        // Its board connection waits out a backoff since the computer was away; a page that comes
        // back to the front tries at once.
        _ = try phone.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
        try phone.waitFor(".computer", text: "No herdr on this computer", timeout: 60)
        try phone.waitFor(".agent", text: "claude-2")
        #expect(try phone.text(".computer h2") == "studio" || phone.text(".computer h2") == "laptop")

        try phone.tap(".agent")
        try phone.type("echo first-$((3*3))\n")
        try phone.waitFor(".screen", text: "first-9")
        // The page comes back from the background: it reconnects at once (a fresh connection
        // beside the old one, which the relay then displaces) and the session goes on there.
        _ = try phone.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
        try phone.type("echo after-return-$((4*4))\n")
        try phone.waitFor(".screen", text: "after-return-16", timeout: 60)
        try phone.waitFor("#road", text: "through 127.0.0.1")

        // The computer's herdr session itself, as `connect` attaches it.
        try phone.tap("#back")
        try phone.tap("[aria-label=\"Open studio's terminal\"]")
        try phone.waitFor(".screen", text: "remote$")
        try phone.type("echo session-$((7*7))\n")
        try phone.waitFor(".screen", text: "session-49")

    }

    /// Scrollback by swipe on a computer's shell (herdr draws its sessions and panes itself, so
    /// lines never scroll off their screens): lines that scrolled off come from the computer as
    /// the finger drags the screen down, in order, and Live goes back to the screen.
    @Test func scrollbackBySwipe() throws {
        let road = try RelayRoadFixture(relayArguments: ["--web-client", "--web-root", Self.webRoot])
        var settings = AgentSettings()
        settings.sessionCommand = "env PS1='web$ ' /bin/sh"
        try settings.save(road.agentDirectory(home: road.hostHome))
        let phone = try PhoneBrowser()
        try Self.pair(phone, road: road, name: "studio", environment: road.hostEnvironment)
        let agent = try Self.startAgent(road, environment: road.hostEnvironment)
        defer { agent.signal(SIGTERM) }
        try phone.tap("[aria-label=\"Open studio's terminal\"]")
        try phone.waitFor(".screen", text: "web$")
        try phone.type("seq 1 300\n")
        try phone.waitUntil("() => /^300\\s*$/m.test(document.querySelector('#term .screen')?.innerText ?? '')")
        #expect(try phone.evaluate("() => document.querySelectorAll('#term .history .row').length") as? Int == 0)
        let deadline = Date().addingTimeInterval(30)
        var lines: [String] = []
        while Date() < deadline, !lines.contains("100") {
            try phone.swipe(x: 195, from: 300, to: 700)
            usleep(200_000)
            lines = ((try? phone.text("#term .history")) ?? "").split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        }
        #expect(
            lines.contains("100") && lines.contains("200"),
            "the history holds what scrolled off: \(lines.count) lines, \(lines.prefix(3)) … \(lines.suffix(3))")
        let numbers = lines.compactMap { Int($0) }
        #expect(numbers == numbers.sorted(), "in order")
        // The mouse wheel scrolls back too.
        let before = try phone.evaluate("() => document.querySelector('#term .scroller').scrollTop") as? Double ?? 0
        try phone.wheel(x: 195, y: 400, dy: -400)
        try phone.waitUntil("() => document.querySelector('#term .scroller').scrollTop < \(before)")
        // The wheel's smooth scroll runs on in the compositor and would undo Live's jump: wait
        // until the position has held for five frames.
        try phone.waitUntil(
            "() => { const top = document.querySelector('#term .scroller').scrollTop; const held = globalThis.heldTop === top;"
                + " globalThis.heldTop = top; globalThis.heldFrames = held ? (globalThis.heldFrames ?? 0) + 1 : 0;"
                + " return globalThis.heldFrames >= 5; }")
        try phone.tap("[aria-label='Back to the live screen']")
        try phone.waitUntil(
            "() => document.querySelector('[aria-label=\"Back to the live screen\"]')?.checkVisibility() === false")
        try phone.type("echo live-$((8*8))\n")
        try phone.waitFor(".screen", text: "live-64")
    }
}
