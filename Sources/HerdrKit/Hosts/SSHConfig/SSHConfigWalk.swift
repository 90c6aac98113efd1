/// One pass over the config files in ssh's order: every line parsed and checked as ssh checks
/// it (in blocks that apply or not), Includes followed, and either the first value of each
/// keyword that applies to one host collected (`resolve`) or the concrete Host aliases listed
/// (`list`). Pure: files come through the ``SSHConfigFileSystem``.
struct SSHConfigWalk {
    enum Mode {
        /// Collect what applies to this alias (as typed).
        case resolve(host: [UInt8])
        /// List the aliases the Host lines name.
        case list
    }

    /// How a file is being read (readconf.c's flags and depth).
    private struct Frame {
        var scope: SSHConfigSource.Scope
        /// SSHCONF_NEVERMATCH: included from a block that does not apply, so no Host line in it can.
        var neverMatch: Bool
        var depth: Int
        /// (list) The Host lines around the Includes that led here; an alias must match them all.
        var enclosing: [[[UInt8]]]
        /// (list) False under a Match block, whose aliases herdr-remote never applies.
        var listable: Bool
    }

    /// The effective ProxyJump: the first of ProxyJump and ProxyCommand decides, except that
    /// `ProxyJump none` leaves a later ProxyCommand free to apply.
    enum Jump: Equatable {
        case unset
        case none
        case host(SSHConfigSetting)
    }

    let mode: Mode
    let fileSystem: any SSHConfigFileSystem
    let environment: SSHConfigEnvironment

    private(set) var hostname: SSHConfigSetting?
    private(set) var user: SSHConfigSetting?
    private(set) var port: (value: Int, setting: SSHConfigSetting)?
    private(set) var identityFiles: [(setting: SSHConfigSetting, fromUserFile: Bool)] = []
    private(set) var jump = Jump.unset
    private(set) var proxyCommand: SSHConfigSetting?
    /// The first effective value of each keyword in ``SSHConfigKeywords/noted``, in file order.
    private(set) var noted: [(keyword: String, setting: SSHConfigSetting)] = []
    private(set) var notes: [String] = []
    private(set) var aliases: [SSHConfigAlias] = []

    private var seenNotes = Set<String>()
    private var seenAliases = Set<[UInt8]>()
    private var filesRead = 0
    private var bytesRead = 0
    /// Whether the current block applies (readconf.c's `*activep`).
    private var active = true
    /// (list) The current file's Host line, nil before its first one.
    private var block: [[UInt8]]?
    private var inMatch = false

    init(mode: Mode, fileSystem: any SSHConfigFileSystem, environment: SSHConfigEnvironment) {
        self.mode = mode
        self.fileSystem = fileSystem
        self.environment = environment
    }

    private var isListing: Bool { if case .list = mode { true } else { false } }

    /// Reads one top-level file, as ssh.c's process_config_files does: active at its start.
    mutating func read(_ source: SSHConfigSource) throws(SSHConfigError) {
        active = true
        block = nil
        inMatch = false
        let frame = Frame(scope: source.scope, neverMatch: false, depth: 0, enclosing: [], listable: true)
        let found = try readFile(source.path, checkPermissions: source.checksPermissions, frame: frame, from: nil)
        if !found && source.isRequired {
            throw SSHConfigError(.missingFile, "Can't open user config file \(display(source.path)): no such file")
        }
    }

