import Foundation
import Glibc

/// A phone's browser for a test: Debian's `chromium` driven by Playwright for Python
/// (`PhoneBrowser/phone.py`, no browser download) in a 390×844 touch screen's emulation. Each
/// call sends one command and waits for its answer line; a failed command throws with what the
/// browser said and what the page logged.
public final class PhoneBrowser {
    private let driver: InteractiveProcess
    private var answers = 0

    /// The driver's path, beside this file in the checkout.
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("PhoneBrowser/phone.py").path
    }

    /// Starts the browser on this machine, or in the network namespace `namespace` (through `ip
    /// netns exec`, so its /etc/netns hosts file applies); `chromiumArguments` go to chromium as
    /// they are (a benchmark's `--ignore-certificate-errors-spki-list=…` for its test CA's relay).
    public init(namespace: String? = nil, chromiumArguments: [String] = []) throws {
        let python = try ProcessRunner.which("python3")
        let command = [python, Self.script] + chromiumArguments
        if let namespace {
            driver = try InteractiveProcess(
                try ProcessRunner.which("ip"), ["netns", "exec", namespace] + command,
                environment: ProcessInfo.processInfo.environment)
        } else {
            driver = try InteractiveProcess(
                python, Array(command.dropFirst()), environment: ProcessInfo.processInfo.environment)
        }
        _ = try answer(timeout: 60)
    }

    deinit {
        driver.writeLine(#"{"op":"quit"}"#)
        if driver.wait(timeout: 10) == nil {
            driver.signal(SIGKILL)
            _ = driver.wait()
        }
    }

    /// Sends `command` and returns its answer; throws when the browser could not do it.
    @discardableResult
    public func send(_ command: [String: Any], timeout: Double = 30) throws -> [String: Any] {
        var command = command
        command["timeout"] = timeout
        let line = String(decoding: try JSONSerialization.data(withJSONObject: command), as: UTF8.self)
        driver.writeLine(line)
        let reply = try answer(timeout: timeout + 30)
        guard reply["ok"] as? Bool == true else {
            let logged = (try? consoleLines()) ?? []
            throw FixtureError(
                "the phone's browser could not \(line): \(reply["error"] ?? "?"); the page logged:\n"
                    + logged.suffix(20).joined(separator: "\n"))
        }
        return reply
    }

    private func answer(timeout: Double) throws -> [String: Any] {
        let wanted = answers
        var found: [String: Any]?
        let arrived = driver.waitFor(timeout: timeout) { out, _ in
            let lines = out.split(separator: "\n", omittingEmptySubsequences: true)
            guard lines.count > wanted, out.hasSuffix("\n") || lines.count > wanted + 1 else { return false }
            found = (try? JSONSerialization.jsonObject(with: Data(lines[wanted].utf8))) as? [String: Any]
            return true
        }
        guard arrived, let found else {
            throw FixtureError("the phone's browser did not answer: \(driver.stderr.suffix(2000))")
        }
        answers += 1
        return found
    }

    private func consoleLines() throws -> [String] {
        driver.writeLine(#"{"op":"console"}"#)
        return (try answer(timeout: 10)["lines"] as? [String]) ?? []
    }

    public func open(_ url: String) throws { try send(["op": "open", "url": url]) }
    public func reload() throws { try send(["op": "reload"]) }

    /// Waits until `selector` is visible (with `text` in it, when given); `visible` false: in the
    /// page at all, shown or not.
    public func waitFor(_ selector: String, text: String? = nil, visible: Bool = true, timeout: Double = 30) throws {
        var command: [String: Any] = ["op": "wait", "selector": selector, "state": visible ? "visible" : "attached"]
        if let text { command["text"] = text }
        try send(command, timeout: timeout)
    }

    /// Waits until the function `script` (its source) returns a truthy value, tried every frame.
    public func waitUntil(_ script: String, timeout: Double = 30) throws {
        try send(["op": "waitjs", "js": script], timeout: timeout)
    }

    /// A finger dragged from (`x`, `from`) to (`x`, `to`), in CSS pixels of the page: a drag
    /// down scrolls back.
    public func swipe(x: Double, from: Double, to: Double) throws {
        try send(["op": "swipe", "x": x, "from": from, "to": to])
    }
    /// The mouse wheel turned by `dy` pixels at (`x`, `y`): negative scrolls back.
    public func wheel(x: Double, y: Double, dy: Double) throws { try send(["op": "wheel", "x": x, "y": y, "dy": dy]) }

    public func tap(_ selector: String) throws { try send(["op": "tap", "selector": selector]) }
    public func click(_ selector: String) throws { try send(["op": "click", "selector": selector]) }
    /// Types on the keyboard into what has the focus.
    public func type(_ text: String) throws { try send(["op": "type", "text": text]) }
    public func press(_ key: String) throws { try send(["op": "press", "key": key]) }
    public func text(_ selector: String) throws -> String {
        try send(["op": "text", "selector": selector])["text"] as? String ?? ""
    }
    public func attribute(_ selector: String, _ name: String) throws -> String? {
        try send(["op": "attribute", "selector": selector, "name": name])["value"] as? String
    }
    public func screenshot(_ path: String) throws { try send(["op": "screenshot", "path": path]) }
    /// The browser's network off (as a phone in a tunnel) or back on.
    public func setOffline(_ offline: Bool) throws { try send(["op": "offline", "value": offline]) }
    /// The value of `script` (a function's source, which a page's CSP allows where a bare
    /// expression it does not), awaited when it is a promise, for at most `timeout` seconds.
    @discardableResult
    public func evaluate(_ script: String, timeout: Double = 30) throws -> Any? {
        try send(["op": "eval", "js": script], timeout: timeout)["value"]
    }
    /// A new browser context in place of the page's: no cache, no storage, as a first visit.
    public func startAfresh() throws { try send(["op": "fresh"]) }
    public var console: [String] { (try? consoleLines()) ?? [] }
}
