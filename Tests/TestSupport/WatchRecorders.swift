import Foundation
import Glibc

/// What `herdr-remote watch` runs, recorded: a `notify-send` that appends its arguments (each
/// followed by `|`, a line per call) to `notifications`, and an `--exec` command (`exec`) that
/// appends its `HERDR_*` environment and `---` to `executions`, both in a directory that
/// `environment` puts first on PATH, with a desktop session said to be there
/// (`DBUS_SESSION_BUS_ADDRESS`) so that watch calls notify-send.
public final class WatchRecorders {
    public let directory: TemporaryDirectory
    public var notifications: URL { directory.file("notify.log") }
    public var executions: URL { directory.file("exec.log") }
    public var exec: String { directory.file("record-exec").path }

    public init() throws {
        directory = try TemporaryDirectory(prefix: "herdr-recorders-")
        try write(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s|' \"$a\"; done >> '\(notifications.path)'\necho >> '\(notifications.path)'\n",
            to: directory.file("notify-send"))
        try write(
            "#!/bin/sh\nenv | grep '^HERDR_' | sort >> '\(executions.path)'\necho --- >> '\(executions.path)'\n",
            to: directory.file("record-exec"))
    }

    private func write(_ text: String, to url: URL) throws {
        try writeText(text, to: url)
        chmod(url.path, 0o755)
    }

    /// PATH with the recorders first, a desktop session's bus, no display.
    public var environment: [String: String] {
        [
            "PATH": directory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent-test-bus", "DISPLAY": "", "WAYLAND_DISPLAY": "",
        ]
    }

    /// The file's content once it holds `text`, or nil after `timeout` seconds.
    public func wait(for text: String, in file: URL, timeout: Double = 20) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let content = try? readText(file), content.contains(text) { return content }
            usleep(50_000)
        }
        return nil
    }
}
