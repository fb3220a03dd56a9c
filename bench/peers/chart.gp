# bench/peers/chart.gp -- the chart of bench/compare, drawn with gnuplot.
#
# Usage: gnuplot -e "data='D'; scale='S'; out='PNG'" chart.gp
#
# D holds two blocks (batch 1, then batch 100), each a header line and a
# line a system: its name, then its jobs/s with 1, 2 and 4 workers (as
# many columns as worker counts).  S holds sqlq's scaling: a header, then
# a line a worker count: the workers, then jobs/s for each backlog.  Draws
# three panels into the PNG: the two batch sizes as clustered bars (log
# scale), and the scaling as lines.
set terminal pngcairo size 1500,1350 font "sans,11"
set output out
set multiplot layout 3,1 title "Jobs/s end to end, one machine, one run (bench/compare)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set ylabel "jobs/s (log scale)"
set key top right
set xtics rotate by 0
ncol = system("awk 'NR==1 {print NF-2}' " . data) + 0
heads = system("awk 'NR==1 {for (i = 3; i <= NF; i++) printf \"%s \", $i}' " . data)
set title "Batch 1 (one job a transaction)"
plot for [i=2:ncol+1] data index 0 using i:xtic(1) title sprintf("%s workers", substr(word(heads, i-1), 2, 9))
set title "Batch 100"
plot for [i=2:ncol+1] data index 1 using i:xtic(1) title sprintf("%s workers", substr(word(heads, i-1), 2, 9))
unset logscale y
set style data linespoints
set title "sqlq on PostgreSQL, batch 100, with jobs queued beneath"
set xlabel "workers"
set ylabel "jobs/s"
set yrange [0:*]
set logscale x 2
set xrange [0.8:10]
set xtics (1, 2, 4, 8)
nb = system("awk 'NR==1 {print NF-2}' " . scale) + 0
bheads = system("awk 'NR==1 {for (i = 3; i <= NF; i++) printf \"%s \", $i}' " . scale)
plot for [i=2:nb+1] scale using 1:i with linespoints lw 2 title sprintf("%s queued", substr(word(bheads, i-1), 9, 20))
unset multiplot
