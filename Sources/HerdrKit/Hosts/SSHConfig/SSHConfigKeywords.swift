/// The keywords OpenSSH 9.2's client knows (readconf.c `keywords[]`, the Debian build's GSSAPI
/// and keepalive additions included), lowercased. The resolver reads a handful; the rest it
/// skips without a word. A keyword outside this list is one ssh 9.2 would refuse the whole file
/// for (a newer ssh's, or a typo): the resolver skips it too, with a note.
enum SSHConfigKeywords {
    static let known: Set<String> = [
        // Deprecated and unsupported, which ssh accepts with at most a message.
        "protocol", "cipher", "fallbacktorsh", "globalknownhostsfile2", "rhostsauthentication",
        "userknownhostsfile2", "useroaming", "usersh", "useprivilegedport", "afstokenpassing",
        "kerberosauthentication", "kerberostgtpassing", "rsaauthentication", "rhostsrsaauthentication",
        "compressionlevel", "smartcarddevice", "pkcs11provider",
        // GSSAPI, with Debian's key exchange patch.
        "gssapiauthentication", "gssapidelegatecredentials", "gssapikeyexchange", "gssapiclientidentity",
        "gssapiserveridentity", "gssapirenewalforcesrekey", "gssapitrustdns", "gssapikexalgorithms",
        // Debian's keepalive aliases.
        "protocolkeepalives", "setuptimeout",
        "forwardagent", "forwardx11", "forwardx11trusted", "forwardx11timeout", "exitonforwardfailure",
        "xauthlocation", "gatewayports", "passwordauthentication", "kbdinteractiveauthentication",
        "kbdinteractivedevices", "challengeresponseauthentication", "skeyauthentication", "tisauthentication",
        "pubkeyauthentication", "dsaauthentication", "hostbasedauthentication", "identityfile", "identityfile2",
        "identitiesonly", "certificatefile", "addkeystoagent", "identityagent", "hostname", "hostkeyalias",
        "proxycommand", "port", "ciphers", "macs", "remoteforward", "localforward", "permitremoteopen", "user",
        "host", "match", "escapechar", "globalknownhostsfile", "userknownhostsfile", "connectionattempts",
        "batchmode", "checkhostip", "stricthostkeychecking", "compression", "tcpkeepalive", "keepalive",
        "numberofpasswordprompts", "syslogfacility", "loglevel", "logverbose", "dynamicforward",
        "preferredauthentications", "hostkeyalgorithms", "casignaturealgorithms", "bindaddress", "bindinterface",
        "clearallforwardings", "enablesshkeysign", "verifyhostkeydns", "nohostauthenticationforlocalhost",
        "rekeylimit", "connecttimeout", "addressfamily", "serveraliveinterval", "serveralivecountmax", "sendenv",
        "setenv", "controlpath", "controlmaster", "controlpersist", "hashknownhosts", "include", "tunnel",
        "tunneldevice", "localcommand", "permitlocalcommand", "remotecommand", "visualhostkey", "kexalgorithms",
        "ipqos", "requesttty", "sessiontype", "stdinnull", "forkafterauthentication", "proxyusefdpass",
        "canonicaldomains", "canonicalizefallbacklocal", "canonicalizehostname", "canonicalizemaxdots",
        "canonicalizepermittedcnames", "streamlocalbindmask", "streamlocalbindunlink", "revokedhostkeys",
        "fingerprinthash", "updatehostkeys", "hostbasedacceptedalgorithms", "hostbasedkeytypes",
        "pubkeyacceptedalgorithms", "pubkeyacceptedkeytypes", "ignoreunknown", "proxyjump",
        "securitykeyprovider", "knownhostscommand", "requiredrsasize", "enableescapecommandline",
    ]

    /// Keywords that change how ssh connects or what it sets up, which an import does not carry:
    /// their first effective value becomes a note. Each maps to what the note says after
    /// "KEYWORD VALUE (file line N)".
    static let noted: [String: String] = [
        "canonicalizehostname":
            "makes ssh qualify the name with CanonicalDomains and read the config again for the result; herdr-remote connects to the hostname as resolved here",
        "localcommand":
            "sets a local command for ssh to run after connecting (with PermitLocalCommand); herdr-remote runs none",
        "tunnel": "opens a tun device; herdr-remote does not",
        "localforward": "forwards a port; herdr-remote sets up no forwarding",
        "remoteforward": "forwards a port; herdr-remote sets up no forwarding",
        "dynamicforward": "opens a SOCKS proxy; herdr-remote sets up no forwarding",
        "forwardagent": "forwards the agent; herdr-remote does not",
        "hostkeyalias": "names the host key in known_hosts; herdr-remote pins the key under hostname:port",
        "bindaddress": "binds the local end of the connection; herdr-remote does not",
        "bindinterface": "binds the local end of the connection; herdr-remote does not",
        "identityagent": "names the agent ssh uses; it is not imported",
        "certificatefile": "offers a certificate; herdr-remote does not use certificates",
        "remotecommand":
            "is run by ssh instead of a shell; the import does not keep it (herdr-remote runs herdr's attach command)",
    ]

    /// Values that leave a noted keyword with nothing to say.
    static func isInert(keyword: String, value: String) -> Bool {
        let value = value.lowercased()
        switch keyword {
        case "canonicalizehostname", "tunnel", "forwardagent": return value == "no" || value == "false"
        case "localcommand", "remotecommand", "identityagent": return value == "none"
        default: return false
        }
    }
}
