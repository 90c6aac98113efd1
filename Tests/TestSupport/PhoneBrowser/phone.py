#!/usr/bin/env python3
"""A phone's browser for the tests: Debian's chromium driven by Playwright for Python (no browser
download), emulating a 390x844 touch screen. Commands come one JSON object a line on stdin; each
gets one JSON line on stdout: {"ok": true, ...} or {"ok": false, "error": "..."}. The browser
ends with stdin or the `quit` command. Every wait is bounded by the command's timeout. Arguments
go to chromium as they are."""

import json
import sys

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"


def main():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"] + sys.argv[1:])
        console = []

        def phone():
            context = browser.new_context(
                viewport={"width": 390, "height": 844}, device_scale_factor=3, is_mobile=True, has_touch=True,
                user_agent="Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/156.0 Mobile Safari/537.36")
            page = context.new_page()
            page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
            page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
            return context, page

        context, page = phone()
        print(json.dumps({"ok": True, "ready": browser.version}), flush=True)
        for line in sys.stdin:
            try:
                command = json.loads(line)
            except json.JSONDecodeError as error:
                print(json.dumps({"ok": False, "error": f"not JSON: {error}"}), flush=True)
                continue
            op = command.get("op")
            timeout = float(command.get("timeout", 30)) * 1000
            try:
                reply = {"ok": True}
                if op == "quit":
                    print(json.dumps(reply), flush=True)
                    break
                elif op == "open":
                    page.goto(command["url"], timeout=timeout)
                elif op == "reload":
                    page.reload(timeout=timeout)
                elif op == "wait":
                    locator = page.locator(command["selector"])
                    if "text" in command:
                        locator = locator.filter(has_text=command["text"])
                    locator.first.wait_for(state=command.get("state", "visible"), timeout=timeout)
                elif op == "waitjs":
                    page.wait_for_function(command["js"], timeout=timeout, polling="raf")
                elif op == "swipe":
                    # A finger's drag, as the touch screen sends it (headless chromium does not
                    # scroll for a synthesized scroll gesture; touch events it does).
                    cdp = context.new_cdp_session(page)
                    x, start, end = float(command["x"]), float(command["from"]), float(command["to"])
                    steps = int(command.get("steps", 10))
                    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": start}]})
                    for step in range(1, steps + 1):
                        y = start + (end - start) * step / steps
                        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
                    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
                    cdp.detach()
                elif op == "wheel":
                    page.mouse.move(float(command["x"]), float(command["y"]))
                    page.mouse.wheel(0, float(command["dy"]))
                elif op == "click":
                    page.locator(command["selector"]).first.click(timeout=timeout)
                elif op == "tap":
                    page.locator(command["selector"]).first.tap(timeout=timeout)
                elif op == "type":
                    page.keyboard.type(command["text"], delay=float(command.get("delay", 0)))
                elif op == "press":
                    page.keyboard.press(command["key"])
                elif op == "text":
                    reply["text"] = page.locator(command["selector"]).first.inner_text(timeout=timeout)
                elif op == "attribute":
                    reply["value"] = page.locator(command["selector"]).first.get_attribute(
                        command["name"], timeout=timeout)
                elif op == "screenshot":
                    page.screenshot(path=command["path"])
                elif op == "offline":
                    context.set_offline(bool(command["value"]))
                elif op == "eval":
                    reply["value"] = page.evaluate(command["js"])
                elif op == "fresh":
                    context.close()
                    context, page = phone()
                elif op == "console":
                    reply["lines"] = console[:]
                else:
                    reply = {"ok": False, "error": f"unknown op {op!r}"}
            except Exception as error:  # every failure goes back to the test, which decides
                reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            print(json.dumps(reply), flush=True)
        browser.close()


if __name__ == "__main__":
    main()
