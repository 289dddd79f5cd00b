#!/bin/bash
# Symlinks judged by where they lead (effect-symlink-escape): within the workspace, to
# read-only system files, to harmless devices and to toolchain stores they commit (venvs,
# zoneinfo, tar archives with links); to a secret, to a file or directory the user can
# write outside the workspace, into /proc, they are refused (123) and leave nothing.  Every
# command runs through txbox, inside the jail, against this test's throwaway tree.
. "$(dirname "$0")/lib.sh"

refused() { # refused DESCRIPTION PATTERN COMMAND...
        local d=$1 pat=$2 before out rc
        shift 2
        before=$(tree_hash "$WS")
        out=$(tx run -- "$@" 2>&1)
        rc=$?
        is "$rc" 123 "$d: refused (123)"
        like "$out" "effect-symlink-escape" "$d: the line names effect-symlink-escape"
        like "$(tx show --json "$(last_tx)")" "$pat" "$d: the record says where it leads"
        is "$(tree_hash "$WS")" "$before" "$d: nothing of it committed"
}
commits() { # commits DESCRIPTION COMMAND...
        local d=$1 out rc
        shift
        out=$(tx run -- "$@" 2>&1)
        rc=$?
        is "$rc" 0 "$d: commits"
        [ "$rc" -eq 0 ] || echo "# $out"
}

new_ws
mkdir -p "$HOME/.ssh" "$HOME/projects/other"
echo secret >"$HOME/.ssh/id_ed25519"
echo mine >"$HOME/notes.txt"
: >"$HOME/.bashrc"

# ---- ordinary work commits ----
if command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' 2>/dev/null; then
        commits "python3 -m venv .venv" python3 -m venv .venv
        ok "... its python is a link out of the workspace, to the system's" test -L "$WS/.venv/bin/python3"
        is "$("$WS/.venv/bin/python" -c 'import sys; print(sys.prefix != sys.base_prefix)')" True "... and it runs as a venv"
else
        skip "python3 -m venv .venv" "python3 has no venv/ensurepip here"
fi
commits "a link to /usr/share/zoneinfo/UTC" ln -s /usr/share/zoneinfo/UTC localtime
commits "a link to a system program" ln -s /usr/bin/env env-link
commits "a link to /dev/null" ln -s /dev/null quiet.log
commits "links within the workspace, chained" sh -c 'ln -s README a && ln -s a b && ln -s ../docs src/docs-link'
commits "a dangling link within the workspace" ln -s not-built-yet out
commits "a link into a toolchain store in the home directory" ln -s "$HOME/.pyenv/versions/3.12/bin/python3" py
mkdir -p "$T/arc/pkg/sub" && echo x >"$T/arc/pkg/sub/f" && ln -s sub/f "$T/arc/pkg/f-link" && ln -s ../pkg "$T/arc/pkg/sub/up"
tar -C "$T/arc" -cf "$T/arc.tar" pkg
commits "tar x of an archive holding links" tar -xf "$T/arc.tar"
ok "... its links are there" test -L "$WS/pkg/f-link" -a -L "$WS/pkg/sub/up"

# /etc/passwd holds no secret; as a user it cannot be written, as root it can.
out=$(tx run -- ln -s /etc/passwd passwd-link 2>&1)
rc=$?
if [ "$(id -u)" -eq 0 ]; then
        is "$rc" 123 "as root, a link to /etc/passwd is refused (root can write it)"
        like "$out" "effect-symlink-escape.*root can write" "... saying so"
else
        is "$rc" 0 "as a user, a link to /etc/passwd commits (read-only to this user)"
fi
ok "... and no message speaks of privilege escalation" sh -c "! printf '%s' \"\$1\" | grep -q privilege" _ "$out"

# ---- links that lead where the user's own tools would read or write outside ----
refused "a link to the home's .bashrc" "you can write|root can write" ln -s "$HOME/.bashrc" rc
refused "a link to a file in the home directory" "notes.txt" ln -s "$HOME/notes.txt" notes
# (ln of a secret is refused before it runs, secret-access: links from an archive are not)
mkdir -p "$T/sec" && ln -s "$HOME/.ssh/id_ed25519" "$T/sec/key" && ln -s "$HOME/.aws/credentials" "$T/sec/aws"
tar -C "$T/sec" -cf "$T/sec1.tar" key && tar -C "$T/sec" -cf "$T/sec2.tar" aws
refused "a link to a secret, from an archive" "a secret" tar -xf "$T/sec1.tar"
refused "a link to a secret that does not exist yet" "a secret" tar -xf "$T/sec2.tar"
refused "a relative link that climbs out to the home directory" "notes.txt" ln -s ../home/notes.txt rel
refused "a dangling link where the user can write" "you can write|root can write" ln -s "$HOME/new-file" dangling
refused "a link to a directory that holds writable files" "directory" ln -s "$HOME/projects" proj
refused "a link to /" "directory" ln -s / rootdir
refused "a chain: a link to a link that leaves" "notes.txt" sh -c "ln -s '$HOME' h && ln -s h/notes.txt n"
refused "a link into /proc" "/proc" ln -s /proc/self/root/etc/hostname host
ln -s "$HOME" "$WS/hh" # the user's own link
refused "a link through a directory link the user made" "notes.txt" ln -s hh/notes.txt via

done_testing
