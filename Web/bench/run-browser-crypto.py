#!/usr/bin/env python3
"""Runs browser-crypto.html in Debian's chromium, headless, and prints its table and JSON:

    python3 Web/bench/run-browser-crypto.py [seconds per measure] [--timeout S] [--chromium PATH]

A copy of Web/js and Web/bench in a temporary directory is served by Python's http.server on
127.0.0.1 (a loopback origin is a secure context, so WebCrypto's X25519 is there), with the
relay's Content-Security-Policy. Playwright for Python drives the browser. Every wait has a
timeout; the server is a thread of this process and the browser is the one Playwright
launched, closed on the way out, whatever happens."""

import argparse
import functools
import http.server
import json
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

WEB = Path(__file__).resolve().parent.parent
# As herdr-relay serves the web client (Sources/RelayServer/Core/WebClientFiles.swift), so a
# script the page would only get to run inline is refused here too.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
       "connect-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")
# About 23 measures of `seconds` each, their warm-ups, and the browser's start.
MEASURES = 23


class Handler(http.server.SimpleHTTPRequestHandler):
    # ES modules need a JavaScript type whatever this Python's mimetypes table says.
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".html": "text/html"}

    def end_headers(self):
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args):  # the table is the output; requests are noise
        pass


def serve(root):
    """An HTTP server on 127.0.0.1 (a free port) in a daemon thread of this process."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run(url, seconds, timeout, chromium):
    """The page's runCryptoBench(seconds) result; raises on a failure or timeout."""
    console = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-dev-shm-usage"],
            headless=True, timeout=30_000)
        try:
            page = browser.new_page()
            page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
            page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
            page.goto(url, timeout=30_000)
            # Predicates as functions: Playwright evaluates a bare expression with eval, which the CSP refuses.
            page.wait_for_function("() => typeof globalThis.runCryptoBench === 'function'", timeout=30_000)
            # evaluate() itself has no timeout: start the run, then wait (bounded) for its end.
            page.evaluate("""seconds => { globalThis.benchOutcome = undefined;
                globalThis.runCryptoBench(seconds).then(
                  result => { globalThis.benchOutcome = { result }; },
                  error => { globalThis.benchOutcome = { error: String(error && error.stack || error) }; }); }""",
                          seconds)
            page.wait_for_function("() => globalThis.benchOutcome !== undefined",
                                   timeout=timeout * 1000, polling=500)
            outcome = page.evaluate("() => globalThis.benchOutcome")
        except Exception:
            for line in console:
                print(line, file=sys.stderr)
            raise
        finally:
            browser.close()
    if "error" in outcome:
        raise RuntimeError(f"runCryptoBench failed: {outcome['error']}")
    return outcome["result"]


def number(value):
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def print_table(result):
    print(result["userAgent"])
    print(f"{result['seconds']} s a measure, {result['elapsedSeconds']:.1f} s in all; "
          f"anchor AEAD {result['aesName']}")
    for row in result["rows"]:
        print(f"{row['name']:<58} {number(row['ours']):>7} {row['unit']:<12}"
              f" anchor {number(row['anchor']):>7}   ratio {row['ratio']:5.2f}   ({row['anchorName']})")
    x = result["x25519"]
    if x["available"]:
        print(f"X25519 (sequential calls/s): deriveBits {number(x['deriveBitsPerSecond'])}, "
              f"x25519.js dh (importKey + deriveBits) {number(x['dhPerSecond'])}, "
              f"generateKeyPair {number(x['generateKeyPairPerSecond'])}; "
              f"a handshake pair does {x['dhsPerHandshakePair']} DHs and "
              f"{x['ephemeralsPerHandshakePair']} key generations")
    else:
        print(f"X25519 unavailable: {x['error']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seconds", nargs="?", type=float, default=1.0, help="seconds per measure (default 1)")
    parser.add_argument("--timeout", type=float, help="seconds for the whole run (default 60 + 3 × measures × seconds)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    options = parser.parse_args()
    if not 0 < options.seconds <= 60:
        parser.error("seconds per measure are in (0, 60]")
    timeout = options.timeout or 60 + 3 * MEASURES * options.seconds

    with tempfile.TemporaryDirectory(prefix="herdr-browser-crypto-") as temporary:
        root = Path(temporary)
        shutil.copytree(WEB / "js", root / "js")
        shutil.copytree(WEB / "bench", root / "bench", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        server = serve(root)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/bench/browser-crypto.html"
            result = run(url, options.seconds, timeout, options.chromium)
        finally:
            server.shutdown()
            server.server_close()
    print_table(result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
