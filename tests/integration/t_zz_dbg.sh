. "$(dirname "$0")/lib.sh"
S1='echo a >a.txt && mkdir -p d/e && echo x >d/e/x && echo one >>README'
S2='rm d/e/x && echo y >d/e/y && chmod 700 d && rm docs/b.txt && rm -rf src && mkdir src && echo re >src/re.c &&
    echo a2 >a.txt'
BIG='for i in $(seq 1 1000); do echo "$i" >"g$i"; done; echo big >>README; rm docs/a.txt'
state_dir() { ls -d "$HOME"/.local/state/txbox/*/ | head -1; }
listing() { (cd "$1" && find . -printf '%p %y %m %s\n' | LC_ALL=C sort); }
session() { local id s; new_ws; id=$(tx begin); for s in "$@"; do tx run --tx "$id" -- sh -c "$s" >/dev/null 2>&1; done; echo "$id"; }
id=$(session "$BIG" "$S1" "$S2"); tx commit $id >/dev/null; hfull=$(tree_hash "$WS"); listing "$WS" > $T/full
new_ws; orig=$(tree_hash "$WS")
for i in $(seq 1 60); do
  id=$(session "$BIG" "$S1" "$S2")
  "$TXBOX" -C "$WS" commit "$id" >/dev/null 2>&1 & pid=$!
  d=$((20 + RANDOM % 70)); sleep "0.0$(printf %02d $d)"; kill -9 $pid; wait $pid; rc=$?
  ls -A "$(state_dir)tx/$id" > $T/dir 2>&1
  tx recover >/dev/null
  o=$(tx show --json $id | grep -o '"outcome": "[a-z_]*"'); m=$(tx show --json $id | grep -o '"message": "[^"]*"')
  [ "$o" = '"outcome": "pending"' ] && tx commit $id >/dev/null 2>&1
  h=$(tree_hash "$WS")
  if [ "$h" != "$hfull" ] && [ "$h" != "$orig" ]; then
     echo "# MIXED trial $i d=$d rc=$rc $o $m dir: $(cat $T/dir | tr '\n' ' ')"; listing "$WS" | diff $T/full - | head -20; break
  fi
  [ "$h" = "$orig" ] && echo "# trial $i d=$d: orig $o"
done
done_testing
