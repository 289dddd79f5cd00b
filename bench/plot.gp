# bench/plot.gp: the plot of make bench (bench/run.sh passes changes, trees and out).
#   changes: files-changed plain txbox-run shadow-git commit-phase git-checkpoint txbox-commit
#   trees:   workspace-files txbox-run commit-phase
set terminal pngcairo size 1280,520 font ",10"
set output out
set datafile missing "-"
set grid
set rmargin 5
set key top left
set multiplot layout 1,2 title "txbox: time per command, medians of alternating runs (make bench)"

set title "Change size (log-log; the 0-file change is left out)"
set logscale xy
set xlabel "files written by the command"
set ylabel "ms"
nz(x) = x > 0 ? x : 1/0
plot changes using (nz($1)):3 with linespoints lw 2 pt 7 lc rgb "#1f5fbf" title "txbox run (total)", \
     changes using (nz($1)):4 with linespoints lw 2 pt 5 lc rgb "#c0392b" title "shadow git: command + add + commit", \
     changes using (nz($1)):5 with linespoints lw 2 pt 9 dt 2 lc rgb "#1f5fbf" title "txbox commit phase (trace)", \
     changes using (nz($1)):6 with linespoints lw 2 pt 11 dt 2 lc rgb "#c0392b" title "git add + commit alone", \
     changes using (nz($1)):7 with linespoints lw 1 pt 13 dt 3 lc rgb "#2e8b57" title "txbox commit ID (after --commit=keep)", \
     changes using (nz($1)):2 with linespoints lw 1 pt 1 dt 4 lc rgb "gray40" title "plain command (no checkpoint)"

set title "Workspace size: one-file change committed"
unset logscale
set logscale x
set yrange [0:*]
set key center right
set xlabel "files in the workspace"
plot trees using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f5fbf" title "txbox run (total)", \
     trees using 1:3 with linespoints lw 2 pt 9 dt 2 lc rgb "#1f5fbf" title "txbox commit phase (trace)"
unset multiplot
