import CLISupport
import Glibc
import HerdrCrypto

// Before anything touches OpenSSL: no exit-time cleanup racing another thread.
OpenSSLRuntime.prepare()

// A closed stdout (the phone hung up, a test closed its pipe) must end writes with EPIPE, not kill the
// process before it has removed its one-time line.
signal(SIGPIPE, SIG_IGN)

await CommandLineTool.main(HerdrPair.spec)
