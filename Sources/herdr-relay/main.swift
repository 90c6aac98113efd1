import CLISupport
import Glibc
import HerdrCrypto

// Before anything touches OpenSSL: no exit-time cleanup racing the loop thread.
OpenSSLRuntime.prepare()
// A client resetting mid-write must end that write with EPIPE, not kill the relay.
signal(SIGPIPE, SIG_IGN)

await CommandLineTool.main(HerdrRelay.spec)
