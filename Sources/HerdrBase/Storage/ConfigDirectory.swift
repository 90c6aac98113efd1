import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The directory holding herdr-remote's state, and the names of the files in it.
public struct ConfigDirectory: Sendable, Hashable {
    /// The directory itself.
    public let url: URL

    /// A config directory at `url` (tests and `--config` use their own).
    public init(url: URL) {
        self.url = url
    }

    /// `$XDG_CONFIG_HOME/herdr-remote` when XDG_CONFIG_HOME is set to an absolute path, else
    /// `$HOME/.config/herdr-remote` (the XDG Base Directory rule: relative values are ignored).
    public static func standard(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ConfigDirectory {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return ConfigDirectory(
                url: URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("herdr-remote"))
        }
        var home = environment["HOME"] ?? ""
        if !home.hasPrefix("/") { home = NSHomeDirectory() }
        return ConfigDirectory(
            url: URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config/herdr-remote"))
    }

    /// Host profiles (`hosts.json`).
    public var hostsFile: URL { url.appendingPathComponent("hosts.json") }
    /// Passwords by profile id (`secrets.json`, 0600).
    public var secretsFile: URL { url.appendingPathComponent("secrets.json") }
    /// Pinned host keys in OpenSSH known_hosts format (`known_hosts`).
    public var knownHostsFile: URL { url.appendingPathComponent("known_hosts") }
    /// The device's Ed25519 private key in OpenSSH format (`id_ed25519`, 0600).
    public var deviceKeyFile: URL { url.appendingPathComponent("id_ed25519") }
    /// The device's public key (`id_ed25519.pub`).
    public var devicePublicKeyFile: URL { url.appendingPathComponent("id_ed25519.pub") }
    /// The device's Noise static key for the relay road (`companion_key`, 0600).
    public var companionKeyFile: URL { url.appendingPathComponent("companion_key") }

    /// Creates the directory with mode 0700 if it is missing (parents with the usual 0755).
    ///
    /// An existing directory is left as it is.
    public func create() throws(StorageError) {
        try Self.makeDirectory(url.path, mode: 0o700, parents: true)
    }

    private static func makeDirectory(_ path: String, mode: mode_t, parents: Bool) throws(StorageError) {
        if mkdir(path, mode) == 0 {
            // mkdir applies the umask, which can only narrow; make the mode exact.
            guard chmod(path, mode) == 0 else { throw .posix(.directory, "set the mode of", path: path) }
            return
        }
        switch errno {
        case EEXIST:
            var info = stat()
            guard stat(path, &info) == 0 else { throw .posix(.directory, "inspect", path: path) }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw StorageError(.directory, path: path, message: "\(path) exists and is not a directory")
            }
        case ENOENT where parents:
            let parent = (path as NSString).deletingLastPathComponent
            guard parent != path, !parent.isEmpty else { throw .posix(.directory, "create", path: path, errno: ENOENT) }
            try makeDirectory(parent, mode: 0o755, parents: true)
            try makeDirectory(path, mode: mode, parents: false)
        default:
            throw .posix(.directory, "create", path: path)
        }
    }
}
