import HerdrAgents

/// The command a host runs to land the user in herdr (interop-facts §2).
public enum HerdrCommand {
    /// The attach command for `platform`, for the default session (`session == nil`) or a named one.
    ///
    /// Never traps. A name that fails ``HerdrSessionName/isValid(_:)`` (including `""`) is quoted as one
    /// literal argument, so it reaches herdr unchanged and herdr itself rejects it; no shell ever expands it.
    ///
    /// - unix: `exec "$SHELL" -lc 'herdr'` or `exec "$SHELL" -lc 'herdr session attach NAME'`. sshd hands the
    ///   command to the account's shell (`sh -c`), which then runs the login shell with the inner script, so
    ///   an invalid name is quoted twice: once inside the script and once for the script itself.
    /// - windows: `herdr` or `herdr session attach NAME`, with invalid names PowerShell-quoted.
    public static func attach(platform: HostPlatform, session: String?) -> String {
        switch platform {
        case .unix:
            var script = "herdr"
            if let session {
                script +=
                    " session attach " + (HerdrSessionName.isValid(session) ? session : posixQuoted(literal(session)))
            }
            // A login shell (-l) so PATH from the user's profile finds herdr; exec so no extra shell lingers.
            return "exec \"$SHELL\" -lc " + posixQuoted(script)
        case .windows:
            guard let session else { return "herdr" }
            let argument = HerdrSessionName.isValid(session) ? session : powerShellQuoted(literal(session))
            return "herdr session attach " + argument
        }
    }

    /// The command that lands in the pane of the agent `pane` of herdr session `session` (`herdr
    /// agent attach`; ` --session NAME` unless it is the default session), spelled for `platform`
    /// as ``attach(platform:session:)`` is. A pane or session name that breaks its rule is quoted
    /// as one literal argument, so herdr itself rejects it and no shell expands it.
    public static func agentAttach(platform: HostPlatform, session: String, pane: String) -> String {
        let isDefault = session == HerdrSessionInfo.defaultName
        switch platform {
        case .unix:
            var script = "herdr agent attach " + (HerdrAgent.isValidPane(pane) ? pane : posixQuoted(literal(pane)))
            if !isDefault {
                script +=
                    " --session " + (HerdrSessionName.isValid(session) ? session : posixQuoted(literal(session)))
            }
            return "exec \"$SHELL\" -lc " + posixQuoted(script)
        case .windows:
            var command =
                "herdr agent attach " + (HerdrAgent.isValidPane(pane) ? pane : powerShellQuoted(literal(pane)))
            if !isDefault {
                command +=
                    " --session "
                    + (HerdrSessionName.isValid(session) ? session : powerShellQuoted(literal(session)))
            }
            return command
        }
    }

    /// `text` as one POSIX shell word: `'…'`, with each `'` written `'\''`.
    ///
    /// Everything else, newlines included, is literal between single quotes. A NUL cannot be passed
    /// through a shell at all; callers must not rely on one surviving.
    public static func posixQuoted(_ text: String) -> String {
        "'" + text.replacingAll("'", with: "'\\''") + "'"
    }

    /// `text` as one PowerShell verbatim string: `'…'`, with each `'` written `''`.
    ///
    /// PowerShell also ends a verbatim string at the typographic single quotes U+2018–U+201B, so those
    /// are doubled the same way; doubling keeps them literal.
    public static func powerShellQuoted(_ text: String) -> String {
        var out = "'"
        for character in text.unicodeScalars {
            out.unicodeScalars.append(character)
            if powerShellSingleQuotes.contains(character) { out.unicodeScalars.append(character) }
        }
        return out + "'"
    }

    private static let powerShellSingleQuotes: Set<Unicode.Scalar> = [
        "'", "\u{2018}", "\u{2019}", "\u{201A}", "\u{201B}",
    ]

    /// An invalid name made safe to carry: a NUL would cut the command short inside sshd's `execve`, so it
    /// becomes U+FFFD. The name stays invalid, so herdr still rejects it.
    private static func literal(_ name: String) -> String {
        name.replacingAll("\u{0}", with: "\u{FFFD}")
    }
}

extension String {
    /// Replaces every occurrence of `target` (compared by Unicode scalars, not by grapheme clusters, so a
    /// quote followed by a combining mark is still found) with `replacement`.
    fileprivate func replacingAll(_ target: Unicode.Scalar, with replacement: String) -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            if scalar == target { out += replacement } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}
