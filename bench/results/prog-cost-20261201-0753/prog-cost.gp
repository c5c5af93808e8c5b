# gnuplot prog-cost.gp (in this directory) redraws prog-cost.png
set terminal pngcairo size 2850,640 font 'sans,9'
set output 'prog-cost.png'
set datafile missing 'nan'
set title "prog-cost: ns per frame of each program under BPF_PROG_TEST_RUN\n5 rounds; bars: median, whiskers: min-max" noenhanced
set style fill solid 0.5 border -1
set grid ytics
set yrange [0:*]
set xrange [-0.6:36.6]
set bmargin 13
set xtics rotate by -40 left noenhanced
set key top right noenhanced
set ylabel "time per frame, ratio to the empty program"
set boxwidth 0.6
plot 1 with lines dt 2 lc 'gray' notitle, 'prog-cost.dat' using ($1+0):3:4:5:(0.6):xtic(2) with boxerrorbars title "× empty"