    /// Reads `path`; false when there is no such file.
    private mutating func readFile(
        _ path: String, checkPermissions: Bool, frame: Frame, from include: SSHConfigLocation?
    ) throws(SSHConfigError) -> Bool {
        if frame.depth > SSHConfigLimits.maxIncludeDepth {
            throw SSHConfigError(
                .includeDepth,
                "Too many recursive configuration includes (more than \(SSHConfigLimits.maxIncludeDepth) deep, reading \(display(path)))",
                at: include)
        }
        filesRead += 1
        if filesRead > SSHConfigLimits.maxFilesRead {
            throw SSHConfigError(
                .tooManyFiles, "more than \(SSHConfigLimits.maxFilesRead) config files read (\(display(path)))",
                at: include)
        }
        let bytes: [UInt8]
        switch fileSystem.read(path, checkPermissions: checkPermissions, maxBytes: SSHConfigLimits.maxFileBytes) {
        case .missing:
            return false
        case .unreadable(let reason):
            throw SSHConfigError(.unreadableFile, "Can't open config file \(display(path)): \(reason)", at: include)
        case .badPermissions:
            throw SSHConfigError(
                .badPermissions,
                "Bad owner or permissions on \(display(path)) (ssh reads it only when owned by you or root and writable by no one else)",
                at: include)
        case .contents(let contents):
            bytes = contents
        }
        if bytes.count > SSHConfigLimits.maxFileBytes {
            throw SSHConfigError(
                .fileTooLarge, "\(display(path)) is larger than \(SSHConfigLimits.maxFileBytes) bytes", at: include)
        }
        bytesRead += bytes.count
        if bytesRead > SSHConfigLimits.maxTotalBytes {
            throw SSHConfigError(
                .tooManyBytes, "more than \(SSHConfigLimits.maxTotalBytes) bytes of config read (\(display(path)))",
                at: include)
        }

        var number = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            number += 1
            let location = SSHConfigLocation(path: path, line: number, home: environment.homeDirectory)
            if number > SSHConfigLimits.maxLinesPerFile {
                throw SSHConfigError(
                    .tooManyLines, "more than \(SSHConfigLimits.maxLinesPerFile) lines in one file", at: location)
            }
            if end - start > SSHConfigLimits.maxLineBytes {
                throw SSHConfigError(
                    .lineTooLong, "line longer than \(SSHConfigLimits.maxLineBytes) bytes", at: location)
            }
            let parsed: SSHConfigLine?
            do {
                parsed = try SSHConfigLine.parse(bytes[start..<end])
            } catch {
                switch error {
                case .missingArgument(let keyword):
                    throw SSHConfigError(
                        .missingArgument, "no argument after keyword \"\(text(keyword))\"", at: location)
                case .unterminatedQuote:
                    throw SSHConfigError(.unterminatedQuote, "invalid quotes (a quote is not closed)", at: location)
                }
            }
            if let parsed { try apply(parsed, at: location, frame: frame) }
            start = end + 1
        }
        return true
    }

    // MARK: - Lines

    private mutating func apply(_ line: SSHConfigLine, at location: SSHConfigLocation, frame: Frame)
        throws(SSHConfigError)
    {
        let keyword = text(line.keyword)
        let applies = !isListing && active
        switch keyword {
        case "host":
            try host(line, at: location, frame: frame)
        case "match":
            // Not evaluated (exec, canonical and final need a connection's worth of context);
            // the block counts as not applying, up to the next Host or Match.
            active = false
            inMatch = true
            block = nil
            if !isListing && !frame.neverMatch {
                note(
                    "\(location): Match blocks are not evaluated; the lines up to the next Host or Match were skipped (ssh may apply them)"
                )
            }
        case "include":
            try include(line, at: location, frame: frame)
        case "hostname":
            let value = try single(line, keyword, at: location)
            if applies && hostname == nil { hostname = setting(value, location) }
        case "user":
            let value = try single(line, keyword, at: location)
            if applies && user == nil { user = setting(value, location) }
        case "port":
            let value = try single(line, keyword, at: location)
            guard let number = portNumber(value) else {
                throw SSHConfigError(.badPort, "Bad port '\(text(value))' (a port is 1 to 65535)", at: location)
            }
            if applies && port == nil { port = (number, setting(value, location)) }
        case "identityfile", "identityfile2":
            guard let value = line.arguments.first, !value.isEmpty else {
                throw SSHConfigError(.missingArgument, "Missing argument to \(keyword)", at: location)
            }
            if applies {
                if identityFiles.count >= SSHConfigLimits.maxIdentityFiles {
                    throw SSHConfigError(
                        .tooManyIdentityFiles,
                        "Too many identity files specified (max \(SSHConfigLimits.maxIdentityFiles))", at: location)
                }
                let fromUserFile = frame.scope == .user
                let written = text(value)
                // add_identity_file: the same value from the same kind of file only once.
                if !identityFiles.contains(where: { $0.setting.value == written && $0.fromUserFile == fromUserFile }) {
                    identityFiles.append((setting(value, location), fromUserFile))
                }
            }
            try noExtra(line, keyword, at: location)
        case "proxycommand":
            let command = line.commandText
            // ssh 9.2 (checked with ssh -G): a ProxyJump host stops a later ProxyCommand,
            // `ProxyJump none` does not.
            if applies && jump != .unset && jump != .none { break }
            if applies && proxyCommand == nil { proxyCommand = setting(command, location) }
        case "proxyjump":
            let raw = line.commandText
            // parse_jump: the hosts end at `#` and (a quirk of its rtrim) at the first blank.
            var hosts = Array(raw.prefix { $0 != UInt8(ascii: "#") })
            if let blank = hosts.dropFirst().firstIndex(where: { $0 == 0x20 || $0 == 0x09 }) {
                hosts.removeSubrange(blank...)
            }
            hosts = Array(hosts.drop { $0 == 0x20 || $0 == 0x09 })
            let isNone = raw.map(asciiLowercased) == Array("none".utf8)
            if hosts.isEmpty && !isNone {
                throw SSHConfigError(.missingArgument, "Invalid ProxyJump (no host)", at: location)
            }
            if applies && proxyCommand == nil && jump == .unset {
                jump = isNone ? .none : .host(setting(hosts, location))
            }
        default:
            if SSHConfigKeywords.noted[keyword] != nil {
                let isCommand = keyword == "remotecommand" || keyword == "localcommand"
                let value = isCommand ? line.commandText : (line.arguments.first ?? [])
                if applies && !noted.contains(where: { $0.keyword == keyword }) {
                    noted.append((keyword, setting(value, location)))
                }
            } else if !SSHConfigKeywords.known.contains(keyword) && !isListing {
                note(
                    "\(location): \(keyword) is not an OpenSSH 9.2 keyword and was ignored (ssh 9.2 itself refuses such a file)"
                )
            }
        }
    }

    private mutating func host(_ line: SSHConfigLine, at location: SSHConfigLocation, frame: Frame)
        throws(SSHConfigError)
    {
        inMatch = false
        switch mode {
        case .resolve(let alias):
            switch SSHHostPattern.evaluate(patterns: line.arguments, host: alias, neverMatch: frame.neverMatch) {
            case .matches: active = true
            case .doesNotMatch: active = false
            case .emptyPattern: throw SSHConfigError(.emptyArgument, "keyword host empty argument", at: location)
            }
        case .list:
            // An alias matching nothing reaches every pattern: the empty-pattern check ssh
            // would make for some alias.
            if SSHHostPattern.evaluate(patterns: line.arguments, host: [], neverMatch: frame.neverMatch)
                == .emptyPattern
            {
                throw SSHConfigError(.emptyArgument, "keyword host empty argument", at: location)
            }
            // Some alias reaches this block (and so its Includes), whatever a Match before said.
            active = true
            block = line.arguments
            guard frame.listable else { return }
            for pattern in line.arguments
            where SSHHostPattern.isConcrete(pattern) && SSHConfigResolver.isValidAlias(pattern) {
                // Listed only if resolving it would use this block: this line and every Host line
                // around the Includes that led here must match it.
                let reached = ([line.arguments] + frame.enclosing).allSatisfy {
                    SSHHostPattern.evaluate(patterns: $0, host: pattern) == .matches
                }
                if reached && seenAliases.insert(pattern).inserted {
                    aliases.append(SSHConfigAlias(name: text(pattern), location: location))
                }
            }
        }
    }

    private mutating func include(_ line: SSHConfigLine, at location: SSHConfigLocation, frame: Frame)
        throws(SSHConfigError)
    {
        for argument in line.arguments {
            guard !argument.isEmpty else {
                throw SSHConfigError(.emptyArgument, "keyword include empty argument", at: location)
            }
            let tilde = argument.first == UInt8(ascii: "~")
            if tilde && frame.scope == .system {
                throw SSHConfigError(
                    .badIncludePath, "bad include path \(text(argument)) (the system file may not use ~)", at: location)
            }
            // Relative paths live in ~/.ssh for a user file and /etc/ssh for the system's.
            var pattern = argument
            if argument.first != UInt8(ascii: "/") && !tilde {
                pattern = Array((frame.scope == .user ? "~/.ssh/" : "/etc/ssh/").utf8) + argument
            }
            guard
                let expanded = SSHConfigExpansion.expandIncludeTilde(
                    pattern, localUser: environment.localUser, home: environment.homeDirectory,
                    homeOfUser: environment.homeOfUser)
            else {
                if !isListing {
                    note("\(location): Include \(text(argument)) names another account's home; it was not read")
                }
                continue
            }
            let paths: [String]
            switch fileSystem.glob(text(expanded), limit: SSHConfigLimits.maxIncludeMatches) {
            case .failed(let reason):
                throw SSHConfigError(.globFailed, "glob failed for \(text(expanded)): \(reason)", at: location)
            case .matches(let matches):
                paths = matches.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            }
            if paths.count > SSHConfigLimits.maxIncludeMatches {
                throw SSHConfigError(
                    .tooManyIncludeMatches,
                    "Include \(text(argument)) matches more than \(SSHConfigLimits.maxIncludeMatches) files",
                    at: location)
            }
            let outer = (active, block, inMatch)
            var inner = frame
            inner.depth += 1
            inner.neverMatch = frame.neverMatch || !active
            if let block { inner.enclosing.append(block) }
            inner.listable = frame.listable && !inMatch
            for path in paths {
                // A missing file here (gone since the glob) is skipped, as ssh skips ENOENT.
                _ = try readFile(path, checkPermissions: true, frame: inner, from: location)
                // ssh: a Host or Match in an included file does not change the includer's block.
                (active, block, inMatch) = outer
            }
        }
    }

    // MARK: - Values

    /// The one value of a keyword that takes one.
    private func single(_ line: SSHConfigLine, _ keyword: String, at location: SSHConfigLocation) throws(SSHConfigError)
        -> [UInt8]
    {
        guard let value = line.arguments.first, !value.isEmpty else {
            throw SSHConfigError(.missingArgument, "Missing argument to \(keyword)", at: location)
        }
        try noExtra(line, keyword, at: location)
        return value
    }

    private func noExtra(_ line: SSHConfigLine, _ keyword: String, at location: SSHConfigLocation)
        throws(SSHConfigError)
    {
        if line.arguments.count > 1 {
            throw SSHConfigError(.extraArguments, "keyword \(keyword) extra arguments at end of line", at: location)
        }
    }

    /// misc.c `a2port`: a number 0...65535 as strtonum reads it (an optional sign, decimal
    /// digits), else a service name; 0 and anything else are no port.
    private func portNumber(_ value: [UInt8]) -> Int? {
        var digits = value[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        if !digits.isEmpty && digits.allSatisfy({ (0x30...0x39).contains($0) }) {
            var number = 0
            for digit in digits {
                number = number * 10 + Int(digit - 0x30)
                if number > 65535 { return nil }
            }
            if negative { number = -number }
            return number >= 1 ? number : nil
        }
        guard let lookUp = environment.servicePort, let number = lookUp(text(value)), (1...65535).contains(number)
        else { return nil }
        return number
    }

    private func setting(_ value: [UInt8], _ location: SSHConfigLocation) -> SSHConfigSetting {
        SSHConfigSetting(value: text(value), location: location)
    }

    private mutating func note(_ sentence: String) {
        if seenNotes.insert(sentence).inserted { notes.append(sentence) }
    }

    private func display(_ path: String) -> String {
        SSHConfigLocation.abbreviate(path, home: environment.homeDirectory)
    }
}

/// Config bytes as text for values and messages (invalid UTF-8 shown as U+FFFD).
func text<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
    String(decoding: Array(bytes), as: UTF8.self)
}
