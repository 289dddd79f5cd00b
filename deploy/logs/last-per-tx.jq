# Keep the last state of each transaction from txbox's audit-log stream.
#
#   txbox -C /data/workspace log --json-lines | jq -n -c -f deploy/logs/last-per-tx.jq
#
# `txbox log --json-lines` prints a record again each time it changes (pending, then
# committed, later undone); a shipper that stores one row per transaction keeps, per "tx",
# the record with the highest "seq" (the audit log's change number), whatever order the
# lines arrive in.  Across pods, key by the pod's UID and "tx" (the log agent adds the pod's
# metadata to each line).  Output: one line per transaction, oldest change first.
reduce inputs as $r ({}; if (.[$r.tx].seq // -1) < $r.seq then .[$r.tx] = $r else . end)
| [.[]] | sort_by(.seq) | .[]
