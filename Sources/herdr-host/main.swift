import CLISupport
import Glibc
import HerdrCrypto

// Before anything touches OpenSSL: no exit-time cleanup racing a connection thread.
OpenSSLRuntime.prepare()

// A closed stdout must end writes with EPIPE, not kill the agent.
signal(SIGPIPE, SIG_IGN)

await CommandLineTool.main(HerdrHost.spec)
