import Foundation
import HerdrCrypto
import RelayClient
import Synchronization
import WebClient

/// What `herdr-host pair --web` says of the web client a phone will load: every file installed on
/// this computer (`make install`'s `share/herdr-remote/web`, or `HERDR_WEB_ROOT`) fetched from the
/// client's address and its SHA-256 compared, so that a person sees, before scanning, whether the
/// page is the code installed here. It shows what the server sends this computer; a server that
/// sends a phone something else is beyond it (docs/web-client.md).
enum WebClientCheck {
    enum Outcome: Equatable {
        /// Every installed file is served as it is here.
        case same(files: Int, manifest: String)
        /// A file served otherwise, or not at all (`served` says how).
        case different(path: String, served: String, files: Int, manifest: String)
        /// Nothing to compare, or the address could not be asked.
        case unchecked(String)
    }

    /// Requests at once: a page's dozens of files in a few round trips.
    static let parallel = 8

    /// Where the web client is installed: `HERDR_WEB_ROOT`, else beside the programs.
    static func installedRoot(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["HERDR_WEB_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? WebClientFiles.installedRoot()
    }

    /// Fetches every file under `root` from `address` (https://host[:port][/path]/) and compares.
    static func run(address: String, root: String, timeout: Double = 10) -> Outcome {
        let installed: WebClientFiles
        do {
            installed = try WebClientFiles.load(root: root)
        } catch {
            return .unchecked("no web client installed here to compare it with (\(error.message))")
        }
        guard let components = URLComponents(string: address), let scheme = components.scheme,
            let host = components.host
        else { return .unchecked("\(address) is no web address") }
        let origin = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)" + (components.port.map { ":\($0)" } ?? "")
        let endpoint: RelayEndpoint
        do {
            endpoint = try RelayEndpoint(parsing: origin)
        } catch {
            return .unchecked(error.message)
        }
        let prefix = components.path.hasSuffix("/") ? components.path : components.path + "/"
        let client = RelayHTTPClient(endpoint: endpoint, timeout: timeout)
        let files = installed.sortedFiles
        let served = Mutex<[String: String]>([:])
        DispatchQueue.concurrentPerform(iterations: min(parallel, files.count)) { lane in
            for file in stride(from: lane, to: files.count, by: parallel).map({ files[$0] }) {
                let answer = fetch(client, prefix + file.path)
                served.withLock { $0[file.path] = answer }
            }
        }
        let answers = served.withLock { $0 }
        for file in files where answers[file.path] != file.sha256 {
            return .different(
                path: file.path, served: answers[file.path] ?? "no answer", files: files.count,
                manifest: installed.manifestSHA256)
        }
        return .same(files: files.count, manifest: installed.manifestSHA256)
    }

    /// The SHA-256 (hex) of what `path` answers with 200, or what happened instead.
    private static func fetch(_ client: RelayHTTPClient, _ path: String) -> String {
        do {
            let response = try client.request(method: "GET", path: path, room: nil, body: nil)
            guard response.status == 200 else { return "answered \(response.status)" }
            return Hex.encode(SHA256.hash(response.body))
        } catch {
            return "could not be fetched: \(error.message)"
        }
    }

    /// The outcome in words, for the person about to scan the code.
    static func describe(_ outcome: Outcome, address: String, root: String) -> String {
        switch outcome {
        case .same(let files, let manifest):
            return
                "Web client: \(address) serves the \(files) files installed here, as they are (manifest sha256 \(manifest))."
        case .different(let path, let served, let files, let manifest):
            let how = served.count == 64 ? "serves \(path) with sha256 \(served)" : "\(path) \(served)"
            return """
                warning: \(address) does not serve the web client installed here (\(root), \(files) files, manifest sha256 \(manifest)): \(how). \
                A phone that opens the code runs what that server sends; pair with --web-client pointing at a copy you trust, or update the files on one side.
                """
        case .unchecked(let why):
            return "Web client: not compared with this computer's copy: \(why)."
        }
    }
}
