# bench/hold.gp -- the plot of bench/run-hold.sh: claim time and lag p99 a
# second (left axis, log scale), what piles up (right axis), the hold
# shaded.  Variables: tsv, png, t0, t1, title.
set terminal pngcairo size 1000,500
set output png
set title title
set xlabel "seconds"
set ylabel "ms"
set logscale y
set y2label "pile-up"
set y2tics
set ytics nomirror
set key top left
set object 1 rectangle from t0, graph 0 to t1, graph 1 fillcolor rgb "#eeeeee" behind
set datafile separator "\t"
plot tsv using 1:2 skip 1 with lines title "claim mean", \
     tsv using 1:3 skip 1 with lines title "lag p99", \
     tsv using 1:5 skip 1 axes x1y2 with lines title "pile-up"
