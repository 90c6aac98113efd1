import Foundation
import Glibc
import TestSupport
import Testing

/// scripts/install.sh, run on the debug build: what `make install` puts where, and that
/// `make uninstall` takes exactly that away again.
@Suite struct InstallScriptTests {
    static let script = Programs.repository.appendingPathComponent("scripts/install.sh").path

    /// Runs install.sh; one that has not finished within 120 s (it once spun forever on a missing
    /// DESTDIR) is killed and the test fails.
    static func run(_ arguments: [String], prefix: String, destdir: String) throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["PREFIX"] = prefix
        environment["DESTDIR"] = destdir
        return try ProcessRunner.run("/bin/bash", [script] + arguments, environment: environment, timeout: 120)
    }

    /// Every path install.sh writes below the prefix, with its mode.
    static let expected: [(String, mode_t)] =
        Programs.names.flatMap { name -> [(String, mode_t)] in
            [
                ("bin/\(name)", 0o755), ("share/bash-completion/completions/\(name)", 0o644),
                ("share/zsh/site-functions/_\(name)", 0o644), ("share/fish/vendor_completions.d/\(name).fish", 0o644),
                ("share/man/man1/\(name).1", 0o644),
            ]
        } + [
            ("lib/systemd/system/herdr-relay.service", 0o644), ("lib/systemd/user/herdr-host.service", 0o644),
            ("share/doc/herdr-remote/herdr-relay.env.example", 0o644),
            ("share/herdr-remote/install-manifest", 0o644),
        ] + webClientFiles.map { ("share/herdr-remote/web/\($0)", 0o644) }

    /// The web client's files below Web/ that an install copies, by the rules herdr-relay serves
    /// by (docs/relay.md): its extensions, no dotfile, nothing under `test`, `test-support`,
    /// `bench` or `node_modules`; less the tooling's package.json and tsconfig.json.
    static let webClientFiles: [String] = {
        let web = Programs.repository.appendingPathComponent("Web").path
        let extensions: Set<String> = ["html", "js", "css", "json", "webmanifest", "png", "svg", "ico", "txt"]
        let excluded: Set<String> = ["test", "test-support", "bench", "node_modules"]
        var files: [String] = []
        guard let walk = FileManager.default.enumerator(atPath: web) else { return [] }
        while let path = walk.nextObject() as? String {
            let name = (path as NSString).lastPathComponent
            let type = walk.fileAttributes?[.type] as? FileAttributeType
            if name.hasPrefix(".") || (type == .typeDirectory && excluded.contains(name)) {
                if type == .typeDirectory { walk.skipDescendants() }
                continue
            }
            guard type == .typeRegular, extensions.contains((name as NSString).pathExtension), path != "package.json",
                path != "tsconfig.json"
            else { continue }
            files.append(path)
        }
        return files.sorted()
    }()

    /// Every file and directory under `root`, relative to it.
    static func tree(_ root: String) -> [String] {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).sorted()
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    @Test func installsIntoDestdirAndUninstallLeavesItEmpty() throws {
        let destdir = try TemporaryDirectory(prefix: "install-destdir-")
        let install = try Self.run(["install", Programs.directory], prefix: "/usr/local", destdir: destdir.path)
        #expect(install.status == 0, "\(install.stderr)")
        let root = destdir.path + "/usr/local/"
        let files = Self.tree(destdir.path).filter { !FileManager.default.isDirectory(destdir.path + "/" + $0) }
        #expect(Set(files) == Set(Self.expected.map { "usr/local/" + $0.0 }))
        for (path, mode) in Self.expected {
            #expect(Self.mode(root + path) == mode, "\(path)")
        }
        for name in Programs.names {
            // What was installed is what the program prints now: generated, not copied from elsewhere.
            for (shell, path) in [
                ("bash", "share/bash-completion/completions/\(name)"), ("zsh", "share/zsh/site-functions/_\(name)"),
                ("fish", "share/fish/vendor_completions.d/\(name).fish"),
            ] {
                let installed = try String(contentsOfFile: root + path, encoding: .utf8)
                #expect(installed == (try Programs.run(name, ["--generate-completion-script", shell])), "\(path)")
            }
            let page = try String(contentsOfFile: root + "share/man/man1/\(name).1", encoding: .utf8)
            #expect(page == (try Programs.run(name, ["--generate-manual"])))
            let version = try ProcessRunner.run(root + "bin/\(name)", ["--version"], check: true)
            #expect(version.stdout == "\(name) 0.1.0\n")
        }
        // The web client, byte for byte, and none of its tests, benchmarks or tooling.
        #expect(Self.webClientFiles.contains("js/noise.js"), "\(Self.webClientFiles)")
        for path in Self.webClientFiles {
            let installed = FileManager.default.contents(atPath: root + "share/herdr-remote/web/" + path)
            #expect(
                installed == FileManager.default.contents(atPath: Programs.repository.path + "/Web/" + path), "\(path)")
        }
        #expect(
            !files.contains {
                $0.contains("/web/test") || $0.contains("/web/bench") || $0.hasSuffix("/web/README.md")
                    || $0.hasSuffix("/web/package.json") || $0.hasSuffix("/web/tsconfig.json")
            }, "\(files)")
        let relay = try String(contentsOfFile: root + "lib/systemd/system/herdr-relay.service", encoding: .utf8)
        #expect(relay.contains("\nExecStart=/usr/local/bin/herdr-relay serve\n"))
        let host = try String(contentsOfFile: root + "lib/systemd/user/herdr-host.service", encoding: .utf8)
        #expect(host.contains("\nExecStart=/usr/local/bin/herdr-host run\n"))

        let uninstall = try Self.run(["uninstall"], prefix: "/usr/local", destdir: destdir.path)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Self.tree(destdir.path) == [])
    }

    /// The installed herdr-relay serves the installed web client with `--web-client` alone: its
    /// default directory is the one beside it that the install filled. (An index.html is put there
    /// first when the checkout has none yet.)
    @Test func theInstalledRelayServesTheInstalledWebClient() throws {
        let destdir = try TemporaryDirectory(prefix: "install-destdir-")
        let install = try Self.run(["install", Programs.directory], prefix: "/usr/local", destdir: destdir.path)
        #expect(install.status == 0, "\(install.stderr)")
        let web = destdir.path + "/usr/local/share/herdr-remote/web"
        if !FileManager.default.fileExists(atPath: web + "/index.html") {
            try "<!doctype html>\n".write(toFile: web + "/index.html", atomically: true, encoding: .utf8)
        }
        let relay = try RelayProcess(
            ["--origin", "https://relay.test", "--listen", "127.0.0.1:0", "--db", ":memory:", "--web-client"],
            environment: ["ATTEST_REQUIRED": "false"], executable: destdir.path + "/usr/local/bin/herdr-relay")
        let noise = LoopbackHTTP.get(port: relay.port, path: "/js/noise.js")
        #expect(noise?.status == 200)
        #expect(noise?.body == (try String(contentsOfFile: web + "/js/noise.js", encoding: .utf8)))
        #expect(LoopbackHTTP.get(port: relay.port, path: "/test/noise.test.js")?.status == 404)
        #expect(relay.terminate() == 0)
        let log = relay.stderrText()
        #expect(log.contains("web client on: ") && log.contains(" from \(web), manifest sha256 "), "\(log)")
    }

    /// A packager's staging root that does not exist yet is created, and what goes into it is what
    /// goes into one that exists; uninstall leaves the root itself, empty (it is not the install's).
    @Test func createsADestdirThatDoesNotExistYet() throws {
        let base = try TemporaryDirectory(prefix: "install-destdir-")
        let destdir = base.path + "/staging/root"
        let install = try Self.run(["install", Programs.directory], prefix: "/usr", destdir: destdir)
        #expect(install.status == 0, "\(install.stderr)")
        let files = Self.tree(destdir).filter { !FileManager.default.isDirectory(destdir + "/" + $0) }
        #expect(Set(files) == Set(Self.expected.map { "usr/" + $0.0 }))
        #expect(Self.mode(destdir) == 0o755)
        let uninstall = try Self.run(["uninstall"], prefix: "/usr", destdir: destdir)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Self.tree(base.path) == ["staging", "staging/root"])
    }

    /// A DESTDIR that cannot be made, or a prefix inside it that cannot, stops the install with a
    /// message naming what is in the way, before anything was written (no manifest, no half install).
    @Test func refusesADestdirThatCannotBeCreated() throws {
        let base = try TemporaryDirectory(prefix: "install-destdir-")
        let file = base.path + "/file"
        try "not a directory".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: base.path + "/root", withIntermediateDirectories: true)
        try "not a directory".write(toFile: base.path + "/root/usr", atomically: true, encoding: .utf8)
        let cases = [
            (file + "/staging/root", "DESTDIR \(file)/staging/root cannot be created: \(file) is not a directory"),
            (file, "DESTDIR \(file) cannot be created: \(file) is not a directory"),
            (base.path + "/root", "cannot create \(base.path)/root/usr: it is there and not a directory"),
        ]
        for (destdir, message) in cases {
            let install = try Self.run(["install", Programs.directory], prefix: "/usr/local", destdir: destdir)
            #expect(install.status == 1, "\(destdir): \(install.stderr)")
            #expect(install.stderr == "install.sh: \(message)\n", "\(destdir)")
            #expect(install.stdout.isEmpty, "\(destdir): \(install.stdout)")
            #expect(Self.tree(base.path) == ["file", "root", "root/usr"], "\(destdir): nothing written")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a directory")
    }

    /// With another prefix the units start the programs there, and systemd accepts them as installed.
    @Test func theUnitsNameThePrefixAndVerify() throws {
        let base = try TemporaryDirectory(prefix: "install-prefix-")
        let prefix = base.path + "/opt/herdr"
        let install = try Self.run(["install", Programs.directory], prefix: prefix, destdir: "")
        #expect(install.status == 0, "\(install.stderr)")
        for (unit, kind, command) in [("herdr-relay", "system", "serve"), ("herdr-host", "user", "run")] {
            let path = "\(prefix)/lib/systemd/\(kind)/\(unit).service"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.contains("\nExecStart=\(prefix)/bin/\(unit) \(command)\n"))
            let verify = try ProcessRunner.run(
                "/usr/bin/systemd-analyze", ["verify", path], currentDirectory: base.url, timeout: 60)
            #expect(verify.status == 0, "\(verify.stderr)")
            #expect(verify.stdout.isEmpty && verify.stderr.isEmpty, "\(verify.stdout)\(verify.stderr)")
        }
        #expect(try Self.run(["uninstall"], prefix: prefix, destdir: "").status == 0)
        #expect(Self.tree(base.path) == [])
    }

    /// What was there before the install stays: other files, and directories the install did not
    /// create even when they end up empty. Installing twice changes nothing about that.
    @Test func uninstallKeepsWhatWasThereBefore() throws {
        let destdir = try TemporaryDirectory(prefix: "install-destdir-")
        let manual = destdir.path + "/usr/share/man/man1"
        try FileManager.default.createDirectory(atPath: manual, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: destdir.path + "/usr/bin", withIntermediateDirectories: true)
        try "mine".write(toFile: destdir.path + "/usr/bin/other", atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            let install = try Self.run(["install", Programs.directory], prefix: "/usr", destdir: destdir.path)
            #expect(install.status == 0, "\(install.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: manual + "/herdr-remote.1"))
        #expect(try Self.run(["uninstall"], prefix: "/usr", destdir: destdir.path).status == 0)
        #expect(
            Self.tree(destdir.path) == [
                "usr", "usr/bin", "usr/bin/other", "usr/share", "usr/share/man", "usr/share/man/man1",
            ])
    }

    @Test func uninstallWithoutAnInstallSaysSo() throws {
        let destdir = try TemporaryDirectory(prefix: "install-destdir-")
        let result = try Self.run(["uninstall"], prefix: "/usr/local", destdir: destdir.path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("nothing was installed"))
        let relative = try Self.run(["uninstall"], prefix: "usr", destdir: destdir.path)
        #expect(relative.status == 1 && relative.stderr.contains("absolute"))
    }
}

extension FileManager {
    fileprivate func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
