#!/bin/bash
# txbox report: a self-contained HTML page of the session, rendered in headless Chromium.
. "$(dirname "$0")/lib.sh"

new_ws
tx run -- sh -c 'echo "<b>new</b> & more" >new.txt && echo more >>README'
tx run -- sh -c 'echo junk >junk.txt; exit 2' 2>/dev/null
tx run --commit=keep -- sh -c 'echo kept >kept.txt' 2>/dev/null
committed=$(tx log --json | grep -o '"tx": "[0-9a-f]*", "argv": \["sh", "-c", "echo \\"<b>' | cut -d'"' -f4)

ok "report --html writes a page" tx report --html "$T/report.html"
html=$(cat "$T/report.html")
like "$html" '^<!DOCTYPE html>' "it is an HTML document"
ok "it loads nothing from the network" test -z "$(grep -oE '(src|href)="(https?:)?//' "$T/report.html")"
ok "it has no script" test -z "$(grep -o '<script' "$T/report.html")"
is "$(grep -o '<details class="tx"' "$T/report.html" | wc -l)" 3 "one entry per transaction"
is "$(grep -o 'class="bar ' "$T/report.html" | wc -l)" 3 "one timeline bar per transaction"
like "$html" 'class="bar committed"' "a committed bar"
like "$html" 'class="bar rolled_back"' "a rolled-back bar"
like "$html" 'class="bar pending"' "a pending bar"
like "$html" '&lt;b&gt;new&lt;/b&gt; &amp; more' "commands and diffs are escaped"
like "$html" '<span class="a">\+more</span>' "the diff of the committed change is there"
like "$html" 'exited with status 2' "the rollback's reason is there"
like "$(tx report)" "3 transactions, 1 committed, 1 rolled back, 1 other" "the text report counts outcomes"

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chrome" ]; then
        flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
               --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$T/chrome")
        dom=$(timeout 60 "$chrome" "${flags[@]}" --dump-dom "file://$T/report.html" 2>/dev/null)
        like "$dom" '<details class="tx" id="tx-[0-9a-f]+">' "Chromium parses the page: transaction entries"
        like "$dom" '<div class="timeline"' "Chromium parses the page: the timeline"
        timeout 60 "$chrome" "${flags[@]}" --window-size=1200,900 --screenshot="$T/report.png" "file://$T/report.html" >/dev/null 2>&1
        ok "Chromium renders a screenshot" test -s "$T/report.png"
        is "$(head -c 8 "$T/report.png" | od -An -c | tr -d ' ')" '211PNG\r\n032\n' "the screenshot is a PNG"
        ok "the screenshot is not blank (over 10 KB)" test "$(stat -c %s "$T/report.png" 2>/dev/null || echo 0)" -gt 10000
else
        for d in entries timeline screenshot png size; do skip "Chromium: $d" "chromium is not installed (scripts/deps.sh --test installs it as root)"; done
fi

done_testing
