import CSystem
import Glibc
import LinkEmulator

// herdr-link: the userspace link emulator of the tests and benchmarks (see --help).

func fail(_ message: String, status: Int32) -> Never {
    let text = "herdr-link: \(message)\n"
    _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    exit(status)
}

let arguments: LinkToolArguments
do {
    arguments = try LinkToolArguments(parsing: Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error.description)", status: 64)
}
if arguments.help {
    print(LinkToolArguments.usage)
    exit(0)
}

// Never outlive the parent: SIGTERM when it dies (handled as any SIGTERM), and a check for a
// parent that died before the prctl.
let parent = getppid()
guard csystem_set_parent_death_signal(SIGTERM) == 0 else {
    fail("prctl(PR_SET_PDEATHSIG): \(String(cString: strerror(errno)))", status: 71)
}
guard getppid() == parent else { exit(0) }
// Before any thread exists, so every thread inherits the blocked signals.
let signals = csystem_termination_signalfd()
guard signals >= 0 else { fail("signalfd: \(String(cString: strerror(errno)))", status: 71) }
signal(SIGPIPE, SIG_IGN)

var devices: [TunDevice] = []
for link in arguments.links {
    do {
        devices.append(try TunDevice.open(interface: link.interface, namespace: link.namespace))
    } catch {
        fail("link \(link.name): \(error.description)", status: 71)
    }
}
let seed = arguments.seed ?? UInt64.random(in: 0...UInt64.max)
let router: LinkRouter<SplitMix64>
do {
    router = try LinkRouter(
        links: arguments.links.map { LinkDescription(name: $0.name, prefixes: $0.prefixes) },
        random: SplitMix64(seed: seed))
} catch {
    fail(error.description, status: 64)
}
do {
    var loop = try LinkEventLoop(router: router, devices: devices, signals: signals)
    let ready = "ok ready seed=\(seed)\n"
    guard ready.withCString({ write(STDOUT_FILENO, $0, strlen($0)) }) == ready.utf8.count else {
        fail("writing to the control channel: \(String(cString: strerror(errno)))", status: 70)
    }
    try loop.run()
} catch {
    fail(error.description, status: 70)
}
exit(0)
