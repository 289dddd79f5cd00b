#!/bin/bash
# txbox report: a self-contained HTML page of the session, rendered in headless Chromium:
# reasons and counts on each entry's first lines, paths grouped by directory, a session's
# commands and net change, a labelled timeline, a size that stays small (issue 31).
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
like "$(tx report)" "3 transactions, 1 committed, 1 rolled back, 1 pending$" "the text report counts outcomes"
# What shows without opening an entry: its summary holds the counts and the reason.
summary_of() { sed -n "s/.*<details class=\"tx\" id=\"tx-$1\"><summary>\(.*\)<\/summary>.*/\1/p" "$T/report.html" | sed 's/<\/summary>.*//'; }
rolled=$(tx log --json | grep -o '"tx": "[0-9a-f]*", "argv": \["sh", "-c", "echo junk' | cut -d'"' -f4)
like "$(summary_of "$rolled")" 'class="why">rolled back tx [0-9a-f]+: the program exited with status 2' \
        "a rollback's reason is on the entry's first lines, not inside it"
like "$(summary_of "$committed")" '<span class="added">\+1</span> <span class="modified">~1</span>' \
        "and its counts"
like "$html" '<h2>Timeline</h2><div class="axis"><span>[0-9-]+ [0-9:]+</span><span>\+[0-9.]+ s</span><span>[0-9:]+ \(\+[0-9.]+ s\)</span>' \
        "the timeline is labelled with its start, middle and end"
like "$html" '<div class="legend"><span><i class="pending"></i>pending</span>' "and has a legend"

# Denied and undone are counted as what they are; a big directory is a few lines; a session
# shows its commands; the page stays small.
tx run -- sh -c 'rm -rf ./*' 2>/dev/null
tx run -- sh -c 'mkdir -p many/deep/er && for i in $(seq 1 300); do echo $i >many/deep/er/f$i; done; echo x >many/top'
tx undo >/dev/null
tx run -- sh -c 'mkdir -p venv/lib/py/site && for i in $(seq 1 300); do echo $i >venv/lib/py/site/m$i.py; done'
S=$(tx begin)
tx run --tx "$S" -- sh -c 'echo s1 >>README'
tx run --tx "$S" -- sh -c 'exit 5' 2>/dev/null
for i in $(seq 1 18); do tx run -- sh -c "seq 1 4000 >big$i.txt; echo $i >>README"; done
ok "the report of 25 transactions" tx report --html "$T/report.html"
html=$(cat "$T/report.html")
like "$(tx report)" "25 transactions, 20 committed, 1 rolled back, 1 denied, 2 pending, 1 undone$" \
        "denied and undone are counted apart"
is "$(grep -c '<span class="badge denied">denied</span> 1</span><span><span class="badge undone">undone</span> 1' \
        "$T/report.html")" 1 "in the page too"
is "$(grep -c '<summary>venv/lib/py/site/ — 304 paths (<span class="added">+304</span>)</summary>' "$T/report.html")" 1 \
        "300 files of one directory (and the 4 directories it is in): one line with its counts"
n=$(grep -o '<li class="added">+ venv/' "$T/report.html" | wc -l)
ok "and no more than a page's worth of their names ($n)" test "$n" -le 60
ok "the rest as a count" grep -qE 'and [0-9]+ more \(txbox show [0-9a-f]+ lists them all\)' "$T/report.html"
ok "a session's commands, on its first line" grep -q 'session of 2 commands (1 kept): sh -c echo s1 &gt;&gt;README' "$T/report.html"
size=$(stat -c %s "$T/report.html")
ok "25 transactions with 4000-line diffs weigh under 500 KB ($size bytes)" test "$size" -lt 500000
ok "cut diffs say where the rest is" grep -qE 'KiB more: txbox diff [0-9a-f]+ shows it whole|diff left out to keep the page small' "$T/report.html"

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
